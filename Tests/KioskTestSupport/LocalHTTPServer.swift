import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Python's `http.server` serving one folder on 127.0.0.1, at a port chosen when this is made and listened on only
/// once `start()` is called: a URL can be handed out while nothing answers there yet, as for a kiosk that boots
/// before its network or its server. Its request log (stderr) says what was fetched. One test thread.
public final class LocalHTTPServer {
    public let directory: String
    public let port: Int
    private var process: RunningProcess?

    public init(directory: String) throws {
        self.directory = directory
        port = try LoopbackPort.free()
    }

    deinit { stop() }

    public func url(_ name: String) -> String { "http://127.0.0.1:\(port)/\(name)" }

    public func start() throws {
        process = try RunningProcess(path: "/usr/bin/python3",
                                     arguments: ["-m", "http.server", "\(port)", "--bind", "127.0.0.1", "--directory", directory])
    }

    /// The request lines logged so far (`"GET /clip.webm HTTP/1.1" 200 -`).
    public var requestLog: String { process?.stderrSoFar ?? "" }

    public func stop() {
        guard let process else { return }
        process.signal(SIGTERM)
        _ = process.finish(timeout: 10)
        self.process = nil
    }
}
