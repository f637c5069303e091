import Foundation
import Glibc
import KioskCore

/// Not product code: `kioskd bench`'s figures for one contestant of a scenario. Every figure is measured, or nil
/// (JSON null) where this contestant has no such thing to measure. A plain value; any thread.
public struct BenchFigures: Codable, Sendable {
    public var mainCPUMsPerFrame: Double?
    public var totalCPUMsPerFrame: Double?
    public var bytesWrittenPerFrame: Int?
    public var mainMsP99: Double?
    public var framesFlipped: Int?
    public var missedVblanks: Int?
    public var firstFrameMs: Double?

    enum CodingKeys: String, CodingKey {
        case mainCPUMsPerFrame = "main_cpu_ms_per_frame", totalCPUMsPerFrame = "total_cpu_ms_per_frame"
        case bytesWrittenPerFrame = "bytes_written_per_frame", mainMsP99 = "main_ms_p99", framesFlipped = "frames_flipped"
        case missedVblanks = "missed_vblanks", firstFrameMs = "first_frame_ms"
    }

    /// Writes nil figures as null rather than leaving them out, so a reader sees what was not measured.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(mainCPUMsPerFrame, forKey: .mainCPUMsPerFrame)
        try c.encode(totalCPUMsPerFrame, forKey: .totalCPUMsPerFrame)
        try c.encode(bytesWrittenPerFrame, forKey: .bytesWrittenPerFrame)
        try c.encode(mainMsP99, forKey: .mainMsP99)
        try c.encode(framesFlipped, forKey: .framesFlipped)
        try c.encode(missedVblanks, forKey: .missedVblanks)
        try c.encode(firstFrameMs, forKey: .firstFrameMs)
    }
}

/// `a / b`, or nil when either is unmeasured or `b` is not positive: a ratio is never made up.
public func benchRatio(_ a: Double?, _ b: Double?) -> Double? {
    guard let a, let b, b > 0 else { return nil }
    return a / b
}

/// CPU time in milliseconds. Any thread.
public enum CPUTime {
    public static func thread() -> Double { read(CLOCK_THREAD_CPUTIME_ID) }
    public static func process() -> Double { read(CLOCK_PROCESS_CPUTIME_ID) }
    private static func read(_ clock: clockid_t) -> Double {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
    }
}

/// The bench's own scene files (`page-slide.yaml`): installed under /usr/share/kioskd/bench, or in the KioskBench
/// resource bundle next to the binary.
public enum BenchScenes {
    public static func path(_ name: String) throws -> String {
        // Installed: /usr/share/kioskd/bench/Scenes; in a build tree: the resource bundle next to the binary.
        guard let base = InstalledData.directory("bench") ?? Bundle.module.resourcePath else {
            throw BenchError("bench scene \(name): the kioskd_KioskBench resource bundle is missing next to the kioskd binary")
        }
        let path = (base as NSString).appendingPathComponent("Scenes/\(name)")
        guard FileManager.default.fileExists(atPath: path) else { throw BenchError("bench scene \(path): not found") }
        return path
    }
}

/// A bench run that could not measure what it set out to, saying what and why. Any thread.
public struct BenchError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
