import KioskCore
import KioskRenderTestSupport
import KioskRuntime
import KioskScene
import XCTest

/// A slide composes each page flattened into one surface, by whole pixels, written straight into the scanout buffer
/// (and moves them on overlay planes where the output has two), and no background is painted under the opaque
/// pages. At sample frames the screen shows the same pixels, within rounding, as the two pages composited widget by
/// widget at the same place (the reference, a second stage whose pages are set by hand and never flattened).
///
/// A fade is a cross-fade of the two pages as they look: at each sample, per pixel, the first page alone times
/// 1 − t plus the second alone times t (the second page's opacity), within rounding. That is what a viewer of
/// signage expects, and not what fading each widget on its own shows: there the second page's translucent box lets
/// its own gradient show through it, the first page too, and the box is checked to look different from that.
final class PageTransitionPixelTests: XCTestCase {
    static let size = Size(width: 320, height: 180)

    static let scene = """
        size: display
        background: black
        font: {family: Sans, size: 24}
        pages:
          - name: first
            widgets:
              - {type: rect, x: 0, y: 0, width: 100%, height: 100%, background: {gradient: ["#ff7a18", "#af002d"], angle: 30}}
              - {type: text, text: "<b>First</b>", markup: true, align: center, x: 10%, y: 35%, width: 80%, height: 30%, foreground: white, font: {size: 40}}
          - name: second
            widgets:
              - {type: rect, x: 0, y: 0, width: 100%, height: 100%, background: {gradient: ["#319197", "#203040"], angle: 120}}
              - {type: rect, x: 20, y: 20, width: 60, height: 30, background: "#80ffffff"}
              - {type: text, text: "<b>Second</b>", markup: true, align: center, x: 10%, y: 35%, width: 80%, height: 30%, foreground: white, font: {size: 40}}
        """

    /// Takes up to two candidates, showing the part on the screen, like `DRMOverlayPlanes`; records what it shows.
    final class CroppingPlanes: OverlayPlanes {
        private(set) var shown: [OverlayCandidate] = []
        private(set) var layouts = 0
        var cropsAtScreenEdge: Bool { true }

        func assign(_ candidates: [OverlayCandidate]) -> [String?] {
            layouts += 1
            shown = Array(candidates.prefix(2))
            return candidates.indices.map { $0 < 2 ? nil : "no free plane" }
        }
    }

    private static func page(_ name: String, in h: StageHarness) throws -> Layer {
        func find(_ layer: Layer) -> Layer? {
            if layer.name == "page \(name)" { return layer }
            return layer.children.lazy.compactMap(find).first
        }
        return try XCTUnwrap(find(h.engine.rootLayer), "page \(name)")
    }

    /// The newest composition (the shadow buffer: what the next flip shows) with the planes' surfaces over it (each
    /// opaque, cut to the screen).
    private static func screen(_ h: StageHarness, planes: CroppingPlanes?) throws -> [UInt8] {
        var bytes = h.compositor.snapshot()
        for candidate in planes?.shown ?? [] {
            XCTAssertTrue(candidate.surface.isOpaque, "a page on a plane is opaque")
            let visible = candidate.frame.intersection(Rect(size: size))
            for y in visible.y..<visible.maxY {
                for x in visible.x..<visible.maxX {
                    var pixel = candidate.surface.pixel(x: x - candidate.frame.x, y: y - candidate.frame.y)
                    pixel |= 0xFF00_0000
                    withUnsafeBytes(of: pixel.littleEndian) { word in
                        for i in 0..<4 { bytes[(y * size.width + x) * 4 + i] = word[i] }
                    }
                }
            }
        }
        return bytes
    }

    /// The page `name` alone on the screen of `h` (the other hidden), then `h` as it was.
    private static func alone(_ name: String, hiding other: String, in h: StageHarness) throws -> [UInt8] {
        let shown = try page(name, in: h), hidden = try page(other, in: h)
        let was = (shown.isHidden, hidden.isHidden)
        shown.isHidden = false
        hidden.isHidden = true
        h.settle()
        defer {
            shown.isHidden = was.0
            hidden.isHidden = was.1
            h.settle()
        }
        return h.compositor.snapshot()
    }

    /// The XRGB8888 pixels of `rect` out of a screen-sized snapshot.
    private static func crop(_ bytes: [UInt8], _ rect: Rect) -> [UInt8] {
        (rect.y..<rect.maxY).flatMap { y in bytes[((y * size.width + rect.x) * 4)..<((y * size.width + rect.maxX) * 4)] }
    }

