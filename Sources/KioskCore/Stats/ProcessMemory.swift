#if canImport(Glibc)
import Glibc
#endif

/// This process's resident memory as the kernel counts it, in KiB: the peak (`VmHWM`), what is resident now split
/// into private anonymous memory (heap, surfaces, stacks: `RssAnon`), file-backed pages (the binary and shared
/// libraries, mostly shared with other processes: `RssFile`) and shared memory (`RssShmem`), and the private dirty
/// pages (`Private_Dirty` of smaps_rollup: what only this process can ever free). Read from procfs, which the
/// kernel answers from memory without waiting on a device. A plain value; any thread.
public struct ProcessMemory: Codable, Sendable, Equatable {
    public var peakRssKib: Int?
    public var rssKib: Int?
    public var rssAnonKib: Int?
    public var rssFileKib: Int?
    public var rssShmemKib: Int?
    public var privateDirtyKib: Int?

    enum CodingKeys: String, CodingKey {
        case peakRssKib = "peak_rss_kib", rssKib = "rss_kib", rssAnonKib = "rss_anon_kib", rssFileKib = "rss_file_kib"
        case rssShmemKib = "rss_shmem_kib", privateDirtyKib = "private_dirty_kib"
    }

    public init() {}

    /// Every figure is written, null where procfs did not give it.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(peakRssKib, forKey: .peakRssKib)
        try c.encode(rssKib, forKey: .rssKib)
        try c.encode(rssAnonKib, forKey: .rssAnonKib)
        try c.encode(rssFileKib, forKey: .rssFileKib)
        try c.encode(rssShmemKib, forKey: .rssShmemKib)
        try c.encode(privateDirtyKib, forKey: .privateDirtyKib)
    }

    /// The figures of this process now.
    public static func current() -> ProcessMemory {
        var memory = ProcessMemory()
        let status = fields(of: "/proc/self/status")
        memory.peakRssKib = status["VmHWM"]
        memory.rssKib = status["VmRSS"]
        memory.rssAnonKib = status["RssAnon"]
        memory.rssFileKib = status["RssFile"]
        memory.rssShmemKib = status["RssShmem"]
        memory.privateDirtyKib = fields(of: "/proc/self/smaps_rollup")["Private_Dirty"]
        return memory
    }

    /// `Name:   123 kB` lines of a procfs file, as KiB by name; empty when the file cannot be read.
    static func fields(of path: String) -> [String: Int] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return [:] }
        defer { close(descriptor) }
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            text += buffer[..<n]
        }
        var result: [String: Int] = [:]
        for line in String(decoding: text, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let words = parts[1].split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count == 2, words[1] == "kB", let value = Int(words[0]) else { continue }
            result[String(parts[0])] = value
        }
        return result
    }
}
