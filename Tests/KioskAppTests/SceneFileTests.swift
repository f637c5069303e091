import Foundation
@testable import KioskApp
import KioskControl
import KioskRuntime
import KioskTestSupport
import XCTest

/// The scene file a kiosk shows, in process: the bundled default scene when none is given, and the file kept live:
/// an edit reloads it (inotify), SIGHUP reads it again, and a bad version is refused with its location while the
/// scene on screen stays. (`KioskdTests.SceneRunTests` keeps `kioskd run --scene`'s screenshot and exit status.)
final class SceneFileTests: XCTestCase {
    /// A scene whose one text widget, `t`, shows `text`.
    private static func scene(_ text: String) -> String {
        "size: display\npages:\n  - name: p\n    widgets:\n      - {id: t, type: text, text: \(text)}\n"
    }

    private func shownText(_ harness: KioskHarness) throws -> String? {
        try harness.call("widget.get", ["id": "t"]).result?["text"]?.stringValue
    }

    /// What the notify socket heard after the last RELOADING=1.
    private func sinceReloading(_ notify: NotifySocket) -> [String] {
        let messages = notify.drain()
        guard let start = messages.lastIndex(where: { $0.contains("RELOADING=1") }) else { return [] }
        return Array(messages[start...])
    }

    /// Without a scene (and no /etc/kioskd/scene.yaml), a kiosk shows the bundled dashboard at the default mode.
    func testTheDefaultSceneIsTheBundledDashboard() throws {
        XCTAssertFalse(FileManager.default.fileExists(atPath: Kiosk.systemScene), "a system scene here would be shown instead")
        let harness = try KioskHarness(name) { run, _ in
            run.configuration.settings.scene = nil
            run.configuration.settings.mode = nil
        }
        XCTAssertEqual(harness.first.stage.source, try XCTUnwrap(BundledScenes.defaultScene))
        try harness.waitUntil("20 frames of the dashboard", advancing: .milliseconds(17)) {
            harness.kiosk.session.flips.framesFlipped >= 20
        }
        let size = try XCTUnwrap(harness.first.engine.backend?.info.mode.size)
        XCTAssertEqual(size.width, 1024)
        XCTAssertEqual(size.height, 768)
        // The ticker changes the screen every frame: the frame on screen is taken as its flip completes.
        var captured: [UInt8]??
        harness.first.engine.captureScreen { captured = $0 }
        try harness.waitUntil("the frame on screen", advancing: .milliseconds(17)) { captured != nil }
        let image = Screen(pixels: try XCTUnwrap(captured ?? nil), width: size.width, height: size.height)
        // The dashboard's background is a dark blue gradient; the cards and the ticker band add lighter pixels.
        let distinct = Set((0..<64).flatMap { i in (0..<48).map { j in image.rgb(x: i * 16, y: j * 16) } })
        XCTAssertGreaterThan(distinct.count, 8, "a dashboard, not a blank screen")
    }

    func testEditingTheSceneFileReloadsItAndABadEditKeepsTheScene() throws {
        let notify = try NotifySocket()
        let harness = try KioskHarness.supervised(by: notify) {
            try KioskHarness(name, scene: Self.scene("first"), manualClock: false) { run, _ in run.configuration.settings.watch = true }
        }
        let scene = harness.directory.appendingPathComponent("scene.yaml")
        let events = try harness.subscribe(["scene", "error"])
        XCTAssertEqual(try shownText(harness), "first")
        try Data(Self.scene("second").utf8).write(to: scene, options: .atomic)
        // The start-up load may announce itself too: wait for the load that shows the edit.
        try events.waitFor("scene") { event in
            event["kind"] as? String == "loaded" && event["source"] as? String == scene.path && (try? shownText(harness)) == "second"
        }
        try Data("pages: [".utf8).write(to: scene)
        let invalid = try events.waitFor("error")
        XCTAssertEqual(invalid["code"] as? String, "invalid_scene", "\(invalid)")
        XCTAssertTrue((invalid["message"] as? String ?? "").contains(scene.path), "the error names the file: \(invalid)")
        XCTAssertEqual(try shownText(harness), "second", "the previous scene stays")

        // The file is still bad: SIGHUP's reload is refused the same way, and systemd hears that the scene stayed.
        harness.deliver(signal: SIGHUP)
        var afterReload: [String] = []
        try harness.waitUntil("READY=1 after SIGHUP's reload") {
            afterReload = sinceReloading(notify)
            return afterReload.contains { $0.contains("READY=1") }
        }
        XCTAssertTrue(afterReload.contains { $0.contains("READY=1") && $0.contains("reload rejected, previous scene kept") }, "\(afterReload)")
        XCTAssertEqual(try events.waitFor("error")["code"] as? String, "invalid_scene")
        XCTAssertEqual(try shownText(harness), "second")
        XCTAssertTrue(harness.log.lines.contains("SIGHUP: reloading the scene file"), "\(harness.log.lines)")
    }

    /// Without a watch, SIGHUP alone reads the edited file again, and systemd hears READY=1 once it is shown.
    func testSIGHUPReadsTheSceneFileAgainWithoutAWatch() throws {
        let notify = try NotifySocket()
        let harness = try KioskHarness.supervised(by: notify) {
            try KioskHarness(name, scene: Self.scene("first"), manualClock: false)
        }
        let scene = harness.directory.appendingPathComponent("scene.yaml")
        let events = try harness.subscribe(["scene"])
        try Data(Self.scene("second").utf8).write(to: scene, options: .atomic)
        XCTAssertEqual(try shownText(harness), "first", "nothing watches the file")
        harness.deliver(signal: SIGHUP)
        try events.waitFor("scene") { $0["kind"] as? String == "loaded" && $0["source"] as? String == scene.path }
        XCTAssertEqual(try shownText(harness), "second")
        var afterReload: [String] = []
        try harness.waitUntil("READY=1 after SIGHUP's reload") {
            afterReload = sinceReloading(notify)
            return afterReload.contains { $0.contains("READY=1") }
        }
        XCTAssertFalse(afterReload.contains { $0.contains("reload rejected") }, "\(afterReload)")
        XCTAssertTrue(harness.log.lines.contains("SIGHUP: reloading the scene file"), "\(harness.log.lines)")
    }
}