    /// Runs `transition` from the first page to the second and, at each sample, compares the screen with the
    /// reference stage showing the pages unflattened where the transition put them.
    private func assertSamplesMatch(_ transition: Transition, planes: CroppingPlanes? = nil,
                                    file: StaticString = #filePath, line: UInt = #line) throws {
        let h = try StageHarness(yaml: Self.scene, size: Self.size)
        h.engine.overlayPlanes = planes
        let reference = try StageHarness(yaml: Self.scene, size: Self.size)
        h.settle()
        reference.settle()
        let firstAlone = reference.compositor.snapshot()
        let secondAlone = try Self.alone("second", hiding: "first", in: reference)
        try h.stage.showPage("second", transition: transition)
        var elapsed = 0
        var directFrames = h.compositor.directFrames
        for sample in [250, 500, 750] {
            h.run(for: .milliseconds(sample - elapsed))
            elapsed = sample
            if planes == nil {
                // The flattened pages tile the screen, or the incoming page fades in as one group over the outgoing
                // one: either way the frames go straight into the scanout buffer.
                XCTAssertGreaterThan(h.compositor.directFrames, directFrames, "direct frames before \(sample) ms", file: file, line: line)
            }
            directFrames = h.compositor.directFrames
            let pages = try ["first", "second"].map { try Self.page($0, in: h) }
            let flattens = transition.kind != .fade
            for page in pages {
                XCTAssertEqual(page.rasterizesSubtree && page.renderedSurface != nil, flattens,
                               "\(page.name ?? "") is composed as one flattened surface at \(sample) ms: \(flattens)", file: file, line: line)
            }
            if transition.kind != .fade {
                XCTAssertEqual(pages.map { $0.transform.translateX.rounded() }, pages.map(\.transform.translateX),
                               "whole-pixel positions", file: file, line: line)
            }
            if let planes {
                XCTAssertEqual(Set(planes.shown.map(\.name)), ["page first", "page second"],
                               "both pages on planes at \(sample) ms", file: file, line: line)
            }
            for (page, copy) in zip(pages, try ["first", "second"].map { try Self.page($0, in: reference) }) {
                copy.isHidden = page.isHidden
                copy.zPosition = page.zPosition
                copy.transform = page.transform
                copy.opacity = page.opacity
            }
            reference.settle()
            XCTAssertTrue(try ["first", "second"].allSatisfy { try !Self.page($0, in: reference).rasterizesSubtree })
            let widgetByWidget = reference.compositor.snapshot()
            let stride = Self.size.width * 4
            let screen = try Self.screen(h, planes: planes)
            if transition.kind == .fade {
                let t = pages[1].opacity
                XCTAssertTrue(t > 0.05 && t < 0.95, "mid-fade at \(sample) ms: \(t)", file: file, line: line)
                let crossFade = zip(firstAlone, secondAlone).map { a, b in UInt8((Double(a) * (1 - t) + Double(b) * t).rounded()) }
                let diff = compareImages(screen, crossFade, size: Self.size, strideA: stride, strideB: stride, tolerance: 3)
                XCTAssertEqual(diff.differingPixels, 0, "cross-fade at \(sample) ms: \(diff)", file: file, line: line)
                // Inside the translucent box (20, 20, 60x30) each widget fading on its own shows differently.
                let box = Rect(x: 20, y: 20, width: 60, height: 30)
                let inBox = compareImages(Self.crop(screen, box), Self.crop(widgetByWidget, box), size: box.size,
                                          strideA: box.width * 4, strideB: box.width * 4, tolerance: 3)
                XCTAssertGreaterThan(inBox.differingPixels, box.area / 2, "the box at \(sample) ms fades with its page, not on its own",
                                     file: file, line: line)
            } else {
                let diff = compareImages(screen, widgetByWidget, size: Self.size, strideA: stride, strideB: stride, tolerance: 3)
                XCTAssertEqual(diff.differingPixels, 0, "\(transition.kind) at \(sample) ms: \(diff)", file: file, line: line)
            }
        }
        if transition.kind == .fade {
            // The outgoing page was composed in the shadow buffer before the fade: the fade's frames take it from there.
            XCTAssertGreaterThan(h.compositor.crossFadesOverShadow, 0, "fade frames over the shadow buffer", file: file, line: line)
        }
        h.run(for: .milliseconds(400))
        h.settle()
        for name in ["first", "second"] {
            XCTAssertFalse(try Self.page(name, in: h).rasterizesSubtree, "\(name) composites widget by widget again", file: file, line: line)
        }
        XCTAssertEqual(planes?.shown.count ?? 0, 0, "the planes are released after the transition", file: file, line: line)
        // The end: the second page alone, in place, exactly as the reference shows it.
        let first = try Self.page("first", in: reference), second = try Self.page("second", in: reference)
        first.isHidden = true
        for page in [first, second] {
            page.transform = .identity
            page.opacity = 1
            page.zPosition = 0
        }
        reference.settle()
        let stride = Self.size.width * 4
        let end = compareImages(h.compositor.snapshot(), reference.compositor.snapshot(), size: Self.size, strideA: stride, strideB: stride, tolerance: 0)
        XCTAssertEqual(end.differingPixels, 0, "\(transition.kind), ended: \(end)", file: file, line: line)
    }

