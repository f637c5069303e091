import KioskCore
import KioskDisplay
import KioskRuntime
import KioskTestSupport
import XCTest

/// The last fallback after the kernel refused a configuration (EINVAL at commit): the connector's preferred mode of
/// another size, which needs another output. On a fake card whose kernel refuses every commit in the requested mode,
/// the output is opened again in the preferred mode, the scene is laid out for it and drawn in full, the fault is
/// counted and sent once, and nothing is retried after that.
final class ModeFallbackRelayoutTests: XCTestCase {
    private let preferred = OutputMode(width: 1280, height: 720, refreshMilliHz: 60_000)
    private let requested = OutputMode(width: 800, height: 600, refreshMilliHz: 60_000)

    private final class Recorder {
        var events: [OutputEvent] = []
        var faults: [FrameFault] = []
        var fatal: FatalFrameError?
    }

    /// A harness with a display offering `preferred` (its preferred mode) and `requested`, asked for `requested`,
    /// whose commits in `refused` the simulated kernel refuses.
    private func makeHarness(refusing refused: [OutputMode]) throws -> (RelayoutHarness, Recorder) {
        let h = try RelayoutHarness(yaml: OutputRelayoutTests.yaml)
        let recorder = Recorder()
        h.manager.onEvent = { recorder.events.append($0) }
        h.listeners += [
            h.engine.addFaultListener { recorder.faults.append($0) },
            h.engine.addFatalListener { recorder.fatal = $0 },
        ]
        h.card.requestedMode = ModeRequest(width: requested.width, height: requested.height, refreshHz: 60)
        h.card.plug(modes: [preferred, requested])
        // The connector's own entries (the first one flagged preferred), as the outputs see them.
        let entries = h.card.connectors[0].modes
        h.card.refusedModes = Set(entries.filter { mode in refused.contains { $0.size == mode.size } })
        return (h, recorder)
    }

    func testEveryCommitRefusedInTheRequestedModeFallsBackToThePreferredModeOfAnotherSizeAndLaysTheSceneOut() throws {
        let (h, recorder) = try makeHarness(refusing: [requested])
        try h.stage.setData(["greeting": "hello"])
        h.manager.rescan()
        try Poll.until("the preferred mode and the scene laid out for it", turning: h.loop, running: h.pool) {
            try h.engine.backend?.info.mode.size == preferred.size && h.width(of: "half") == 640
        }
        h.settle()

        // Atomic, then legacy commits in the requested mode were refused; then the output was opened again.
        XCTAssertEqual(h.card.fallbackAttempts.map(\.commitAPI), [.legacy])
        XCTAssertEqual(h.card.fallbackAttempts.map(\.mode.size), [requested.size])
        XCTAssertEqual(h.card.opened, 2, "the output was opened once more, in the preferred mode")
        XCTAssertEqual(h.card.liveOutputs, 1, "the refused output was let go")
        XCTAssertEqual(h.engine.backend?.info.mode.size, preferred.size)
        XCTAssertEqual(h.manager.current?.mode.size, preferred.size)
        XCTAssertEqual(h.manager.modeFallback?.refused.mode.size, requested.size)

        // The scene was laid out for 1280x720 and drawn in full: the front buffer shows it.
        XCTAssertEqual(try h.frame(of: "half"), [0, 0, 640, 360])
        XCTAssertEqual(try h.stage.widget(id: "label")["shown_text"], .string("hello"), "the data is kept")
        XCTAssertEqual(h.frontPixel(x: 639, y: 359), 0xFF0000)
        XCTAssertEqual(h.frontPixel(x: 640, y: 10), 0x000080)
        XCTAssertEqual(h.frontPixel(x: 1279, y: 719), 0x000080, "drawn in full")

        // Counted, sent once as an `error` event, and the mode change told to `display` subscribers.
        let stats = h.engine.stats
        XCTAssertEqual(stats.presentFailures, ["EINVAL": 1])
        XCTAssertEqual(stats.configurationFallbacks, 1)
        XCTAssertEqual(recorder.faults.map(\.code), [.presentFailed])
        XCTAssertTrue(recorder.faults.first?.message.contains("EINVAL") ?? false, recorder.faults.first?.message ?? "no fault")
        guard recorder.events.count == 2, case .connected(let first) = recorder.events[0], case .modeChanged(let second) = recorder.events[1] else {
            return XCTFail("events: \(recorder.events)")
        }
        XCTAssertEqual(first.mode.size, requested.size)
        XCTAssertEqual(second.mode.size, preferred.size)
        XCTAssertNil(recorder.fatal)
        XCTAssertTrue(stats.healthy, stats.healthReason)

        // No loop of retries: frames keep flipping in the preferred mode, and a hotplug of the same display does
        // not try the refused mode again.
        let presents = h.card.presents
        try h.stage.setData(["greeting": "again"])
        try Poll.until("the label to show 'again'", turning: h.loop, running: h.pool) { try h.stage.widget(id: "label")["shown_text"] == .string("again") }
        h.settle()
        h.manager.rescan()
        h.settle()
        XCTAssertGreaterThan(h.card.presents, presents)
        XCTAssertEqual(h.card.opened, 2)
        XCTAssertEqual(h.engine.stats.presentFailures, ["EINVAL": 1])
        XCTAssertEqual(recorder.events.count, 2)
    }

    func testAPreferredModeRefusedTooIsFatalWithoutRetrying() throws {
        let (h, recorder) = try makeHarness(refusing: [requested, preferred])
        h.manager.rescan()
        try Poll.until("the preferred mode's refusal to be fatal", interval: 0) {
            if recorder.fatal == nil { h.settleNow() }
            return recorder.fatal != nil
        }
        XCTAssertEqual(recorder.fatal?.code, .presentFailed)
        XCTAssertEqual(h.card.opened, 2, "the preferred mode was tried once, in a new output")
        XCTAssertEqual(h.card.fallbackAttempts.map(\.commitAPI), [.legacy, .legacy])
        XCTAssertEqual(h.engine.stats.presentFailures, ["EINVAL": 2])
        XCTAssertEqual(h.engine.stats.configurationFallbacks, 1)
        XCTAssertEqual(recorder.faults.map(\.code), [.presentFailed, .presentFailed, .presentFailed])
        h.settleNow()
        XCTAssertEqual(h.card.opened, 2)
    }

    func testAnUnpluggedDisplayTriesTheRequestedModeAgainWhenPluggedBack() throws {
        let (h, _) = try makeHarness(refusing: [requested])
        h.manager.rescan()
        try Poll.until("the preferred mode", turning: h.loop, running: h.pool) { h.engine.backend?.info.mode.size == preferred.size }
        h.settle()
        h.card.unplug()
        h.manager.rescan()
        XCTAssertNil(h.manager.modeFallback)
        // Another display, which takes the requested mode.
        h.card.refusedModes = []
        h.card.plug(modes: [preferred, requested])
        h.manager.rescan()
        try Poll.until("'half' laid out 400 wide", turning: h.loop, running: h.pool) { try h.width(of: "half") == 400 }
        h.settle()
        XCTAssertEqual(h.engine.backend?.info.mode.size, requested.size)
        XCTAssertEqual(h.frontPixel(x: 399, y: 299), 0xFF0000)
    }
}
