import Foundation
import KioskCore
import KioskDisplay
import KioskRender
import KioskRuntime
import KioskScene
import KioskTestSupport
import XCTest

/// Scenes on several outputs (a fake card with two connectors, shadow compositors, the manual clock): the default
/// scene mirrored on both, each laid out for its own mode, or an output with its own scene; data reaching every
/// output; an unplugged output leaving the other's scene live.
final class OutputStagesTests: XCTestCase {
    static let mirrored = """
        size: display
        background: "#000080"
        pages:
          - name: first
            widgets:
              - {id: half, type: rect, background: "#ff0000", x: 0, y: 0, width: 50%, height: 50%}
              - {id: label, type: text, text: "{greeting}", x: 0, y: 60%, width: 100%, height: 20%, foreground: white}
        """
    static let own = """
        size: display
        background: "#008000"
        pages:
          - name: panel
            widgets:
              - {id: quarter, type: rect, background: "#0000ff", x: 0, y: 0, width: 25%, height: 25%}
              - {id: label, type: text, text: "{greeting}", x: 0, y: 60%, width: 100%, height: 20%, foreground: white}
        """
    static let hdmi = OutputMode(width: 200, height: 100, refreshMilliHz: 60_000)
    static let panel = OutputMode(width: 120, height: 160, refreshMilliHz: 50_000)

    func testTheDefaultSceneIsMirroredAndLaidOutForEachOutputsMode() throws {
        let h = try StagesHarness(ownSceneOn: nil)
        try Poll.until("'half' laid out for each output's mode", turning: h.loop, running: h.pool) {
            try h.width(of: "half", on: "HDMI-A-1") == 100 && h.width(of: "half", on: "DSI-1") == 60
        }
        h.settle()
        XCTAssertEqual(try h.frame(of: "half", on: "DSI-1"), [0, 0, 60, 80])
        XCTAssertEqual(h.frontPixel("HDMI-A-1", x: 5, y: 5), 0xFF0000)
        XCTAssertEqual(h.frontPixel("DSI-1", x: 5, y: 5), 0xFF0000)
        XCTAssertEqual(h.frontPixel("DSI-1", x: 119, y: 40), 0x000080, "each output drawn in full at its own size")
    }

    func testAnOutputWithItsOwnSceneAndDataReachingEveryOutput() throws {
        let h = try StagesHarness(ownSceneOn: "DSI-1")
        try Poll.until("each output's own scene laid out", turning: h.loop, running: h.pool) {
            try h.width(of: "half", on: "HDMI-A-1") == 100 && h.width(of: "quarter", on: "DSI-1") == 30
        }
        h.settle()
        XCTAssertEqual(h.frontPixel("HDMI-A-1", x: 5, y: 5), 0xFF0000)
        XCTAssertEqual(h.frontPixel("DSI-1", x: 5, y: 5), 0x0000FF)
        XCTAssertEqual(h.frontPixel("DSI-1", x: 119, y: 50), 0x008000)
        XCTAssertEqual(try h.stages.stage(for: nil).currentPage, "first", "no output named: the first")
        XCTAssertEqual(try h.stages.stage(for: "DSI-1").currentPage, "panel")
        XCTAssertThrowsError(try h.stages.stage(for: "DP-1")) {
            XCTAssertEqual("\($0)", "no output named 'DP-1'; outputs: HDMI-A-1, DSI-1")
        }

        try h.stages.setData(["greeting": "hello"])
        h.settle()
        for output in ["HDMI-A-1", "DSI-1"] {
            XCTAssertEqual(try h.stages.stage(for: output).widget(id: "label")["shown_text"], .string("hello"), output)
        }

        h.card.unplug("HDMI-A-1")
        h.slots.rescan()
        try h.stages.setData(["greeting": "still here"])
        h.settle()
        XCTAssertEqual(try h.stages.stage(for: "DSI-1").widget(id: "label")["shown_text"], .string("still here"))
        XCTAssertEqual(try h.stages.stage(for: "HDMI-A-1").data(keys: ["greeting"]), ["greeting": "still here"],
                       "the unplugged output's scene keeps the data for when it comes back")
        XCTAssertEqual(h.card.liveOutputs, 1)
    }
}

