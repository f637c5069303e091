import KioskCore
import KioskDisplay
import KioskRender
import KioskTestSupport
import XCTest

/// What one run of an overlay-plane test scene showed and read back: the front buffer, the writeback capture and
/// the overlay plane's state as KMS reports it (on DRM), and the engine's layer paths. A plain value.
struct PlaneRun {
    var shown: [UInt8] = []
    var captured: [UInt8]?
    var paths: [LayerPathReport] = []
    /// The overlay plane's CRTC_ID and FB_ID as KMS reads them back while the frame is on screen.
    var planeState: (crtc: UInt32?, framebuffer: UInt32?)?
    var planeFramebuffer: UInt32?
    var crtc: UInt32?
    var width = 0
    /// What the scene said of its video when the run ended, for a failure's message.
    var videoState = ""

    /// The XRGB pixel at (`x`, `y`) of a buffer `width` pixels wide, without its X byte.
    static func pixel(_ bytes: [UInt8], x: Int, y: Int, width: Int) -> UInt32 {
        let offset = (y * width + x) * 4
        return bytes[offset..<offset + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) } & 0xFFFFFF
    }
}

/// The engine an overlay-plane test runs its scene on: on a DRM backend with a writeback capturer and the CRTC's
/// overlay planes, on a headless one with neither, so the same scene gives the device's capture and the headless
/// composite to compare. Main thread.
final class PlaneRunRig {
    let loop: MainLoop
    let engine: LayerEngine
    let backend: any DisplayBackend
    private let capturer: WritebackCapturer?
    private let planes: DRMOverlayPlanes?

    init(backend: any DisplayBackend) throws {
        loop = try MainLoop.epoll()
        self.backend = backend
        engine = try LayerEngine(loop: loop, backend: backend, compositor: try ShadowCompositor(size: backend.info.mode.size),
                                 pool: RenderQueuePool(strategy: .roundRobin))
        if let drm = backend as? DRMBackend {
            capturer = try WritebackCapturer(backend: drm)
            planes = try DRMOverlayPlanes(backend: drm, rotation: .degrees0)
            engine.overlayPlanes = planes
        } else {
            capturer = nil
            planes = nil
        }
    }

    /// Presents once more, capturing it on DRM, and reads back the front buffer, the capture and the overlay
    /// plane's state.
    func finish(file: StaticString = #filePath, line: UInt = #line) throws -> PlaneRun {
        var result = PlaneRun(paths: engine.stats.layerPaths, width: backend.info.mode.size.width)
        if let capturer, let drm = backend as? DRMBackend, let planes {
            try capturer.captureNextPresent()
            let flipped = engine.stats.framesFlipped
            engine.redrawEverything()
            XCTAssertTrue(loop.spin(seconds: 30) { self.engine.stats.framesFlipped > flipped && !self.backend.isFlipPending },
                          "the capturing frame never flipped", file: file, line: line)
            result.captured = try XCTUnwrap(capturer.lastCapture, file: file, line: line).waitForPixels()
            let id = try XCTUnwrap(planes.planeIDs.first, file: file, line: line)
            let read = try XCTUnwrap(try DRMResources(card: drm.card).planes.first { $0.id == id }, file: file, line: line)
            result.planeState = (read.crtcID, read.bufferID)
            result.planeFramebuffer = planes.frontFramebufferIDs.first.flatMap { $0 == 0 ? nil : $0 }
            result.crtc = drm.plan.crtc.id
        }
        result.shown = try XCTUnwrap(backend.frontBufferSnapshot(), file: file, line: line)
        return result
    }
}
