import Foundation
import KioskCore
import KioskRender
import KioskTestSupport
import XCTest

/// An SVG is held to `memory.max_image_pixels` as a PNG is (its own declared size, and every raster it embeds or
/// names), names files only in its folder, and is never left waiting on a FIFO; an image path that is not a regular
/// file is refused unread.
final class SVGLimitTests: XCTestCase {
    private var directory: String!
    /// A 64x32 red PNG: 2048 pixels.
    private var redPNG: [UInt8]!

    override func setUpWithError() throws {
        directory = "/tmp/kioskd-svg-limits-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory + "/sub", withIntermediateDirectories: true)
        var pixels: [UInt8] = []
        for _ in 0..<(64 * 32) { pixels += [0x00, 0x00, 0xFF, 0xFF] }  // XRGB8888 little-endian: blue, green, red, x
        redPNG = try encodePNG(xrgb8888: pixels, size: Size(width: 64, height: 32), stride: 64 * 4)
        try Data(redPNG).write(to: URL(fileURLWithPath: directory + "/red.png"))
        ImageContent.purgeCache()
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func writeSVG(_ name: String, width: Int = 8, height: Int = 8, body: String) throws -> String {
        let path = directory + "/" + name
        try Data("""
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="\(width)" height="\(height)">\(body)</svg>
            """.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    private func imageElement(_ href: String) -> String {
        #"<image xlink:href="\#(href)" x="0" y="0" width="8" height="8" preserveAspectRatio="none"/>"#
    }

    /// The centre pixel of `path` drawn 8x8 with `maxPixels`, as 0xAARRGGBB, or the error's text; within 5 s.
    private func draw(_ path: String, maxPixels: Int, file: StaticString = #filePath, line: UInt = #line) -> Result<UInt32, RenderError>? {
        let outcome = returnsPromptly { () -> Result<UInt32, RenderError> in
            do {
                let surface = try render(ImageContent(path: path, fit: .fill, maxPixels: maxPixels), size: Size(width: 8, height: 8))
                return .success(surface.pixel(x: 4, y: 4))
            } catch {
                return .failure(RenderError("\(error)"))
            }
        }
        if outcome == nil { XCTFail("drawing \(path) did not finish within 5 s", file: file, line: line) }
        return outcome
    }

    private func failure(_ outcome: Result<UInt32, RenderError>?) -> String? {
        if case .failure(let error)? = outcome { return "\(error)" }
        return nil
    }

    func testTheSizeAnSVGDeclaresObeysTheLimit() throws {
        let path = try writeSVG("big.svg", width: 100, height: 100, body: #"<rect width="100" height="100" fill="red"/>"#)
        XCTAssertEqual(failure(draw(path, maxPixels: 5000)),
                       "image \(path): SVG of 100x100 pixels is over memory.max_image_pixels (5000)")
        XCTAssertEqual(try draw(path, maxPixels: 10_000)?.get(), 0xFFFF0000)
        // A viewBox alone is in user units: the document is drawn at the size shown, whatever they are.
        let viewBox = directory + "/view-box.svg"
        try Data(#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100000 100000"><rect width="100000" height="100000" fill="red"/></svg>"#.utf8)
            .write(to: URL(fileURLWithPath: viewBox))
        XCTAssertEqual(try draw(viewBox, maxPixels: 5000)?.get(), 0xFFFF0000)
    }

    func testARasterEmbeddedAsADataURIObeysTheLimit() throws {
        let base64 = Data(redPNG).base64EncodedString()
        let path = try writeSVG("embedded.svg", body: imageElement("data:image/png;base64," + base64))
        XCTAssertEqual(failure(draw(path, maxPixels: 2000)),
                       "image \(path): embedded image (data: URI): PNG of 64x32 pixels is over memory.max_image_pixels (2000)")
        XCTAssertEqual(try draw(path, maxPixels: 2048)?.get(), 0xFFFF0000, "at the limit it is drawn")
    }

    func testARasterNamedInTheFolderObeysTheLimitAndResolvesAgainstTheFile() throws {
        let path = try writeSVG("named.svg", body: imageElement("red.png"))
        XCTAssertEqual(failure(draw(path, maxPixels: 2000)),
                       "image \(path): image 'red.png' PNG of 64x32 pixels is over memory.max_image_pixels (2000)")
        XCTAssertEqual(try draw(path, maxPixels: 2048)?.get(), 0xFFFF0000, "found beside the SVG, through the stream's base file")
    }

    func testAFileOutsideTheSVGsFolderIsNotLoaded() throws {
        // librsvg's own rule, kept by loading with the file as base: only the folder of the SVG and below.
        let relative = try writeSVG("sub/up.svg", body: #"<rect width="8" height="8" fill="lime"/>"# + imageElement("../red.png"))
        XCTAssertEqual(try draw(relative, maxPixels: 1_000_000)?.get(), 0xFF00FF00, "../red.png is not drawn over the green")
        let absolute = try writeSVG("sub/absolute.svg", body: #"<rect width="8" height="8" fill="lime"/>"# + imageElement("file://\(directory!)/red.png"))
        XCTAssertEqual(try draw(absolute, maxPixels: 1_000_000)?.get(), 0xFF00FF00, "nor is a file:// URL outside the folder")
        let inside = try writeSVG("inside.svg", body: #"<rect width="8" height="8" fill="lime"/>"# + imageElement("file://\(directory!)/red.png"))
        XCTAssertEqual(try draw(inside, maxPixels: 1_000_000)?.get(), 0xFFFF0000, "a file:// URL in the folder is")
    }

    func testAFIFOTheSVGNamesIsRefusedPromptly() throws {
        XCTAssertEqual(mkfifo(directory + "/pipe.png", 0o644), 0)
        let path = try writeSVG("pipe.svg", body: imageElement("pipe.png"))
        XCTAssertEqual(failure(draw(path, maxPixels: 1_000_000)),
                       "image \(path): reference 'pipe.png': '\(directory!)/pipe.png' is a FIFO, not a regular file")
    }

    func testAnImagePathThatIsNotARegularFileIsRefusedPromptlyNamingItsKind() throws {
        let special = try SpecialFiles("render")
        for (path, kind) in special.all {
            XCTAssertEqual(failure(draw(path, maxPixels: 1_000_000)), "image '\(path)' is \(kind), not a regular file")
        }
    }
}