    /// Every frame in which the pages have moved is composed as a direct frame (both flattened pages copied into
    /// the scanout buffer), none widget by widget.
    func testEveryFrameOfTheMotionIsADirectFrameOfTheFlattenedPages() throws {
        let h = try StageHarness(yaml: Self.scene, size: Self.size)
        h.settle()
        try h.stage.showPage("second", transition: Transition(kind: .slideLeft, duration: 0.5, easing: .linear))
        let pages = try ["first", "second"].map { try Self.page($0, in: h) }
        var moving = 0
        for _ in 0..<60 {
            let composed = h.compositor.composedFrames, direct = h.compositor.directFrames
            h.run(for: h.backend.info.mode.frameDuration)
            let x = pages[1].transform.translateX
            guard x > 0, x < Double(Self.size.width) else { continue }
            moving += 1
            XCTAssertTrue(pages.allSatisfy { $0.rasterizesSubtree && $0.renderedSurface != nil }, "both pages flattened at x \(x)")
            XCTAssertGreaterThan(h.compositor.composedFrames, composed, "the frame at x \(x) was composed")
            XCTAssertEqual(h.compositor.composedFrames - composed, h.compositor.directFrames - direct,
                           "every composition of the frame at x \(x) was a direct frame")
        }
        XCTAssertGreaterThan(moving, 20, "frames of a 0.5 s slide at 60 Hz")
        XCTAssertEqual(h.stage.currentPage, "second")
    }

    /// The motion waits for the pages' flattenings while they are queued, and starts without them once
    /// `flatteningWait` (100 ms) has passed: the pages then composite widget by widget.
    func testTheMotionWaitsForTheFlatteningsAtMostOneHundredMilliseconds() throws {
        let h = try StageHarness(yaml: Self.scene, size: Self.size)
        h.settle()
        h.runsQueuedJobs = false
        try h.stage.showPage("second", transition: Transition(kind: .slideLeft, duration: 1, easing: .linear))
        let incoming = try Self.page("second", in: h)
        let width = Double(Self.size.width)
        h.run(for: .milliseconds(60))
        XCTAssertTrue(incoming.rasterizesSubtree, "the flattening was asked for")
        XCTAssertNil(incoming.renderedSurface, "the flattening is still queued")
        XCTAssertEqual(incoming.transform.translateX, width, "no motion while the flattenings are queued")
        h.run(for: .milliseconds(150))
        XCTAssertNil(incoming.renderedSurface, "the flattening is still queued")
        XCTAssertLessThan(incoming.transform.translateX, width, "the motion started without the flattenings")
        h.runsQueuedJobs = true
        h.run(for: .milliseconds(100))
        XCTAssertNotNil(incoming.renderedSurface, "the flattening landed")
        h.run(for: .seconds(1))
        h.settle()
        XCTAssertEqual(h.stage.currentPage, "second")
    }

    func testSlideShowsTheSamePixelsAsThePagesCompositedWidgetByWidget() throws {
        try assertSamplesMatch(Transition(kind: .slideLeft, duration: 1, easing: .linear))
    }

    func testSlideRightShowsTheSamePixelsAsThePagesCompositedWidgetByWidget() throws {
        try assertSamplesMatch(Transition(kind: .slideRight, duration: 1, easing: .easeInOut))
    }

    func testFadeShowsACrossFadeOfTheTwoPagesAsTheyLook() throws {
        try assertSamplesMatch(Transition(kind: .fade, duration: 1, easing: .linear))
    }

    func testSlideOnTwoOverlayPlanesShowsTheSamePixels() throws {
        try assertSamplesMatch(Transition(kind: .slideLeft, duration: 1, easing: .linear), planes: CroppingPlanes())
    }
}
