#if canImport(Glibc)
import Glibc
#endif
import CCairo
import KioskCore
import KioskRender

/// Golden-image checks: a rendered image compared with a reference PNG kept in the source tree, within a stated
/// tolerance. Test code on any thread; every call works on its own files and buffers. XCTest-free, so every test
/// target can wrap it in its own assertion.
///
/// On a mismatch the actual image, the expected one and a diff (differing pixels red over a dimmed copy of the
/// expected image) are written to a fresh directory under $TMPDIR, and the failure message gives their paths.
/// With `KIOSKD_RECORD_GOLDEN=1` in the environment the actual image is written as the new golden instead, and the
/// check still fails, so a recording run never passes by accident.
public enum GoldenImage {
    /// The outcome of one check. A plain value.
    public struct Result: Sendable, CustomStringConvertible {
        public var passed: Bool
        /// Why it failed (with the paths of what was written), or how close it came.
        public var message: String
        /// The comparison, when both images had the same size.
        public var diff: ImageDiff?
        /// Where the actual, expected and diff images were written after a failure.
        public var artifactDirectory: String?

        public var description: String { message }
    }

    /// The environment variable that switches to recording.
    public static let recordVariable = "KIOSKD_RECORD_GOLDEN"

    public static var isRecording: Bool { getenv(recordVariable).map { String(cString: $0) == "1" } ?? false }

    /// Compares XRGB8888 `pixels` (rows of `stride` bytes) with the golden PNG at `goldenPath`. Passes when at most
    /// `maxDifferingPixelsFraction` of the pixels have a colour channel differing by more than `tolerance`.
    public static func check(
        xrgb8888 pixels: [UInt8], size: Size, stride: Int, goldenPath: String, tolerance: UInt8,
        maxDifferingPixelsFraction: Double, record: Bool = GoldenImage.isRecording
    ) -> Result {
        let name = baseName(goldenPath)
        if record {
            do {
                try makeDirectories(directoryName(goldenPath))
                try writePNG(xrgb8888: pixels, size: size, stride: stride, to: goldenPath)
                return Result(passed: false, message: "golden \(name): recorded \(goldenPath) (\(size)); check it by "
                    + "eye and run again without \(recordVariable)=1", diff: nil, artifactDirectory: nil)
            } catch {
                return Result(passed: false, message: "golden \(name): cannot record: \(error)", diff: nil,
                              artifactDirectory: nil)
            }
        }
        guard access(goldenPath, F_OK) == 0 else {
            let written = writeArtifacts(name: name, actual: (pixels, size, stride), expected: nil, tolerance: tolerance)
            return Result(passed: false, message: "golden \(name): no golden at \(goldenPath); record it with "
                + "\(recordVariable)=1. \(written.summary)", diff: nil, artifactDirectory: written.directory)
        }
        let expected: (pixels: [UInt8], size: Size, stride: Int)
        do {
            expected = try readPNG(path: goldenPath)
        } catch {
            return Result(passed: false, message: "golden \(name): \(error)", diff: nil, artifactDirectory: nil)
        }
        guard expected.size == size else {
            let written = writeArtifacts(name: name, actual: (pixels, size, stride), expected: expected,
                                         tolerance: tolerance)
            return Result(passed: false, message: "golden \(name): actual image is \(size), golden \(goldenPath) is "
                + "\(expected.size). \(written.summary)", diff: nil, artifactDirectory: written.directory)
        }
        let diff = compareImages(pixels, expected.pixels, size: size, strideA: stride, strideB: expected.stride,
                                 tolerance: tolerance)
        let total = size.width * size.height
        let allowed = Int((Double(total) * max(maxDifferingPixelsFraction, 0)).rounded(.down))
        let verdict = "\(diff.differingPixels) of \(total) pixels differ by more than \(tolerance) "
            + "(at most \(allowed) allowed); max channel delta \(diff.maxChannelDelta)"
            + (diff.firstDifference.map { ", first at (\($0.x), \($0.y))" } ?? "")
        guard diff.differingPixels <= allowed else {
            let written = writeArtifacts(name: name, actual: (pixels, size, stride), expected: expected,
                                         tolerance: tolerance)
            return Result(passed: false, message: "golden \(name): \(verdict). \(written.summary)", diff: diff,
                          artifactDirectory: written.directory)
        }
        return Result(passed: true, message: "golden \(name): \(verdict)", diff: diff, artifactDirectory: nil)
    }

