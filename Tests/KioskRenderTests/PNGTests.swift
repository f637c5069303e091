import Foundation
import KioskCore
import KioskRender
import KioskRenderTestSupport
import XCTest

final class PNGTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-png-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try FileManager.default.removeItem(at: directory)
    }

    func testWriteThenReadIsExact() throws {
        // A padded stride checks that rows, not one flat run of bytes, are written.
        let image = TestImage(width: 320, height: 200, stride: 320 * 4 + 64, fill: 0xAB)
        image.drawPattern(seed: 17)
        let path = directory.appendingPathComponent("demo.png").path
        try image.withBytes { try writePNG(xrgb8888: $0, size: image.size, stride: image.stride, to: path) }

        let read = try readPNG(path: path)
        XCTAssertEqual(read.size, image.size)
        XCTAssertEqual(read.stride, 320 * 4)
        XCTAssertEqual(read.pixels.count, 320 * 4 * 200)
        let diff = read.pixels.withUnsafeBytes { pixels in
            image.withBytes { compareImages($0, pixels, size: image.size, strideA: image.stride, strideB: read.stride, tolerance: 0) }
        }
        XCTAssertEqual(diff.differingPixels, 0, "\(diff)")
        XCTAssertEqual(diff.maxChannelDelta, 0)
    }

    func testArrayOverloadAndCanvasWriter() throws {
        let canvas = try CairoCanvas(size: Size(width: 3, height: 2))
        canvas.fill(Color(rgb: 0x336699))
        let canvasPath = directory.appendingPathComponent("canvas.png").path
        try canvas.writePNG(to: canvasPath)

        let pixels: [UInt8] = [1, 2, 3, 0, 4, 5, 6, 0]
        let arrayPath = directory.appendingPathComponent("array.png").path
        try writePNG(xrgb8888: pixels, size: Size(width: 2, height: 1), stride: 8, to: arrayPath)

        let fromCanvas = try readPNG(path: canvasPath)
        XCTAssertEqual(Array(fromCanvas.pixels[0..<3]), [0x99, 0x66, 0x33])
        let fromArray = try readPNG(path: arrayPath)
        XCTAssertTrue(compareImages(fromArray.pixels, pixels, size: Size(width: 2, height: 1),
                                    strideA: 8, strideB: 8, tolerance: 0).matches)
    }

    func testErrorsNameThePathAndCairoStatus() {
        let missingDir = directory.appendingPathComponent("no/such/dir/out.png").path
        XCTAssertThrowsError(try writePNG(xrgb8888: [UInt8](repeating: 0, count: 16), size: Size(width: 2, height: 2),
                                          stride: 8, to: missingDir)) { error in
            XCTAssertTrue("\(error)".hasPrefix("png '\(missingDir)': create ") && "\(error)".contains("ENOENT"), "\(error)")
        }
        let missingFile = directory.appendingPathComponent("absent.png").path
        XCTAssertThrowsError(try readPNG(path: missingFile)) { error in
            XCTAssertEqual("\(error)", "png \(missingFile): read failed: file not found")
        }
        let notPNG = directory.appendingPathComponent("text.png").path
        XCTAssertTrue(FileManager.default.createFile(atPath: notPNG, contents: Data("not a png".utf8)))
        XCTAssertThrowsError(try readPNG(path: notPNG)) { error in
            XCTAssertTrue("\(error)".hasPrefix("png \(notPNG): read failed: "), "\(error)")
        }
        XCTAssertThrowsError(try writePNG(xrgb8888: [UInt8](repeating: 0, count: 15), size: Size(width: 2, height: 2),
                                          stride: 8, to: missingFile)) { error in
            XCTAssertTrue("\(error)".contains("15 bytes given"), "\(error)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: missingFile))
    }
}
