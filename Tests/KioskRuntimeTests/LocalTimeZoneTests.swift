import Foundation
import Glibc
import KioskCore
import KioskRender
import KioskRuntime
import KioskTestSupport
import XCTest

/// A zone-change source for a stage: the test says when the zone changed; the watch can be made to fail as inotify
/// fails (EMFILE at the per-user instance limit). Its `reload` makes glibc load `zone` the way tzset loads a new
/// /etc/localtime, through TZ in this test process (the harness sets TZ=UTC for every stage; tearDown sets it
/// back), so the clocks' own localtime_r shows the new zone. Main thread.
private final class FakeLocalZone {
    /// The POSIX TZ string `reload` loads, e.g. "JST-9".
    var zone = "JST-9"
    /// The errno the watch fails with; nil: it is set up.
    var watchFailure: Int32?
    private(set) var watchAttempts = 0
    private(set) var reloads = 0
    private var onChange: (() -> Void)?
    private final class Token {}

    var source: LocalTimeZoneSource {
        LocalTimeZoneSource(watch: { [unowned self] _, onChange in
            watchAttempts += 1
            if let code = watchFailure { throw SystemError("time zone file /etc/localtime: inotify_init1", errno: code) }
            self.onChange = onChange
            return Token()
        }, reload: { [unowned self] in
            reloads += 1
            setenv("TZ", zone, 1)
            tzset()
        })
    }

    var isWatched: Bool { onChange != nil }

    /// The zone file changed, as the watch reports it.
    func change() { onChange?() }
}

/// Clocks in the local zone when the system's time zone changes (/etc/localtime replaced): the stage makes glibc
/// load it (tzset) and re-renders the clocks at once, without a restart; a watch that cannot be set up leaves the
/// clocks ticking. `LocalTimeZoneSource.file` on a real folder: renaming a link over the file, and deleting it, are
/// changes.
final class LocalTimeZoneTests: XCTestCase {
    private var directory = ""