    /// A layer's premultiplied ARGB pixels composited over a checkerboard of two greys (8 px squares), as XRGB8888
    /// rows of `width * 4` bytes: the form layer goldens are stored and compared in. The checkerboard keeps
    /// transparency visible in the PNG and makes a change of alpha show up as a change of colour.
    public static func flattened(_ surface: LayerSurface) -> [UInt8] {
        let width = surface.size.width, height = surface.size.height
        var out = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let pixel = surface.pixel(x: x, y: y)
                let background: UInt32 = ((x / 8 + y / 8) % 2 == 0) ? 0x66 : 0x99
                let inverseAlpha = 255 - (pixel >> 24)
                let index = (y * width + x) * 4
                for channel in 0..<3 {
                    let source = (pixel >> (8 * UInt32(channel))) & 0xFF
                    // Premultiplied OVER: source + (1 - alpha) * background, rounded.
                    let value = source + (inverseAlpha * background + 127) / 255
                    out[index + channel] = UInt8(min(value, 255))
                }
            }
        }
        return out
    }

    /// Writes actual.png, expected.png (when given) and diff.png to a new directory; a summary naming them.
    private static func writeArtifacts(
        name: String, actual: (pixels: [UInt8], size: Size, stride: Int),
        expected: (pixels: [UInt8], size: Size, stride: Int)?, tolerance: UInt8
    ) -> (directory: String?, summary: String) {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/kioskd-golden-\(name)-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else {
            return (nil, "(could not create a directory for the images: \(errnoDescription(errno)))")
        }
        let directory = String(cString: created)
        var written: [String] = []
        var problems: [String] = []
        func attempt(_ file: String, _ body: (String) throws -> Void) {
            let path = "\(directory)/\(file)"
            do { try body(path); written.append(path) } catch { problems.append("\(error)") }
        }
        attempt("actual.png") { try writePNG(xrgb8888: actual.pixels, size: actual.size, stride: actual.stride, to: $0) }
        if let expected {
            attempt("expected.png") {
                try writePNG(xrgb8888: expected.pixels, size: expected.size, stride: expected.stride, to: $0)
            }
            if expected.size == actual.size {
                let diff = diffImage(actual: actual, expected: expected, tolerance: tolerance)
                attempt("diff.png") {
                    try writePNG(xrgb8888: diff, size: actual.size, stride: actual.size.width * 4, to: $0)
                }
            }
        }
        let summary = "Wrote " + written.joined(separator: ", ")
            + (problems.isEmpty ? "" : "; failed: " + problems.joined(separator: "; "))
        return (directory, summary)
    }

    /// Differing pixels in red over the expected image at a quarter of its brightness.
    private static func diffImage(
        actual: (pixels: [UInt8], size: Size, stride: Int), expected: (pixels: [UInt8], size: Size, stride: Int),
        tolerance: UInt8
    ) -> [UInt8] {
        let width = actual.size.width
        var out = [UInt8](repeating: 0, count: width * actual.size.height * 4)
        for y in 0..<actual.size.height {
            for x in 0..<width {
                let a = y * actual.stride + x * 4, e = y * expected.stride + x * 4, o = (y * width + x) * 4
                var delta: UInt8 = 0
                for channel in 0..<3 {
                    let p = actual.pixels[a + channel], q = expected.pixels[e + channel]
                    delta = max(delta, p > q ? p - q : q - p)
                }
                if delta > tolerance {
                    out[o + 2] = 255
                } else {
                    for channel in 0..<3 { out[o + channel] = expected.pixels[e + channel] / 4 }
                }
            }
        }
        return out
    }

    private static func makeDirectories(_ path: String) throws {
        guard !path.isEmpty, access(path, F_OK) != 0 else { return }
        try makeDirectories(directoryName(path))
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw RenderError("golden directory \(path): mkdir failed: \(errnoDescription(errno))")
        }
    }

    private static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return String(path[..<slash])
    }

    private static func baseName(_ path: String) -> String {
        let file = path.split(separator: "/").last.map(String.init) ?? path
        return file.hasSuffix(".png") ? String(file.dropLast(4)) : file
    }
}
