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

    /// Whether it speaks HTTPS.
    public let tls: Bool

    /// - Parameter certificate: a certificate and its key (PEM files) to speak HTTPS with; plain HTTP without.
    public init(_ name: String, certificate: (certificate: String, key: String)? = nil) throws {
        directory = try KioskdProcess.scratchDirectory("fetch-\(name)")
        port = try LoopbackPort.free()
        tls = certificate != nil
        process = try RunningProcess(path: "/usr/bin/python3", arguments: [Self.script, "\(port)", directory.path]
                                     + (certificate.map { [$0.certificate, $0.key] } ?? []))
        try Poll.until("fetch-test-server listening on \(port)") { self.log.contains("LISTENING") }
    }

    deinit { stop() }

    public func url(_ path: String) -> String { "\(tls ? "https" : "http")://127.0.0.1:\(port)\(path)" }

    /// A test CA (`ca.pem`) and two certificates it signed, each with its key: `good` for 127.0.0.1, `wrong` for
    /// another name; made with openssl(1) in `directory`.
    public static func makeCertificates(in directory: URL) throws -> (ca: String, good: (certificate: String, key: String),
                                                                     wrong: (certificate: String, key: String)) {
        let d = directory.path
        let script = """
        set -e
        cd '\(d)'
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=kioskd-test-ca
        for name in good wrong; do
          if [ $name = good ]; then san=IP:127.0.0.1; else san=DNS:wrong.example; fi
          openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout $name.key -out $name.csr -subj /CN=$name
          printf 'subjectAltName=%s\n' $san > $name.ext
          openssl x509 -req -in $name.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out $name.pem -days 2 -extfile $name.ext
        done
        """
        let result = try RunningProcess(path: "/bin/sh", arguments: ["-c", script]).finish(timeout: 30)
        guard result.status == 0 else { throw ControlTestError("openssl could not make the test certificates: \(result.stderr)") }
        return ("\(d)/ca.pem", ("\(d)/good.pem", "\(d)/good.key"), ("\(d)/wrong.pem", "\(d)/wrong.key"))
    }

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
