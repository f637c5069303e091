import Foundation
import KioskTestSupport
import XCTest

/// `kioskd` as a user runs it, on the headless backend and with bad arguments: exit codes, one-line errors,
/// stats files and screenshots.
final class KioskdHeadlessCLITests: XCTestCase {
    func testHeadlessRunFlipsFramesWritesStatsAndScreenshot() throws {
        let dir = try KioskdProcess.scratchDirectory("headless-run")
        let stats = dir.appendingPathComponent("stats.json"), png = dir.appendingPathComponent("shot.png")
        let r = try KioskdProcess.run(["run", "--backend", "headless", "--mode", "640x480@60", "--frames", "30",
                                       "--stats-out", stats.path, "--screenshot", png.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["frames_flipped"] as? Int, 30)
        XCTAssertEqual(s["commit_api"] as? String, "headless")
        XCTAssertEqual(s["flip_pacing"] as? String, "vblank")
        XCTAssertEqual(s["mode"] as? String, "640x480@60")
        XCTAssertEqual(s["connector"] as? String, "Headless-1")
        XCTAssertEqual(s["buffers"] as? Int, 2)
        XCTAssertNotNil(s["missed_vblanks"] as? Int)
        let interval = try XCTUnwrap(s["flip_interval_ms"] as? [String: Any])
        for key in ["p50", "p99", "max"] { XCTAssertNotNil(interval[key] as? Double, key) }
        let pngData = try Data(contentsOf: png)
        XCTAssertEqual(Array(pngData.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "a PNG file")
    }

    func testSIGTERMStopsAtAFrameBoundaryAndExitsZero() throws {
        let dir = try KioskdProcess.scratchDirectory("headless-sigterm")
        let stats = dir.appendingPathComponent("stats.json")
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--stats-out", stats.path])
        // Wait until it has flipped more than ten frames, then ask it to stop.
        try ControlEventStream(daemon, events: ["flip"]).waitFor(11, events: "flip", timeout: 20)
        let r = daemon.stop()
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("SIGTERM: stopping at the next frame boundary"), r.stderr)
        let s = try KioskdProcess.readStats(stats)
        XCTAssertGreaterThan(s["frames_flipped"] as? Int ?? 0, 10)
    }

    func testBadArgumentsGiveOneLineNamingTheProblem() throws {
        let missing = try KioskdProcess.run(["run", "--device", "/dev/dri/card9"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.errorLines.count, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("/dev/dri/card9") && missing.stderr.contains("ENOENT") && missing.stderr.contains("available:"),
                      missing.stderr)

        let buffers = try KioskdProcess.run(["run", "--backend", "headless", "--buffers", "4"])
        XCTAssertNotEqual(buffers.status, 0)
        XCTAssertTrue(buffers.stderr.contains("--buffers 4: must be 2 or 3"), buffers.stderr)

        let mode = try KioskdProcess.run(["run", "--mode", "big"])
        XCTAssertNotEqual(mode.status, 0)
        XCTAssertTrue(mode.stderr.contains("mode 'big': no 'x' between width and height"), mode.stderr)

        let commit = try KioskdProcess.run(["run", "--commit", "sometimes"])
        XCTAssertNotEqual(commit.status, 0)
        XCTAssertTrue(commit.stderr.contains("atomic") && commit.stderr.contains("legacy"), commit.stderr)
    }

    func testAFramebufferThatCannotBeDrivenIsOneLineNamingIt() throws {
        let missing = try KioskdProcess.run(["run", "--backend", "fbdev", "--fbdev", "/dev/fb9"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.errorLines.count, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.contains("framebuffer /dev/fb9: open failed: ENOENT"), missing.stderr)

        // A file that is not a framebuffer device answers the mode ioctls with ENOTTY.
        let notDevice = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-not-fb-\(getpid())").path
        XCTAssertTrue(FileManager.default.createFile(atPath: notDevice, contents: Data(count: 64)))
        defer { try? FileManager.default.removeItem(atPath: notDevice) }
        let plain = try KioskdProcess.run(["run", "--backend", "fbdev", "--fbdev", notDevice])
        XCTAssertEqual(plain.status, 1)
        XCTAssertEqual(plain.errorLines.count, 1, plain.stderr)
        XCTAssertTrue(plain.stderr.contains("framebuffer \(notDevice): reading its mode (FBIOGET_FSCREENINFO/VSCREENINFO) failed: ENOTTY"), plain.stderr)

        let capture = try KioskdProcess.run(["run", "--backend", "fbdev", "--capture", "/tmp/x.png", "--frames", "1"])
        XCTAssertNotEqual(capture.status, 0)
        XCTAssertTrue(capture.stderr.contains("--capture needs --backend drm"), capture.stderr)
        for (args, needle) in [(["--backend", "headless"], "--capture-pages needs --backend drm"),
                               (["--commit", "legacy"], "--capture-pages needs atomic commits")] {
            let pages = try KioskdProcess.run(["run", "--capture-pages", "/tmp/kioskd-pages"] + args + ["--frames", "1"])
            XCTAssertNotEqual(pages.status, 0)
            XCTAssertTrue(pages.stderr.contains(needle), pages.stderr)
        }
    }

    func testDevicesWithoutCardsSaysSo() throws {
        let r = try KioskdProcess.run(["devices", "--directory", "/nonexistent-dri"])
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.stdout.contains("no DRM devices"), r.stdout)
    }
}

/// Board files: every shipped one loads; a bad one fails with one line naming file, line, column and key.
final class BoardFileTests: XCTestCase {
    private var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    func testEveryShippedBoardFileLoads() throws {
        let dir = repository.appendingPathComponent("board-configs")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".yaml") }.sorted()
        XCTAssertGreaterThanOrEqual(files.count, 4, "\(files)")
        for file in files {
            let r = try KioskdProcess.run(["run", "--backend", "headless", "--board", dir.appendingPathComponent(file).path,
                                           "--frames", "2"])
            XCTAssertEqual(r.status, 0, "\(file): \(r.stderr)")
        }
    }

