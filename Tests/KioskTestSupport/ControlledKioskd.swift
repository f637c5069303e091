import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A `kioskd run` with its control socket in a fresh short directory under /tmp (sun_path holds 108 bytes, and
/// Unix sockets cannot be made on the VM's 9p share), ready once it answers `ping`.
public final class ControlledKioskd: ControlClient {
    public let directory: String
    public let socketPath: String
    public let process: RunningProcess
    private var finished: CommandResult?

    /// Starts kioskd with `arguments` plus `--socket`; throws with kioskd's stderr when it never answers.
    public init(_ arguments: [String], environment: [String: String] = [:], readyTimeout: Double = 60) throws {
        var template = Array("/tmp/kioskd-ctl-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ControlTestError("mkdtemp: errno \(errno)") }
        directory = String(cString: made)
        socketPath = directory + "/control.sock"
        let started = try KioskdProcess.start(arguments + ["--socket", socketPath], environment: environment)
        process = started
        // No event can say the socket is up (events need a connection): poll until a ping is answered.
        var answered = false
        try? Poll.until("kioskd to answer ping on \(socketPath)", timeout: readyTimeout, interval: 0.05) { [socketPath] in
            guard started.process.isRunning else { return true }
            answered = (try? ControlTestSocket(path: socketPath, timeoutSeconds: 5))?.request(#"{"id": 0, "cmd": "ping"}"#)?["ok"] as? Bool == true
            return answered
        }
        if answered { return }
        let result = process.finish(timeout: 5)
        try? FileManager.default.removeItem(atPath: directory)
        throw ControlTestError("kioskd \(arguments.joined(separator: " ")) did not answer on \(socketPath): status \(result.status), stderr: \(result.stderr)")
    }

    deinit { _ = stop() }

    public var pid: Int32 { process.process.processIdentifier }
    public var isRunning: Bool { process.process.isRunning }

    /// Waits for kioskd to exit by itself (`--frames N`), then the exit status and output.
    @discardableResult
    public func waitForExit(timeout: Double = 300) -> CommandResult {
        if let finished { return finished }
        let result = process.finish(timeout: timeout)
        finished = result
        try? FileManager.default.removeItem(atPath: directory)
        return result
    }

    public func stopAndDescribe() -> String {
        let result = stop()
        return "kioskd exited with status \(result.status), stderr: \(result.stderr.suffix(4000))"
    }

    /// SIGTERM, then the exit status and output.
    @discardableResult
    public func stop() -> CommandResult {
        if let finished { return finished }
        process.signal(SIGTERM)
        let result = process.finish(timeout: 20)
        finished = result
        try? FileManager.default.removeItem(atPath: directory)
        return result
    }
}
