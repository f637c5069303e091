import Foundation
import Glibc

/// Not product code: `kioskd bench`'s startup scenario. Spawns this same binary (`/proc/self/exe`) as
/// `kioskd run --backend headless --mode WxH --frames N --stats-out FILE` and reads what the child measured
/// itself: `first_frame_ms` (process start to the first flip of a fully rendered frame) and its memory at exit from
/// procfs (`VmHWM` for the peak; private anonymous, file-backed and private dirty pages). `wait4`'s `ru_maxrss`
/// is not used: the child is spawned from this process's address space, and its high-water mark keeps this
/// process's size across the exec. Runs on the calling thread and blocks until the child exits.
public enum StartupRun {
    public struct Figures: Codable, Sendable {
        public var mode: String
        public var firstFrameMs: Double?
        public var peakRssKib: Int?
        public var rssAnonKib: Int?
        public var rssFileKib: Int?
        public var privateDirtyKib: Int?

        enum CodingKeys: String, CodingKey {
            case mode, firstFrameMs = "first_frame_ms", peakRssKib = "peak_rss_kib", rssAnonKib = "rss_anon_kib"
            case rssFileKib = "rss_file_kib", privateDirtyKib = "private_dirty_kib"
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(mode, forKey: .mode)
            try c.encode(firstFrameMs, forKey: .firstFrameMs)
            try c.encode(peakRssKib, forKey: .peakRssKib)
            try c.encode(rssAnonKib, forKey: .rssAnonKib)
            try c.encode(rssFileKib, forKey: .rssFileKib)
            try c.encode(privateDirtyKib, forKey: .privateDirtyKib)
        }

        init(mode: String, stats: [String: Any]) {
            self.mode = mode
            firstFrameMs = stats["first_frame_ms"] as? Double
            let memory = stats["memory"] as? [String: Any] ?? [:]
            peakRssKib = memory["peak_rss_kib"] as? Int
            rssAnonKib = memory["rss_anon_kib"] as? Int
            rssFileKib = memory["rss_file_kib"] as? Int
            privateDirtyKib = memory["private_dirty_kib"] as? Int
        }
    }

    /// The default scene at `mode`.
    public static func measure(mode: String, frames: Int) throws -> Figures {
        Figures(mode: mode, stats: try run(label: "startup \(mode)", mode: mode, frames: frames, extra: []))
    }

    /// `kioskd run --backend headless --mode MODE --frames N` with `extra` arguments; returns the child's stats file.
    public static func run(label: String, mode: String, frames: Int, extra: [String]) throws -> [String: Any] {
        let statsPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("kioskd-bench-\(getpid())-\(UUID().uuidString).json").path
        defer { unlink(statsPath) }
        let arguments = ["kioskd", "run", "--backend", "headless", "--mode", mode, "--frames", "\(frames)",
                         "--stats-out", statsPath, "--no-watch", "--socket", "none", "--log-level", "warning"] + extra
        // A binary linked moments ago has dirty pages in the page cache, and smaps counts their mappings as private
        // dirty until they are written back (measured: 15 MB of the text of a fresh release build): write it first.
        let executable = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)
        if executable >= 0 { fsync(executable); close(executable) }
        // The child's own output is not the bench's: it would break --json. Its errors go on to the bench's.
        try Spawned(label: label, executable: "/proc/self/exe", arguments: arguments, keepingStderr: true).wait()
        let data = try Data(contentsOf: URL(fileURLWithPath: statsPath))
        guard let stats = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw BenchError("\(label): stats file \(statsPath) is not a JSON object")
        }
        return stats
    }
}
