import Foundation
import KioskCore
import KioskDisplay
import KioskRender
import KioskRuntime
import KioskScene
import KioskTestSupport
import XCTest

/// A scene on an engine whose displays come and go (a fake card, the real shadow compositor): laid out while no
/// display is connected, laid out again for each display's mode (percent sizes follow it), with its data and page
/// kept, and drawn in full on the new display.
final class OutputRelayoutTests: XCTestCase {
    static let yaml = """
        size: display
        background: "#000080"
        pages:
          - name: first
            widgets:
              - {id: half, type: rect, background: "#ff0000", x: 0, y: 0, width: 50%, height: 50%}
              - {id: label, type: text, text: "{greeting}", x: 50%, y: 60%, width: 40%, height: 20%, foreground: white}
          - name: second
            widgets:
              - {id: other, type: rect, background: "#00ff00", x: 0, y: 0, width: 25%, height: 25%}
        """

    func testTheSceneIsLaidOutAgainForEachDisplaysModeKeepingDataAndPage() throws {
        let h = try RelayoutHarness(yaml: Self.yaml)
        h.settleNow()
        XCTAssertEqual(try h.width(of: "half"), 512, "laid out for the waiting size, 1024x768")
        try h.stage.setData(["greeting": "hello"])

        h.card.plug(modes: [OutputMode(width: 800, height: 600, refreshMilliHz: 60_000)])
        h.manager.rescan()
        try Poll.until("'half' laid out 400 wide", turning: h.loop, running: h.pool) { try h.width(of: "half") == 400 }
        h.settle()
        XCTAssertEqual(try h.frame(of: "half"), [0, 0, 400, 300])
        XCTAssertEqual(try h.stage.widget(id: "label")["shown_text"], .string("hello"))
        XCTAssertEqual(h.frontPixel(x: 10, y: 10), 0xFF0000)
        XCTAssertEqual(h.frontPixel(x: 799, y: 599), 0x000080, "drawn in full")

        try h.stage.showPage("second", transition: nil)
        h.card.unplug()
        h.manager.rescan()
        h.card.plug(modes: [OutputMode(width: 1280, height: 720, refreshMilliHz: 60_000)])
        h.manager.rescan()
        try Poll.until("'other' laid out 320 wide", turning: h.loop, running: h.pool) { try h.width(of: "other") == 320 }
        h.settle()
        XCTAssertEqual(h.stage.currentPage, "second", "the page shown is kept")
        XCTAssertEqual(try h.frame(of: "other"), [0, 0, 320, 180])
        XCTAssertEqual(h.frontPixel(x: 10, y: 10), 0x00FF00)
        XCTAssertEqual(h.frontPixel(x: 1279, y: 719), 0x000080)
        XCTAssertEqual(h.stage.data(keys: ["greeting"]), ["greeting": "hello"])
        XCTAssertEqual(h.card.liveOutputs, 1)
    }
}

/// A stage on an engine started without a display, an `OutputManager` over a `FakeCard` with nothing plugged in,
/// shadow compositors, and the manual clock. Main thread.
final class RelayoutHarness {
    let loop: MainLoop
    let poller: ManualPoller
    let pool = RenderQueuePool(strategy: .manual)
    let engine: LayerEngine
    let stage: SceneStage
    let card = FakeCard(connected: false)
    let manager: OutputManager
    /// The listeners a test added to the engine, kept as long as the harness.
    var listeners: [ListenerToken] = []

    init(yaml: String) throws {
        (loop, poller) = MainLoop.manual()
        engine = try LayerEngine(loop: loop, sceneSize: Size(width: 1024, height: 768), pool: pool)
        let scene = try SceneLoader.parse(data: Data(yaml.utf8), file: "relayout.yaml", baseDirectory: "/").scene
        stage = SceneStage(engine: engine, scene: scene, source: "inline", clock: { WallTime(seconds: 1_700_000_000) })
        try engine.start()
        manager = OutputManager(engine: engine, source: card, attached: nil) { mode in
            try ShadowCompositor(size: mode.size, rotation: .degrees0)
        }
        manager.rescan()
    }

    /// The widget's frame as `widget.get` reports it: x, y, width, height.
    func frame(of id: String) throws -> [Double] {
        guard case .object(let frame) = try stage.widget(id: id)["frame"] else { return [] }
        return ["x", "y", "width", "height"].compactMap { key in
            if case .number(let value) = frame[key] { return value }
            return nil
        }
    }

    func width(of id: String) throws -> Double? { try frame(of: id).dropFirst(2).first }

    func settleNow() {
        for _ in 0..<10_000 {
            let wakeups = loop.wakeups
            loop.runOnce(timeout: .zero)
            if pool.runQueued() > 0 { continue }
            if loop.wakeups == wakeups && engine.transaction.isEmpty && engine.rendersInFlight == 0 { return }
        }
        XCTFail("the loop never went quiet")
    }


    /// Until the new layout has landed, been composed and flipped.
    func settle() {
        for _ in 0..<600 {
            settleNow()
            if engine.isRendering(engine.rootLayer) || stage.isReplacing { continue }
            if engine.backend?.isFlipPending == true, let next = loop.nextTimerDeadline {
                poller.advance(to: max(next, loop.now))
                continue
            }
            if !engine.hasPendingWork { return }
        }
        XCTFail("the scene never settled")
    }

    func frontPixel(x: Int, y: Int) -> UInt32? {
        guard let backend = engine.backend, let bytes = backend.frontBufferSnapshot() else { return nil }
        let offset = (y * backend.info.mode.width + x) * 4
        return bytes[offset..<offset + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) } & 0xFFFFFF
    }
}
