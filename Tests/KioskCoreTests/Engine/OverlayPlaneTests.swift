import KioskCore
import XCTest

/// Overlay planes through a fake `OverlayPlanes`: a qualifying layer goes to the planes and is left out of the
/// composition; an overlapped one is composited and says why; a refused layout falls back to composition; moving
/// or removing the layer releases the plane.
final class OverlayPlaneTests: XCTestCase {
    /// Takes up to `planeCount` candidates unless told to refuse, and records every layout it was given.
    final class FakePlanes: OverlayPlanes {
        var planeCount = 1
        var refusal: String?
        /// Whether it shows a candidate's part on the screen (`OverlayPlanes.cropsAtScreenEdge`), as DRM's do.
        var crops = false
        var cropsAtScreenEdge: Bool { crops }
        private(set) var layouts: [[OverlayCandidate]] = []
        /// What the planes show now: the last accepted layout.
        private(set) var shown: [OverlayCandidate] = []

        func assign(_ candidates: [OverlayCandidate]) -> [String?] {
            layouts.append(candidates)
            if let refusal {
                shown = []
                return candidates.map { _ in refusal }
            }
            shown = Array(candidates.prefix(planeCount))
            return candidates.indices.map { $0 < planeCount ? nil : "no free plane" }
        }
    }

    private let videoFrame = Rect(x: 8, y: 8, width: 24, height: 16)

    private func harness() throws -> (EngineHarness, FakePlanes, Layer) {
        let h = try EngineHarness()
        let planes = FakePlanes()
        h.engine.overlayPlanes = planes
        h.addSolidLayer("background", frame: Rect(x: 0, y: 0, width: 64, height: 48), color: grey)
        let video = h.addSolidLayer("video", frame: videoFrame, color: red)
        video.prefersOverlayPlane = true
        h.settle()
        return (h, planes, video)
    }

    func testAQualifyingLayerGoesOnAPlaneAndIsLeftOutOfTheComposition() throws {
        let (h, planes, video) = try harness()
        XCTAssertEqual(planes.shown.map(\.name), ["video"])
        XCTAssertEqual(planes.shown.first?.frame, videoFrame)
        XCTAssertEqual(planes.shown.first?.surface.pixel(x: 1, y: 1), premultipliedARGB(red), "the plane got its pixels")
        XCTAssertEqual(h.compositor.pixel(x: 10, y: 10), xrgb(grey), "the shadow buffer shows what lies under it")
        XCTAssertEqual(h.stats.layerPaths, [LayerPathReport(layer: "video", path: .plane)])
        XCTAssertNotNil(video.renderedSurface)
    }

    func testANewFrameOnAPlaneLayerPresentsWithoutComposingItsPixels() throws {
        let (h, planes, video) = try harness()
        let presented = h.stats.framesPresented
        let frame = LayerSurface(size: videoFrame.size, isOpaque: true)
        try SolidContent(color: blue).draw(into: frame, isCancelled: { false })
        var shown: [Bool] = []
        h.engine.showExternalSurface(frame, on: video) { shown.append($0) }
        h.settle()
        XCTAssertEqual(shown, [true], "a present carried the frame")
        XCTAssertGreaterThan(h.stats.framesPresented, presented)
        XCTAssertTrue(planes.shown.first?.surface === frame)
        XCTAssertEqual(h.compositor.pixel(x: 10, y: 10), xrgb(grey))
    }

    func testAnOverlappedLayerIsCompositedWithTheReason() throws {
        let (h, planes, _) = try harness()
        h.addSolidLayer("badge", frame: Rect(x: 28, y: 20, width: 8, height: 8), color: green)
        h.settle()
        XCTAssertEqual(planes.shown.count, 0, "the plane was released")
        XCTAssertEqual(planes.layouts.last?.count, 0)
        XCTAssertEqual(h.compositor.pixel(x: 10, y: 10), xrgb(red), "composited again")
        XCTAssertEqual(h.stats.layerPaths, [LayerPathReport(layer: "video", path: .composited, reason: "overlapped by badge")])
    }

    func testARefusedLayoutFallsBackToComposition() throws {
        let h = try EngineHarness()
        let planes = FakePlanes()
        planes.refusal = "test-only refused: EINVAL"
        h.engine.overlayPlanes = planes
        let video = h.addSolidLayer("video", frame: videoFrame, color: red)
        video.prefersOverlayPlane = true
        h.settle()
        XCTAssertEqual(planes.layouts.last?.map(\.name), ["video"], "it was offered")
        XCTAssertEqual(h.compositor.pixel(x: 10, y: 10), xrgb(red))
        XCTAssertEqual(h.stats.layerPaths,
                       [LayerPathReport(layer: "video", path: .composited, reason: "test-only refused: EINVAL")])
    }