    override func tearDownWithError() throws {
        setenv("TZ", "UTC", 1)
        tzset()
        if !directory.isEmpty { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// A local clock and a UTC one. The harness's time is 2023-11-14 22:13:20 UTC.
    private func harness(_ zone: FakeLocalZone) throws -> StageHarness {
        let h = try StageHarness(yaml: """
            size: 640x360
            pages:
              - name: main
                widgets:
                  - {id: local, type: clock, format: "%H:%M %Z", x: 20, y: 20, width: 300, height: 80}
                  - {id: utc, type: clock, format: "%H:%M %Z", timezone: UTC, x: 20, y: 120, width: 300, height: 80}
            """, size: Size(width: 640, height: 360), localZone: zone.source)
        h.settle()
        return h
    }

    private func shown(_ h: StageHarness, _ id: String) throws -> String? {
        h.string(try h.stage.widget(id: id)["shown_text"])
    }

    func testAZoneChangeReRendersLocalClocksAtOnce() throws {
        let zone = FakeLocalZone()
        let h = try harness(zone)
        XCTAssertTrue(zone.isWatched, "a scene with a clock watches the local zone")
        XCTAssertEqual(try shown(h, "local"), "22:13 UTC")
        let utc = try shown(h, "utc")
        let before = try h.screen()
        let now = h.loop.now

        zone.change()

        XCTAssertEqual(zone.reloads, 1, "the zone is loaded again (tzset)")
        XCTAssertEqual(h.loop.now, now, "no time has passed")
        XCTAssertEqual(try shown(h, "local"), "07:13 JST", "the local clock shows the new zone at once, not at its next tick")
        XCTAssertEqual(try shown(h, "utc"), utc, "a clock with its own zone is unchanged")
        // Its new text reaches the screen in the next frames, well before the next tick a second away.
        h.settle()
        XCTAssertLessThan(h.loop.now - now, .milliseconds(500))
        XCTAssertNotEqual(try h.screen(), before, "the new zone is on screen")
    }

    func testTheClocksKeepTheNewZoneAsTheyTick() throws {
        let zone = FakeLocalZone()
        zone.zone = "NPT-5:45"
        let h = try harness(zone)
        zone.change()
        XCTAssertEqual(try shown(h, "local"), "03:58 NPT")
        h.wallClock.seconds += 60
        h.run(for: .seconds(1))
        XCTAssertEqual(try shown(h, "local"), "03:59 NPT")
        XCTAssertEqual(try shown(h, "utc"), "22:14 GMT", "gmtime_r's %Z")
    }

    /// inotify cannot be set up (EMFILE): the stage shows its scene, the clocks tick, the watch is tried once per
    /// stage (so its warning is logged once), not again at each scene load.
    func testAWatchThatCannotBeSetUpLeavesTheClocksTicking() throws {
        let zone = FakeLocalZone()
        zone.watchFailure = EMFILE
        let h = try harness(zone)
        XCTAssertEqual(zone.watchAttempts, 1)
        XCTAssertFalse(zone.isWatched)
        XCTAssertEqual(try shown(h, "local"), "22:13 UTC")
        h.wallClock.seconds += 60
        h.run(for: .seconds(1))
        XCTAssertEqual(try shown(h, "local"), "22:14 UTC", "the clocks keep ticking")
        try h.loadScene(path: h.scenePath)
        h.settle()
        XCTAssertEqual(zone.watchAttempts, 1, "tried once per stage, and logged once")
        h.wallClock.seconds += 60
        h.run(for: .seconds(1))
        XCTAssertEqual(try shown(h, "local"), "22:15 UTC", "the reloaded scene's clocks tick")
    }

    /// A scene without a clock watches nothing.
    func testASceneWithoutAClockDoesNotWatchTheZone() throws {
        let zone = FakeLocalZone()
        let h = try StageHarness(yaml: """
            size: 320x200
            pages:
              - name: main
                widgets:
                  - {id: t, type: text, text: hello, x: 0, y: 0, width: 100, height: 40}
            """, size: Size(width: 320, height: 200), localZone: zone.source)
        h.settle()
        XCTAssertEqual(zone.watchAttempts, 0)
    }

    // MARK: The zone file on a real folder

    private func makeDirectory() throws -> String {
        var template = Array((NSTemporaryDirectory() + "/kiosk-zone-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", errno: errno) }
        directory = String(cString: made)
        return directory
    }

    /// What timedatectl and `ln -sf` + `mv -T` do: a new link renamed over the old one. Then the file vanishes
    /// (glibc then falls back to UTC, as a restarted kioskd would), and comes back: each is one change.
    func testReplacingOrDeletingTheZoneFileIsAChange() throws {
        let folder = try makeDirectory()
        let path = folder + "/localtime"
        XCTAssertEqual(symlink("/usr/share/zoneinfo/Etc/UTC", path), 0)
        let loop = try MainLoop.epoll()
        var changes = 0
        let watch = try XCTUnwrap(LocalTimeZoneSource.file(path).watch(loop) { changes += 1 })

        XCTAssertEqual(symlink("/usr/share/zoneinfo/Asia/Tokyo", path + ".new"), 0)
        XCTAssertEqual(rename(path + ".new", path), 0)
        try Poll.until("a change: a link renamed over the file", turning: loop) { changes == 1 }

        XCTAssertEqual(unlink(path), 0)
        try Poll.until("a change: the file deleted", turning: loop) { changes == 2 }

        XCTAssertEqual(symlink("/usr/share/zoneinfo/Europe/Berlin", path), 0)
        try Poll.until("a change: the file back", turning: loop) { changes == 3 }

        // Other files in the folder are not changes: the loop runs 400 ms (no event announces that nothing came).
        XCTAssertEqual(symlink("/usr/share/zoneinfo/Etc/UTC", folder + "/other"), 0)
        let quietEnd = ContinuousClock.now + .milliseconds(400)
        while ContinuousClock.now < quietEnd { loop.runOnce(timeout: .milliseconds(20)) }
        XCTAssertEqual(changes, 3, "a change of another file")
        withExtendedLifetime(watch) {}
    }

    /// The watch's folder does not exist: setting it up throws, naming the file and the errno.
    func testAMissingFolderThrowsNamingTheZoneFile() throws {
        let loop = try MainLoop.epoll()
        let path = try makeDirectory() + "/missing/localtime"
        XCTAssertThrowsError(try LocalTimeZoneSource.file(path).watch(loop) {}) { error in
            guard let error = error as? SystemError else { return XCTFail("not a SystemError: \(error)") }
            XCTAssertEqual(error.errno, ENOENT)
            XCTAssertTrue(error.description.hasPrefix("time zone file \(path)"), error.description)
        }
    }

    /// With TZ set, glibc never reads /etc/localtime: the system source watches nothing.
    func testTheSystemSourceWatchesNothingWhileTZIsSet() throws {
        setenv("TZ", "UTC", 1)
        let loop = try MainLoop.epoll()
        XCTAssertNil(try LocalTimeZoneSource.system.watch(loop) {})
    }
}
