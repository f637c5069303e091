import Foundation
import KioskCore
import KioskDisplay
import KioskInput
import KioskRender
import KioskRuntime
import KioskTestSupport
import XCTest

/// kioskd's input path assembled in the test process on the vkms output, so a test can read back what the CRTC
/// scans out (writeback) at a chosen moment: the atomic DRM backend with a writeback capturer, the layer engine, a
/// scene, libinput on the udev seat (the uinput devices the test makes) and the input router. Main thread.
final class InputRig {
    let loop: MainLoop
    let drm: DRMBackend
    let capturer: WritebackCapturer
    let engine: LayerEngine
    let stage: SceneStage
    let router: InputRouter
    let source: LibinputSource
    /// Every report of the router, as `kind id`.
    private(set) var reports: [String] = []
    /// Called with each input event before the router handles it.
    var onEvent: ((InputEvent) -> Void)?

    /// `cursorPlane`: the cursor goes on vkms's cursor plane (as `kioskd run` does) rather than being composited.
    init(scene: String, cursorPlane: Bool = false) throws {
        loop = try MainLoop.epoll()
        drm = try DRMBackend(options: DRMOptions(commit: .atomic))
        capturer = try WritebackCapturer(backend: drm)
        let size = drm.info.mode.size
        engine = try LayerEngine(loop: loop, backend: drm, compositor: try ShadowCompositor(size: size),
                                 pool: RenderQueuePool(strategy: .roundRobin))
        stage = try SceneStage(engine: engine, path: scene)
        router = InputRouter(stage: stage, mapping: InputMapping(panel: size, rotation: .degrees0, output: drm.info.connector))
        router.cursorHideAfter = PointerCursor.defaultHideAfter
        if cursorPlane { router.cursorPlane = try DRMCursorPlane(backend: drm) }
        source = try LibinputSource(loop: loop, backend: .seat("seat0"))
        source.onEvent = { [unowned self] event in
            onEvent?(event)
            router.handle(event)
        }
        router.onReport = { [unowned self] report in reports.append("\(report.kind.rawValue) \(report.id ?? "-")") }
        try engine.start()
        try source.start()
        XCTAssertTrue(settle(), "the scene never settled: \(engine.stats)")
    }

    /// Stops the engine (the CRTC restored) and gives DRM master up, so the next test's kioskd can take the card
    /// even while something in this process still holds the rig.
    func stop() {
        engine.stop()
        // The output goes with the rig even if something a test hooked onto the engine keeps the engine alive.
        engine.detachOutput()
        do { try drm.dropMaster() } catch { XCTFail("\(error)") }
    }

    var size: Size { drm.info.mode.size }

    /// Runs the loop until everything asked for is rendered, composed and flipped.
    @discardableResult
    func settle(seconds: Double = 60) -> Bool {
        loop.spin(seconds: seconds) {
            engine.stats.framesFlipped > 0 && engine.rendersInFlight == 0 && engine.transaction.pendingRenderCount == 0
                && !engine.hasPendingWork && !drm.isFlipPending
        }
    }

    /// Waits until libinput has the device named so.
    func waitForDevice(_ name: String) {
        XCTAssertTrue(loop.spin(seconds: 20) { source.devices.values.contains { $0.name == name } }, "libinput never added \(name)")
    }

    /// Waits until the router has reported `report` (`press start`).
    func waitForReport(_ report: String, seconds: Double = 20) {
        XCTAssertTrue(loop.spin(seconds: seconds) { reports.contains(report) }, "no '\(report)' among \(reports)")
    }

    /// What the CRTC scans out now: the next present is captured through the writeback connector.
    func capture() throws -> [UInt8] {
        XCTAssertTrue(settle())
        try capturer.captureNextPresent()
        let flipped = engine.stats.framesFlipped
        engine.redrawEverything()
        XCTAssertTrue(loop.spin(seconds: 30) { engine.stats.framesFlipped > flipped && !drm.isFlipPending })
        return try XCTUnwrap(capturer.lastCapture).waitForPixels()
    }

    /// The XRGB colour of a captured pixel.
    func pixel(_ pixels: [UInt8], x: Int, y: Int) -> UInt32 {
        let o = (y * size.width + x) * 4
        return UInt32(pixels[o + 2]) << 16 | UInt32(pixels[o + 1]) << 8 | UInt32(pixels[o])
    }

    /// A widget's frame in the engine root's coordinates: its layer's frame plus its ancestors' (the scenes these
    /// tests use have no transforms).
    func frame(of id: String) throws -> Rect {
        guard let layer = Self.find(id, in: engine.rootLayer) else { throw ControlTestError("the scene has no layer named \(id)") }
        var x = 0, y = 0
        var current: Layer? = layer
        while let l = current, l !== engine.rootLayer {
            x += l.frame.x
            y += l.frame.y
            current = l.parent
        }
        return Rect(x: x, y: y, width: layer.frame.width, height: layer.frame.height)
    }

    private static func find(_ name: String, in layer: Layer) -> Layer? {
        if layer.name == name { return layer }
        for child in layer.children { if let found = find(name, in: child) { return found } }
        return nil
    }
}