/// Two output slots (HDMI-A-1 200x100 at 60 Hz, DSI-1 120x160 at 50 Hz) on a fake card, a stage each, shadow
/// compositors and the manual clock. Main thread.
final class StagesHarness {
    let loop: MainLoop
    let poller: ManualPoller
    let pool = RenderQueuePool(strategy: .manual)
    let card: FakeCard
    let slots: OutputSlots
    let stages: OutputStages

    init(ownSceneOn connector: String?) throws {
        (loop, poller) = MainLoop.manual()
        let card = FakeCard(connectors: [
            FakeCard.Connector(name: "HDMI-A-1", isConnected: true, modes: [OutputStagesTests.hdmi]),
            FakeCard.Connector(name: "DSI-1", isConnected: true, modes: [OutputStagesTests.panel]),
        ])
        self.card = card
        slots = try OutputSlots(loop: loop, pool: pool, entries: ["HDMI-A-1", "DSI-1"].map {
            .init(connector: $0, source: card.connectorSource($0), sceneSize: Size(width: 1024, height: 768))
        }) { _, mode in try ShadowCompositor(size: mode.size, rotation: .degrees0) }
        let mirrored = try SceneLoader.parse(data: Data(OutputStagesTests.mirrored.utf8), file: "mirrored.yaml", baseDirectory: "/").scene
        let own = try SceneLoader.parse(data: Data(OutputStagesTests.own.utf8), file: "own.yaml", baseDirectory: "/").scene
        stages = OutputStages(slots: slots, defaultScene: mirrored, source: "mirrored.yaml", clock: { WallTime(seconds: 1_700_000_000) }) { slot in
            slot.connector == connector ? (own, "own.yaml") : nil
        }
        slots.rescan()
    }

    func stage(_ output: String) throws -> SceneStage { try stages.stage(for: output) }

    func frame(of id: String, on output: String) throws -> [Double] {
        guard case .object(let frame) = try stage(output).widget(id: id)["frame"] else { return [] }
        return ["x", "y", "width", "height"].compactMap { key in
            if case .number(let value) = frame[key] { return value }
            return nil
        }
    }

    func width(of id: String, on output: String) throws -> Double? { try frame(of: id, on: output).dropFirst(2).first }

    private var engines: [LayerEngine] { slots.slots.map(\.engine) }

    func settleNow() {
        for _ in 0..<10_000 {
            let wakeups = loop.wakeups
            loop.runOnce(timeout: .zero)
            if pool.runQueued() > 0 { continue }
            if loop.wakeups == wakeups && engines.allSatisfy({ $0.transaction.isEmpty && $0.rendersInFlight == 0 }) { return }
        }
        XCTFail("the loop never went quiet")
    }


    /// Until every output's layout has landed, been composed and flipped.
    func settle() {
        for _ in 0..<600 {
            settleNow()
            if engines.contains(where: { $0.isRendering($0.rootLayer) }) || stages.stages.contains(where: { $0.stage.isReplacing }) { continue }
            if engines.contains(where: { $0.backend?.isFlipPending == true }), let next = loop.nextTimerDeadline {
                poller.advance(to: max(next, loop.now))
                continue
            }
            if !engines.contains(where: { $0.hasPendingWork }) { return }
        }
        XCTFail("the scenes never settled")
    }

    func frontPixel(_ output: String, x: Int, y: Int) -> UInt32? {
        guard let backend = try? slots.slot(named: output).engine.backend, let bytes = backend.frontBufferSnapshot() else { return nil }
        let offset = (y * backend.info.mode.width + x) * 4
        return bytes[offset..<offset + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) } & 0xFFFFFF
    }
}
