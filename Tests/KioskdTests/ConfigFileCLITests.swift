import Foundation
import KioskScene
import KioskTestSupport
import XCTest

private var repository: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

/// `kioskd check-config` and `kioskd run --config`: the shipped example is valid and fully documented, and the
/// command line overrides the file.
final class ConfigFileCLITests: XCTestCase {
    private var example: URL { repository.appendingPathComponent("config/kioskd.yaml") }

    func testShippedExampleIsValid() throws {
        let result = try KioskdProcess.run(["check-config", example.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "ok\n")
        XCTAssertEqual(result.stderr, "", "no warnings")
    }

    /// The example names every key (set, or commented out with its default), and kioskd.yaml(5) documents every
    /// key the example names.
    func testEveryKeyOfTheExampleIsDocumented() throws {
        let text = try String(contentsOf: example, encoding: .utf8)
        var keys: [String] = []
        var section: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            // `outputs:` is a list: its entries' keys come commented out as `#- key:` and `#  key:`.
            if section == "outputs", let entry = line.wholeMatch(of: /#(- |  )([a-z_]+):( .*)?/) {
                keys.append("outputs.\(entry.2)")
                continue
            }
            let match = line.wholeMatch(of: /(\s*)#?([a-z_]+):( .*)?/)
            guard let match else { continue }
            let indented = !match.1.isEmpty
            let key = String(match.2)
            if !indented && ["control", "input", "idle", "mqtt", "memory", "health", "video", "web", "cache", "vnc", "wall", "sync", "outputs"].contains(key) { section = key; continue }
            if !indented { section = nil }
            keys.append(section.map { "\($0).\(key)" } ?? key)
        }
        XCTAssertEqual(Set(keys), Set(KioskConfig.allKeys), "the example shows every key, and nothing else")
        let manual = try String(contentsOf: repository.appendingPathComponent("docs/man/kioskd.yaml.5"), encoding: .utf8)
        let documented = Set(manual.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix(".B ") else { return nil }
            return line.dropFirst(3).replacingOccurrences(of: "\\", with: "")
        })
        for key in keys {
            XCTAssertTrue(documented.contains(String(key.split(separator: ".").last!)), "kioskd.yaml(5) documents \(key)")
        }
    }

    func testCheckConfigPrintsLocatedErrors() throws {
        let dir = try KioskdProcess.scratchDirectory("check-config")
        let file = dir.appendingPathComponent("kioskd.yaml")
        try "scene: a.yaml\nrenderstrategy: priority\nboard: missing-board.yaml\n".write(to: file, atomically: true, encoding: .utf8)
        let result = try KioskdProcess.run(["check-config", file.path])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stdout, "")
        XCTAssertEqual(result.errorLines, ["\(file.path):2:1: renderstrategy: unknown key 'renderstrategy'; did you mean 'render_strategy'?"])

        // The board file the config names is checked as well.
        try "board: missing-board.yaml\n".write(to: file, atomically: true, encoding: .utf8)
        let board = try KioskdProcess.run(["check-config", file.path])
        XCTAssertEqual(board.status, 1)
        XCTAssertTrue(board.stderr.contains("\(dir.path)/missing-board.yaml") && board.stderr.contains("ENOENT"), board.stderr)
    }

    /// Keys fill the options; an option given on the command line wins.
    func testRunTakesTheConfigAndTheCommandLineOverridesIt() throws {
        let dir = try KioskdProcess.scratchDirectory("run-config")
        let config = dir.appendingPathComponent("kioskd.yaml")
        try """
            scene: default
            backend: headless
            mode: 320x240@60
            frames: 3
            stats_out: stats.json
            control: {socket: none}
            """.write(to: config, atomically: true, encoding: .utf8)
        let fromFile = try KioskdProcess.run(["run", "--config", config.path])
        XCTAssertEqual(fromFile.status, 0, fromFile.stderr)
        var stats = try KioskdProcess.readStats(dir.appendingPathComponent("stats.json"))
        XCTAssertEqual(stats["mode"] as? String, "320x240@60")
        XCTAssertEqual(stats["frames_flipped"] as? Int, 3)

        let overridden = try KioskdProcess.run(["run", "--config", config.path, "--mode", "640x480@60", "--frames", "2"])
        XCTAssertEqual(overridden.status, 0, overridden.stderr)
        stats = try KioskdProcess.readStats(dir.appendingPathComponent("stats.json"))
        XCTAssertEqual(stats["mode"] as? String, "640x480@60")
        XCTAssertEqual(stats["frames_flipped"] as? Int, 2)

        try "backend: headless\nbufers: 2\n".write(to: config, atomically: true, encoding: .utf8)
        let invalid = try KioskdProcess.run(["run", "--config", config.path])
        XCTAssertNotEqual(invalid.status, 0)
        XCTAssertTrue(invalid.stderr.contains("\(config.path):2:1: bufers: unknown key 'bufers'; did you mean 'buffers'?"), invalid.stderr)
    }

    /// The `input:` and `idle:` sections reach the run: the devices go to libinput's path backend (a missing one is
    /// named, and the kiosk runs on without input), and an idle setting the command line contradicts is refused.
    func testRunTakesTheInputAndIdleSections() throws {
        let dir = try KioskdProcess.scratchDirectory("run-input-config")
        let config = dir.appendingPathComponent("kioskd.yaml")
        try """
            scene: default
            backend: headless
            mode: 320x240@60
            frames: 2
            control: {socket: none}
            input: {devices: [/nonexistent/event9]}
            idle: {dim_after: 30}
            """.write(to: config, atomically: true, encoding: .utf8)
        let run = try KioskdProcess.run(["run", "--config", config.path])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("input device /nonexistent/event9: ") && run.stderr.contains("ENOENT")
                      && run.stderr.contains("running without input"), run.stderr)

        let contradicted = try KioskdProcess.run(["run", "--config", config.path, "--idle-blank-after", "10"])
        XCTAssertNotEqual(contradicted.status, 0)
        XCTAssertTrue(contradicted.stderr.contains("--idle-blank-after 10.0 must come after --idle-dim-after 30.0"), contradicted.stderr)
    }
}
