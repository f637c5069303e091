import Foundation
import KioskCore
import KioskDisplay
import KioskRender
import KioskRuntime
import KioskScene
import KioskTestSupport
import KioskWeb
import XCTest

/// Touch and pointer on a `web` widget reach its page through the same input routing as every widget: a tap on an
/// HTML button runs its click handler, at the point the tap hit, beside a native button that still takes its own
/// presses.
final class WebInputTests: XCTestCase {
    func testATapOnAnHTMLButtonReachesThePage() throws {
        let dir = try KioskdProcess.scratchDirectory("web-input")
        let page = dir.appendingPathComponent("page.html")
        // The button fills the page's right half; a click writes where it landed into the title.
        try """
            <html><body style="margin:0;background:#303030">
            <button id="b" style="position:absolute;left:100px;top:0;width:100px;height:100px;border:0;background:#0000ff"
              onclick="event.stopPropagation(); this.style.background='#00ff00'; document.title='clicked ' + event.clientX + ',' + event.clientY">go</button>
            <script>document.body.addEventListener('click', e => { document.title = 'missed ' + e.clientX + ',' + e.clientY })</script>
            </body></html>
            """.write(to: page, atomically: true, encoding: .utf8)
        let (loop, stage, router) = try show(page, in: dir)
        defer { stop(stage) }
        var reports: [InputReport] = []
        router.onReport = { reports.append($0) }
        func title() throws -> String {
            var value: Result<String, StageError>?
            try stage.evaluateWeb(id: "page", script: "document.title") { value = $0 }
            try Poll.until("the script's answer", timeout: 10, turning: loop) { value != nil }
            return try value!.get()
        }
        try Poll.until("the page loaded", timeout: 30, turning: loop) {
            (try? stage.webState(id: "page")["state"]) == .string("loaded")
        }
        XCTAssertEqual(try title(), "")

        // A tap at the page's (150, 50): the scene's (190, 70).
        var time: UInt64 = 1_000
        func touch(_ kind: InputEvent.Kind) {
            time += 16_000
            router.handle(InputEvent(timeMicroseconds: time, device: "touch", kind: kind))
        }
        touch(.touchDown(slot: 0, position: DevicePosition(x: 190.5 / 320, y: 70.5 / 240, calibrated: false)))
        touch(.touchUp(slot: 0))
        try Poll.until("the click in the page", timeout: 10, turning: loop) { (try? title()) == "clicked 150,50" }
        XCTAssertTrue(reports.isEmpty, "a press in a page is the page's: \(reports)")

        // The native button beside it still takes its presses.
        touch(.touchDown(slot: 0, position: DevicePosition(x: 280.5 / 320, y: 40.5 / 240, calibrated: false)))
        touch(.touchUp(slot: 0))
        XCTAssertTrue(reports.contains { $0.kind == .press && $0.id == "native" }, "\(reports)")
        XCTAssertEqual(try title(), "clicked 150,50")
    }