    func testOnlyAsManyLayersAsPlanesGoOnPlanes() throws {
        let (h, planes, _) = try harness()
        let second = h.addSolidLayer("image", frame: Rect(x: 40, y: 30, width: 16, height: 16), color: blue)
        second.prefersOverlayPlane = true
        h.settle()
        XCTAssertEqual(planes.shown.map(\.name), ["video"])
        XCTAssertEqual(h.compositor.pixel(x: 44, y: 34), xrgb(blue))
        XCTAssertEqual(h.stats.layerPaths, [LayerPathReport(layer: "video", path: .plane),
                                            LayerPathReport(layer: "image", path: .composited, reason: "no free plane")])
    }

    func testMovingTheLayerOffersTheNewPlaceAndRemovingItReleasesThePlane() throws {
        let (h, planes, video) = try harness()
        video.frame = Rect(x: 30, y: 20, width: 24, height: 16)
        h.settle()
        XCTAssertEqual(planes.shown.first?.frame, Rect(x: 30, y: 20, width: 24, height: 16))
        XCTAssertEqual(h.compositor.pixel(x: 10, y: 10), xrgb(grey))
        video.frame = Rect(x: 50, y: 20, width: 24, height: 16)
        h.settle()
        XCTAssertEqual(planes.shown.count, 0, "off the screen's edge: composited")
        XCTAssertEqual(h.stats.layerPaths.first?.reason, "crosses the screen edge")
        XCTAssertEqual(h.compositor.pixel(x: 60, y: 24), xrgb(red))
        video.frame = videoFrame
        h.settle()
        XCTAssertEqual(planes.shown.count, 1)
        video.removeFromParent()
        h.settle()
        XCTAssertEqual(planes.layouts.last?.count, 0, "removed: the plane is released")
        XCTAssertEqual(h.stats.layerPaths, [])
    }

    func testPlanesThatCropTakeALayerReachingPastTheScreenEdgeAndMovingItOffersTheNewPlace() throws {
        let (h, planes, video) = try harness()
        planes.crops = true
        video.frame = Rect(x: 50, y: 20, width: 24, height: 16)
        h.settle()
        XCTAssertEqual(planes.shown.first?.frame, Rect(x: 50, y: 20, width: 24, height: 16), "its part on the screen shows on the plane")
        XCTAssertEqual(h.compositor.pixel(x: 60, y: 24), xrgb(grey), "left out of the composition")
        let surface = planes.shown.first?.surface
        video.frame = Rect(x: -10, y: 20, width: 24, height: 16)
        h.settle()
        XCTAssertTrue(planes.shown.first?.surface === surface, "a move keeps the same pixels")
        XCTAssertEqual(planes.shown.first?.frame.x, -10)
        video.frame = Rect(x: 70, y: 20, width: 24, height: 16)
        h.settle()
        XCTAssertEqual(planes.shown.count, 0)
        XCTAssertEqual(h.stats.layerPaths.first?.reason, "off the screen")
    }

    func testAPlaneCropCutsTheSourceToThePartOnTheScreen() throws {
        let screen = Rect(x: 0, y: 0, width: 1920, height: 1080)
        let buffer = Size(width: 1920, height: 1080)
        let inside = try XCTUnwrap(Rect(x: 0, y: 0, width: 1920, height: 1080).planeCrop(bufferSize: buffer, screen: screen))
        XCTAssertEqual(inside.onScreen, screen)
        XCTAssertEqual([inside.source.x, inside.source.y, inside.source.width, inside.source.height], [0, 0, 1920 << 16, 1080 << 16])
        let left = try XCTUnwrap(Rect(x: -700, y: 0, width: 1920, height: 1080).planeCrop(bufferSize: buffer, screen: screen))
        XCTAssertEqual(left.onScreen, Rect(x: 0, y: 0, width: 1220, height: 1080))
        XCTAssertEqual([left.source.x, left.source.width], [700 << 16, 1220 << 16])
        let right = try XCTUnwrap(Rect(x: 1220, y: 0, width: 1920, height: 1080).planeCrop(bufferSize: buffer, screen: screen))
        XCTAssertEqual(right.onScreen, Rect(x: 1220, y: 0, width: 700, height: 1080))
        XCTAssertEqual([right.source.x, right.source.width], [0, 700 << 16])
        let scaled = try XCTUnwrap(Rect(x: -100, y: 0, width: 400, height: 200).planeCrop(bufferSize: Size(width: 200, height: 100), screen: screen))
        XCTAssertEqual([scaled.source.x, scaled.source.width, scaled.source.height], [50 << 16, 150 << 16, 100 << 16], "in buffer pixels")
        XCTAssertNil(Rect(x: 1920, y: 0, width: 100, height: 100).planeCrop(bufferSize: Size(width: 100, height: 100), screen: screen))
    }

    func testWithoutOverlayPlanesTheLayerIsCompositedAndSaysSo() throws {
        let h = try EngineHarness()
        let video = h.addSolidLayer("video", frame: videoFrame, color: red)
        video.prefersOverlayPlane = true
        h.settle()
        XCTAssertEqual(h.compositor.pixel(x: 10, y: 10), xrgb(red))
        XCTAssertEqual(h.stats.layerPaths, [LayerPathReport(layer: "video", path: .composited, reason: "no overlay planes")])
    }
}
