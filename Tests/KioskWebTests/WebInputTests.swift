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
        defer {
            stage.webPages = nil
            engine.stop()
        }
        let router = InputRouter(stage: stage, mapping: InputMapping(panel: size, rotation: .degrees0, output: "Headless-1"))
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
}
