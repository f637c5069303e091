import Foundation
import KioskCore
import KioskRender
import KioskRenderTestSupport
import XCTest

/// The Golden folder beside the test file that calls (Tests/<Target>/Golden).
func goldenPath(_ name: String, file: StaticString) -> String {
    URL(fileURLWithPath: "\(file)").deletingLastPathComponent().appendingPathComponent("Golden")
        .appendingPathComponent("\(name).png").path
}

/// Asserts that `surface`, flattened over the golden checkerboard (`GoldenImage.flattened`), matches
/// Tests/<Target>/Golden/<name>.png: at most `maxDifferingPixelsFraction` of the pixels may have a channel differing
/// by more than `tolerance`. Record with KIOSKD_RECORD_GOLDEN=1 (the recording run fails on purpose).
func assertMatchesGolden(
    _ surface: LayerSurface, name: String, tolerance: UInt8, maxDifferingPixelsFraction: Double = 0,
    file: StaticString = #filePath, line: UInt = #line
) {
    assertMatchesGolden(xrgb8888: GoldenImage.flattened(surface), size: surface.size, stride: surface.size.width * 4,
                        name: name, tolerance: tolerance, maxDifferingPixelsFraction: maxDifferingPixelsFraction,
                        file: file, line: line)
}

/// As above, for XRGB8888 pixels such as a compositor snapshot or a scan-out buffer.
func assertMatchesGolden(
    xrgb8888 pixels: [UInt8], size: Size, stride: Int, name: String, tolerance: UInt8,
    maxDifferingPixelsFraction: Double = 0, file: StaticString = #filePath, line: UInt = #line
) {
    let result = GoldenImage.check(xrgb8888: pixels, size: size, stride: stride, goldenPath: goldenPath(name, file: file),
                                   tolerance: tolerance, maxDifferingPixelsFraction: maxDifferingPixelsFraction)
    XCTAssertTrue(result.passed, result.message, file: file, line: line)
}

/// The tolerances goldens in this target are checked with.
enum GoldenTolerance {
    /// Shapes, gradients, images: Cairo and pixman rasterise them the same on every machine up to rounding, so 2 levels
    /// per channel and no pixel beyond.
    static let shapes: UInt8 = 2
    /// Text: font versions and hinting move antialiased edges between machines, so a channel may differ by up to 48
    /// levels, and up to 0.04 % of pixels (9 in a 360x64 layer) may differ by more. Changing one letter ("lobby" to
    /// "lobbv") still differs in about 18 pixels, which `TextLayoutTests.testTextGoldenCatchesAWrongString` checks.
    static let text: UInt8 = 48
    static let textFraction = 0.0004
}
