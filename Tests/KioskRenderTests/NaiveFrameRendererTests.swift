import Foundation
import KioskCore
import KioskRender
import XCTest

final class NaiveFrameRendererTests: XCTestCase {
    func testNaiveRendererAndCompositorDrawTheSamePicture() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-naive-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let imagePath = directory.appendingPathComponent("photo.png").path
        var photo = [UInt8](repeating: 0, count: 50 * 30 * 4)
        for y in 0..<30 { for x in 0..<50 { photo[(y * 50 + x) * 4 + 1] = UInt8(x * 5); photo[(y * 50 + x) * 4 + 2] = UInt8(y * 8) } }
        try writePNG(xrgb8888: photo, size: Size(width: 50, height: 30), stride: 200, to: imagePath)

        let size = Size(width: 320, height: 240)
        let items: [(content: any LayerContent, frame: Rect)] = [
            (RectContent(fill: .verticalGradient(top: Color(rgb: 0x1A1D26), bottom: Color(rgb: 0x07080C))), Rect(size: size)),
            (ClockContent(text: "12:34", font: "Sans Bold 40"), Rect(x: 20, y: 20, width: 200, height: 60)),
            (TextContent("A kiosk says <i>hello</i> to everyone who passes by", isMarkup: true, font: "Sans 14",
                         alignment: .center), Rect(x: 20, y: 90, width: 180, height: 60)),
            (ImageContent(path: imagePath, fit: .cover), Rect(x: 220, y: 20, width: 80, height: 80)),
            (RectContent(color: Color(rgb: 0x3050A0, alpha: 0.7), cornerRadius: 8,
                         border: RectContent.Border(width: 2, color: .white)), Rect(x: 200, y: 120, width: 100, height: 50)),
            (ProgressContent(value: 0.4), Rect(x: 20, y: 190, width: 280, height: 12)),
            (FPSOverlayContent(framesPerSecond: 60, frameMilliseconds: 1.2), Rect(x: 200, y: 210, width: 110, height: 24)),
        ]
        let background = Color(rgb: 0x000000)

        let naive = TestImage(width: 320, height: 240, fill: 0x99)
        try NaiveFrameRenderer(background: background).render(items: items, into: naive.buffer)

        let compositor = try ShadowCompositor(size: size, background: background)
        let composite = try items.map { item in
            CompositeItem(source: .surface(try render(item.content,
                                                      size: Size(width: item.frame.width, height: item.frame.height))),
                          frame: item.frame)
        }
        compositor.compose(composite, damage: [Rect(size: size)])
        let diff = naive.diff(snapshot: compositor.snapshot(), tolerance: 1)
        XCTAssertTrue(diff.matches, "\(diff)")

        // A later frame that changes one widget, composed only where it changed, still matches a full redraw.
        var changed = items
        changed[5] = (ProgressContent(value: 0.9), Rect(x: 20, y: 190, width: 280, height: 12))
        try NaiveFrameRenderer(background: background).render(items: changed, into: naive.buffer)
        var updated = composite
        updated[5].source = .surface(try render(ProgressContent(value: 0.9), size: Size(width: 280, height: 12)))
        compositor.compose(updated, damage: [Rect(x: 20, y: 190, width: 280, height: 12)])
        let second = naive.diff(snapshot: compositor.snapshot(), tolerance: 1)
        XCTAssertTrue(second.matches, "\(second)")
    }
}