    func testBoardModeIsUsedAndOptionsOverrideIt() throws {
        let dir = try KioskdProcess.scratchDirectory("board-override")
        let stats = dir.appendingPathComponent("stats.json")
        let board = repository.appendingPathComponent("board-configs/raspberry-pi-7inch-dsi.yaml").path
        var r = try KioskdProcess.run(["run", "--backend", "headless", "--board", board, "--frames", "2", "--stats-out", stats.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try KioskdProcess.readStats(stats)["mode"] as? String, "800x480@60")
        r = try KioskdProcess.run(["run", "--backend", "headless", "--board", board, "--mode", "640x480", "--buffers", "3",
                                   "--frames", "2", "--stats-out", stats.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["mode"] as? String, "640x480@60")
        XCTAssertEqual(s["buffers"] as? Int, 3)
    }

    func testRotationComesFromTheBoardFileAndTheOptionOverridesIt() throws {
        let dir = try KioskdProcess.scratchDirectory("board-rotation")
        let stats = dir.appendingPathComponent("stats.json")
        let shot = dir.appendingPathComponent("shot.png")
        let board = repository.appendingPathComponent("board-configs/portrait-hdmi.yaml").path
        var r = try KioskdProcess.run(["run", "--backend", "headless", "--board", board, "--frames", "2",
                                       "--stats-out", stats.path, "--screenshot", shot.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        var s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["rotation"] as? Int, 90)
        XCTAssertEqual(s["power"] as? String, "on")
        XCTAssertEqual(s["mode"] as? String, "1920x1080@60", "the mode stays the panel's; only the scene turns")
        let png = try Data(contentsOf: shot)
        // IHDR: width and height, big-endian, at bytes 16 and 20: the screenshot is of the panel.
        XCTAssertEqual(png[16..<20].reduce(0) { $0 << 8 | Int($1) }, 1920)
        XCTAssertEqual(png[20..<24].reduce(0) { $0 << 8 | Int($1) }, 1080)

        r = try KioskdProcess.run(["run", "--backend", "headless", "--board", board, "--rotation", "180", "--frames", "2",
                                   "--stats-out", stats.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["rotation"] as? Int, 180)
    }

    func testInvalidRotationNamesTheOptionAndTheAllowedValues() throws {
        let r = try KioskdProcess.run(["run", "--backend", "headless", "--rotation", "45", "--frames", "1"])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("--rotation"), r.stderr)
        XCTAssertTrue(r.stderr.contains("0, 90, 180, 270"), r.stderr)
    }

    /// `clock` and `reference` are no built-in pictures: like any other name they are scene files, and a missing
    /// one is an error naming its path.
    func testAMissingSceneFileIsAnErrorNamingItsPath() throws {
        for name in ["clock", "reference"] {
            let r = try KioskdProcess.run(["run", "--backend", "headless", "--scene", name, "--frames", "1"])
            XCTAssertEqual(r.status, 1, r.stderr)
            XCTAssertTrue(r.stderr.contains("\(name):1:1: scene file not found"), r.stderr)
        }
    }

    /// Board files are read with the scene files' machinery: `FILE:LINE:COL: KEY: message`, with a suggestion
    /// for a misspelt key or value.
    func testBadBoardFilesGiveOneLineWithLocation() throws {
        let dir = try KioskdProcess.scratchDirectory("board-bad")
        let cases: [(String, String)] = [
            ("board: x\nscale: 2\n", ":2:1: scale: unknown key 'scale'; known keys: board, device"),
            ("board: x\nrotaton: 90\n", ":2:1: rotaton: unknown key 'rotaton'; did you mean 'rotation'?"),
            ("board: x\nrotation: 45\n", ":2:11: rotation: '45' is not one of 0, 90, 180, 270"),
            ("mode: huge\n", ":1:7: mode: mode 'huge': no 'x' between width and height"),
            ("buffers: 5\n", ":1:10: buffers: 5 is out of range 2...3"),
            ("commit: atomc\n", ":1:9: commit: 'atomc' is not one of atomic, legacy, auto; did you mean 'atomic'?"),
            ("- a\n- b\n", ":1:1: expected a mapping"),
            ("mode: [1\n", ":2:1: YAML syntax"),
        ]
        for (i, (text, needle)) in cases.enumerated() {
            let file = dir.appendingPathComponent("bad\(i).yaml")
            try text.write(to: file, atomically: true, encoding: .utf8)
            let r = try KioskdProcess.run(["run", "--backend", "headless", "--board", file.path, "--frames", "1"])
            XCTAssertEqual(r.status, 1, "\(text): \(r.stderr)")
            XCTAssertEqual(r.errorLines.count, 1, "\(text): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(needle), "\(text): expected \(needle) in \(r.stderr)")
        }
        let missing = try KioskdProcess.run(["run", "--board", "/nonexistent/board.yaml"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("board file /nonexistent/board.yaml: cannot read it"), missing.stderr)
        // A FIFO or /dev/zero given by mistake is refused unread, not waited on or read without end.
        let special = try SpecialFiles("board")
        for (path, kind) in [(special.fifo, "a FIFO"), ("/dev/zero", "a character device")] {
            let refused = try KioskdProcess.run(["run", "--backend", "headless", "--board", path, "--frames", "1"], timeout: 20)
            XCTAssertEqual(refused.status, 1, refused.stderr)
            XCTAssertTrue(refused.stderr.contains("board file \(path): cannot read it (is \(kind), not a regular file)"), refused.stderr)
        }
    }
}

/// The layer engine through the command line: the dashboard's telemetry in --stats-out.
final class EngineCLITests: XCTestCase {
    func testDashboardStatsCarryTheEngineCounters() throws {
        let dir = try KioskdProcess.scratchDirectory("dashboard-stats")
        let stats = dir.appendingPathComponent("stats.json")
        let r = try KioskdProcess.run(["run", "--backend", "headless", "--scene", "default", "--fps-overlay", "--frames", "90",
                                       "--stats-out", stats.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        let s = try KioskdProcess.readStats(stats)
        XCTAssertEqual(s["frames_flipped"] as? Int, 90)
        for key in ["renders_started", "renders_completed", "stale_renders_dropped", "frames_composed", "compositions_replaced",
                    "loop_wakeups"] {
            XCTAssertNotNil(s[key] as? Int, key)
        }
        XCTAssertGreaterThanOrEqual(s["renders_completed"] as? Int ?? 0, 20, "every widget rendered")
        let bytes = try XCTUnwrap(s["bytes_copied_per_frame"] as? [String: Any])
        XCTAssertNotNil(bytes["p50"] as? Int)
        XCTAssertNotNil(bytes["max"] as? Int)
        let renderMs = try XCTUnwrap(s["render_ms"] as? [String: Any])
        for kind in ["text", "image", "clock", "rect", "ticker", "fps"] {
            let k = try XCTUnwrap(renderMs[kind] as? [String: Any], "render_ms.\(kind)")
            XCTAssertNotNil(k["p50"] as? Double)
            XCTAssertNotNil(k["p99"] as? Double)
        }
        XCTAssertGreaterThan(s["fps"] as? Double ?? 0, 0)
        let firstFrame = try XCTUnwrap(s["first_frame_ms"] as? Double, "first_frame_ms is measured")
        XCTAssertGreaterThan(firstFrame, 0)
        let memory = try XCTUnwrap(s["memory"] as? [String: Any], "memory is reported")
        let peak = try XCTUnwrap(memory["peak_rss_kib"] as? Int)
        XCTAssertGreaterThanOrEqual(peak, try XCTUnwrap(memory["rss_kib"] as? Int))
        XCTAssertEqual(memory["rss_kib"] as? Int, (memory["rss_anon_kib"] as? Int ?? 0) + (memory["rss_file_kib"] as? Int ?? 0)
                       + (memory["rss_shmem_kib"] as? Int ?? 0), "resident = private + file-backed + shared memory")
    }
}
