import Foundation
import KioskCore
import KioskRender
import KioskRenderTestSupport
import XCTest

final class GoldenImageTests: XCTestCase {
    private var directory: URL!
    private let size = Size(width: 64, height: 48)

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("kiosk-golden-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: directory)
    }

    private func pixels(_ content: any LayerContent) throws -> [UInt8] {
        GoldenImage.flattened(try render(content, size: size))
    }

    private func check(_ pixels: [UInt8], golden: String, tolerance: UInt8 = 2, fraction: Double = 0,
                       record: Bool = false) -> GoldenImage.Result {
        GoldenImage.check(xrgb8888: pixels, size: size, stride: size.width * 4, goldenPath: golden,
                          tolerance: tolerance, maxDifferingPixelsFraction: fraction, record: record)
    }

    func testRecordingWritesTheGoldenButFails() throws {
        let golden = directory.appendingPathComponent("nested/card.png").path
        let image = try pixels(RectContent(color: Color(rgb: 0x3366CC), cornerRadius: 8))
        let recorded = check(image, golden: golden, record: true)
        XCTAssertFalse(recorded.passed, "a recording run never counts as passing")
        XCTAssertTrue(recorded.message.contains(": recorded \(golden) ("), recorded.message)
        XCTAssertTrue(FileManager.default.fileExists(atPath: golden))
        let read = try readPNG(path: golden)
        XCTAssertEqual(read.size, size)
    }

    func testIdenticalAndWithinTolerancePassVisiblyDifferentFailsWithArtifacts() throws {
        let golden = directory.appendingPathComponent("card.png").path
        let image = try pixels(RectContent(color: Color(rgb: 0x3366CC), cornerRadius: 8))
        _ = check(image, golden: golden, record: true)

        let identical = check(image, golden: golden)
        XCTAssertTrue(identical.passed, identical.message)
        XCTAssertEqual(identical.diff?.maxChannelDelta, 0)

        // Every pixel 2 levels brighter: within a tolerance of 2.
        let nudged = image.map { $0 <= 253 ? $0 + 2 : $0 }
        let withinTolerance = check(nudged, golden: golden, tolerance: 2)
        XCTAssertTrue(withinTolerance.passed, withinTolerance.message)
        XCTAssertFalse(check(nudged, golden: golden, tolerance: 1).passed, "but not within 1")

        // A different colour: fails, and says where to look.
        let different = try pixels(RectContent(color: Color(rgb: 0xCC3333), cornerRadius: 8))
        let failed = check(different, golden: golden, tolerance: 8, fraction: 0.01)
        XCTAssertFalse(failed.passed, failed.message)
        XCTAssertGreaterThan(try XCTUnwrap(failed.diff).differingPixels, size.width * size.height / 2)
        let artifacts = try XCTUnwrap(failed.artifactDirectory)
        defer { try? FileManager.default.removeItem(atPath: artifacts) }
        for file in ["actual.png", "expected.png", "diff.png"] {
            let path = "\(artifacts)/\(file)"
            XCTAssertTrue(failed.message.contains(path), "the message names \(path): \(failed.message)")
            XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        }
        let diff = try readPNG(path: "\(artifacts)/diff.png")
        XCTAssertEqual(rgb(diff.pixels, width: size.width, 32, 24).r, 255, "differing pixels are red in the diff")
    }

    func testAFewDifferingPixelsPassOnlyWithinTheAllowedFraction() throws {
        let golden = directory.appendingPathComponent("few.png").path
        let image = try pixels(RectContent(color: .white))
        _ = check(image, golden: golden, record: true)
        var spotted = image
        for i in 0..<3 { spotted[(i * size.width + i) * 4] = 0 }  // 3 pixels lose their blue
        XCTAssertFalse(check(spotted, golden: golden, fraction: 0).passed)
        XCTAssertTrue(check(spotted, golden: golden, fraction: 3.0 / Double(size.width * size.height)).passed)
        XCTAssertFalse(check(spotted, golden: golden, fraction: 2.0 / Double(size.width * size.height)).passed)
    }

    func testMissingGoldenAndSizeMismatchFail() throws {
        let missing = check(try pixels(RectContent(color: .white)), golden: directory.appendingPathComponent("none.png").path)
        XCTAssertFalse(missing.passed)
        XCTAssertTrue(missing.message.contains(GoldenImage.recordVariable), missing.message)
        if let artifacts = missing.artifactDirectory { try? FileManager.default.removeItem(atPath: artifacts) }

        let golden = directory.appendingPathComponent("small.png").path
        let small = [UInt8](repeating: 0x80, count: 8 * 8 * 4)
        _ = GoldenImage.check(xrgb8888: small, size: Size(width: 8, height: 8), stride: 32, goldenPath: golden,
                              tolerance: 0, maxDifferingPixelsFraction: 0, record: true)
        let mismatch = check(try pixels(RectContent(color: .white)), golden: golden)
        XCTAssertFalse(mismatch.passed)
        XCTAssertTrue(mismatch.message.contains("8x8"), mismatch.message)
        if let artifacts = mismatch.artifactDirectory { try? FileManager.default.removeItem(atPath: artifacts) }
    }

    func testFlatteningShowsAlphaOnTheCheckerboard() {
        let surface = LayerSurface(size: Size(width: 16, height: 8))  // fully transparent
        let flat = GoldenImage.flattened(surface)
        XCTAssertEqual(rgb(flat, width: 16, 0, 0).r, 0x66)
        XCTAssertEqual(rgb(flat, width: 16, 8, 0).r, 0x99)
        // Half-transparent black differs from transparent, which a plain RGB comparison of premultiplied bytes misses.
        let shaded = solidSurface(Size(width: 16, height: 8), argb: 0x8000_0000)
        XCTAssertEqual(Int(rgb(GoldenImage.flattened(shaded), width: 16, 0, 0).r), 0x66 / 2, accuracy: 1)
    }
}
