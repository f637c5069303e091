import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads a child process's output pipe line by line with a deadline, for tests that wait on what a streaming
/// command prints (`kioskctl watch`) instead of sleeping and counting afterwards. One thread.
public final class PipeLineReader {
    private let fd: Int32
    private var buffer: [UInt8] = []
    public private(set) var ended = false

    /// Reads the pipe's reading end; the pipe must outlive this reader.
    public init(_ pipe: Pipe) {
        fd = pipe.fileHandleForReading.fileDescriptor
    }

    /// The next line (without its newline), or nil at end of output or once `deadline` has passed. A deadline that
    /// has passed still takes a line that has arrived, without waiting.
    public func nextLine(deadline: Date) -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeFirst(newline + 1)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard !ended else { return nil }
            var events = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&events, 1, remaining > 0 ? Int32(min(remaining * 1000, 60_000).rounded(.up)) : 0)
            if ready <= 0 {
                if remaining <= 0 { return nil }
                continue
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { ended = true; continue }
            buffer += chunk[0..<n]
        }
    }

    /// Reads lines until `count` satisfy `predicate` and returns those. Throws when `timeout` seconds pass or the
    /// output ends first, saying what was awaited and the last lines seen.
    @discardableResult
    public func waitForLines(_ count: Int, _ awaited: String, timeout: Double = 20, where predicate: (String) -> Bool) throws -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        var matched: [String] = [], recent: [String] = []
        while matched.count < count {
            guard let line = nextLine(deadline: deadline) else {
                let why = ended ? "the output ended" : "\(timeout) s passed"
                throw ControlTestError("waited for \(count) × \(awaited) but \(why) after \(matched.count); last lines: \(recent)")
            }
            recent = Array((recent + [line]).suffix(3))
            if predicate(line) { matched.append(line) }
        }
        return matched
    }
}
