import Foundation
import KioskCore
#if canImport(Glibc)
import Glibc
#endif

/// `scripts/fetch-test-server` on 127.0.0.1 (KioskFetch's and the daemon's data source tests): files from a folder with ETags and 304s, and paths that misbehave
/// (slow, truncated, 500, endless, gzip bomb, wrong Content-Type, redirects). Started by the test; one test thread.
public final class FaultServer {
    public let directory: URL
    public let port: Int
    private var process: RunningProcess?

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/fetch-test-server").path

    public init(_ name: String) throws {
        directory = try KioskdProcess.scratchDirectory("fetch-\(name)")
        port = try LoopbackPort.free()
        process = try RunningProcess(path: "/usr/bin/python3", arguments: [Self.script, "\(port)", directory.path])
        try Poll.until("fetch-test-server listening on \(port)") { self.log.contains("LISTENING") }
    }

    deinit { stop() }

    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    public func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: directory.appendingPathComponent(name))
    }

    /// What the server logged: `REQUEST <path> <status>` and `SENT <path> <bytes>` lines.
    public var log: String { process?.stderrSoFar ?? "" }

    public func requests(_ path: String, status: Int) -> Int {
        log.split(separator: "\n").filter { $0 == "REQUEST \(path) \(status)" }.count
    }

    /// Bytes the server wrote on `path` before the client hung up, once it noticed.
    public func sent(_ path: String) -> Int? {
        log.split(separator: "\n").last { $0.hasPrefix("SENT \(path) ") }.flatMap { Int($0.split(separator: " ")[2]) }
    }

    public func stop() {
        guard let process else { return }
        process.signal(SIGTERM)
        _ = process.finish(timeout: 10)
        self.process = nil
    }
}
