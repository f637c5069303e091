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

    func testWithoutOverlayPlanesTheLayerIsCompositedAndSaysSo() throws {
        let h = try EngineHarness()
        let video = h.addSolidLayer("video", frame: videoFrame, color: red)
        video.prefersOverlayPlane = true
        h.settle()
        XCTAssertEqual(h.compositor.pixel(x: 10, y: 10), xrgb(red))
        XCTAssertEqual(h.stats.layerPaths, [LayerPathReport(layer: "video", path: .composited, reason: "no overlay planes")])
    }
}