    /// The focus ring enters a page with Tab: keys of a keyboard type into its `<input>`s (Shift makes capitals),
    /// Tab moves between its own fields, Tab past the last leaves the page for the native button after it, whose
    /// Enter press fires; Shift-Tab comes back into the page's last field, and F6 leaves the page whatever it does
    /// with Tab.
    func testTheFocusRingEntersAndLeavesAPageWhoseInputsTakeKeys() throws {
        let dir = try KioskdProcess.scratchDirectory("web-keys")
        let page = dir.appendingPathComponent("page.html")
        try """
            <html><body style="margin:0;background:#303030">
            <input id="first" style="position:absolute;left:10px;top:10px;width:150px">
            <input id="second" style="position:absolute;left:10px;top:50px;width:150px">
            </body></html>
            """.write(to: page, atomically: true, encoding: .utf8)
        let (loop, stage, router) = try show(page, in: dir)
        defer { stop(stage) }
        var reports: [InputReport] = []
        router.onReport = { reports.append($0) }
        func evaluate(_ script: String) throws -> String {
            var value: Result<String, StageError>?
            try stage.evaluateWeb(id: "page", script: script) { value = $0 }
            try Poll.until("the script's answer", timeout: 10, turning: loop) { value != nil }
            return try value!.get()
        }
        func focusedField() -> String? { try? evaluate("document.activeElement.id || document.activeElement.tagName") }
        try Poll.until("the page loaded", timeout: 30, turning: loop) {
            (try? stage.webState(id: "page")["state"]) == .string("loaded")
        }
        var time: UInt64 = 1_000
        func key(_ name: String, _ code: UInt32, _ pressed: Bool) {
            time += 16_000
            router.handle(InputEvent(timeMicroseconds: time, device: "keyboard", kind: .key(name: name, code: code, pressed: pressed)))
        }
        func tap(_ name: String, _ code: UInt32, shifted: Bool = false) {
            if shifted { key("leftshift", 42, true) }
            key(name, code, true)
            key(name, code, false)
            if shifted { key("leftshift", 42, false) }
        }

        // Tab: the ring enters the page (first in the scene), whose first field takes the focus.
        tap("tab", 15)
        XCTAssertEqual(router.focusedID, "page")
        try Poll.until("the page's first field focused", timeout: 10, turning: loop) { focusedField() == "first" }
        tap("h", 35, shifted: true)
        tap("i", 23)
        try Poll.until("the typed text in the first field", timeout: 10, turning: loop) {
            (try? evaluate("document.getElementById('first').value")) == "Hi"
        }
        // Tab within the page: its second field; the ring stays on the page.
        tap("tab", 15)
        try Poll.until("the page's second field focused", timeout: 10, turning: loop) { focusedField() == "second" }
        XCTAssertEqual(router.focusedID, "page")
        tap("2", 3)
        try Poll.until("the typed text in the second field", timeout: 10, turning: loop) {
            (try? evaluate("document.getElementById('second').value")) == "2"
        }
        // Tab past the last field: the ring moves on to the native button, and Enter presses it.
        tap("tab", 15)
        try Poll.until("the ring on the native button", timeout: 10, turning: loop) { router.focusedID == "native" }
        XCTAssertFalse(reports.contains { $0.kind == .press }, "\(reports)")
        tap("enter", 28)
        XCTAssertTrue(reports.contains { $0.kind == .press && $0.id == "native" && $0.action == "tapped" }, "\(reports)")
        XCTAssertEqual(try evaluate("document.getElementById('first').value + '/' + document.getElementById('second').value"), "Hi/2",
                       "Tab, Shift and Enter typed nothing into the page")

        // Shift-Tab back: the page's last field; F6 leaves the page at once.
        tap("tab", 15, shifted: true)
        XCTAssertEqual(router.focusedID, "page")
        try Poll.until("the page's last field focused again", timeout: 10, turning: loop) { focusedField() == "second" }
        tap("f6", 64)
        XCTAssertEqual(router.focusedID, "native")
        tap("x", 45)
        XCTAssertEqual(try evaluate("document.getElementById('second').value"), "2", "a key after F6 is not the page's")
    }

    /// The page in a web widget (id `page`, at the scene's (40, 20), 200x100) beside a native button (id `native`,
    /// `on_press: {emit: tapped}`) on a 320x240 headless output, with WPE WebKit and an input router.
    private func show(_ page: URL, in dir: URL) throws -> (MainLoop, SceneStage, InputRouter) {
        let scenePath = dir.appendingPathComponent("scene.yaml")
        try """
            widgets:
              - {id: page, type: web, url: "\(page.absoluteString)", x: 40, y: 20, width: 200, height: 100}
              - {id: native, type: button, label: "ok", x: 260, y: 20, width: 40, height: 40, on_press: {emit: tapped}}
            """.write(to: scenePath, atomically: true, encoding: .utf8)
        let loop = try MainLoop.epoll()
        let size = Size(width: 320, height: 240)
        let backend = try HeadlessBackend(mode: OutputMode(width: size.width, height: size.height, refreshMilliHz: 60_000), bufferCount: 2)
        let engine = try LayerEngine(loop: loop, backend: backend, compositor: try ShadowCompositor(size: size),
                                     pool: RenderQueuePool(workerCount: 1))
        let loaded = try SceneLoader.load(path: scenePath.path)
        let stage = SceneStage(engine: engine, scene: loaded.scene, source: scenePath.path)
        try engine.start()
        stage.webPages = try WPEWeb(loop: loop)
        let router = InputRouter(stage: stage, mapping: InputMapping(panel: size, rotation: .degrees0, output: "Headless-1"))
        return (loop, stage, router)
    }

    private func stop(_ stage: SceneStage) {
        stage.webPages = nil
        stage.engine.stop()
    }
}
