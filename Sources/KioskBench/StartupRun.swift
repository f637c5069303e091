import Foundation
import Glibc

/// Not product code: `kioskd bench`'s startup scenario. Spawns this same binary (`/proc/self/exe`) as
/// `kioskd run --backend headless --mode WxH --frames N --stats-out FILE` and reads what the child measured
/// itself (`first_frame_ms`: process start to the first flip of a fully rendered frame) and its peak RSS from
/// `wait4`'s `ru_maxrss`. Runs on the calling thread and blocks until the child exits.
public enum StartupRun {
    public struct Figures: Codable, Sendable {
        public var mode: String
        public var firstFrameMs: Double?
        public var peakRssKib: Int

        enum CodingKeys: String, CodingKey { case mode, firstFrameMs = "first_frame_ms", peakRssKib = "peak_rss_kib" }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(mode, forKey: .mode)
            try c.encode(firstFrameMs, forKey: .firstFrameMs)
            try c.encode(peakRssKib, forKey: .peakRssKib)
        }
    }

    public static func measure(mode: String, frames: Int) throws -> Figures {
        let statsPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("kioskd-bench-startup-\(getpid())-\(mode).json").path
        defer { unlink(statsPath) }
        let arguments = ["kioskd", "run", "--backend", "headless", "--mode", mode, "--frames", "\(frames)",
                         "--stats-out", statsPath, "--no-watch", "--socket", "none", "--log-level", "warning"]
        var pid: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // The child's own output is not the bench's: it would break --json.
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let status = posix_spawn(&pid, "/proc/self/exe", &actions, nil, argv, environ)
        guard status == 0 else { throw BenchError("startup \(mode): cannot spawn /proc/self/exe: \(String(cString: strerror(status)))") }
        var wstatus: Int32 = 0
        var usage = rusage()
        while wait4(pid, &wstatus, 0, &usage) < 0 {
            guard errno == EINTR else { throw BenchError("startup \(mode): wait4 for pid \(pid) failed: \(String(cString: strerror(errno)))") }
        }
        // WIFEXITED and WEXITSTATUS are macros Swift cannot import.
        guard wstatus & 0x7f == 0, (wstatus >> 8) & 0xff == 0 else {
            throw BenchError("startup \(mode): kioskd run ended with wait status \(wstatus)")
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: statsPath))
        guard let stats = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw BenchError("startup \(mode): stats file \(statsPath) is not a JSON object")
        }
        return Figures(mode: mode, firstFrameMs: stats["first_frame_ms"] as? Double, peakRssKib: Int(usage.ru_maxrss))
    }
}
