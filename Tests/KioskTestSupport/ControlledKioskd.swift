import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A `kioskd run` with its control socket in a fresh short directory under /tmp (sun_path holds 108 bytes, and
/// Unix sockets cannot be made on the VM's 9p share), ready once it answers `ping`.
public final class ControlledKioskd {
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

    /// A new connection to the daemon.
    public func connect(timeoutSeconds: Int = 20) throws -> ControlTestSocket {
        try ControlTestSocket(path: socketPath, timeoutSeconds: timeoutSeconds)
    }

    /// One request on a connection of its own; the reply, or a test failure's worth of nil.
    public func request(_ json: String) throws -> [String: Any] {
        guard let reply = try connect().request(json) else { throw ControlTestError("no reply to \(json)") }
        return reply
    }

    /// The `result` of a request that must succeed.
    public func result(_ cmd: String, _ args: String = "{}") throws -> [String: Any] {
        let reply = try request(#"{"id": "r", "cmd": "\#(cmd)", "args": \#(args)}"#)
        guard reply["ok"] as? Bool == true, let result = reply["result"] as? [String: Any] else {
            throw ControlTestError("\(cmd) \(args) failed: \(reply)")
        }
        return result
    }

    /// The error `{code, message}` of a request that must fail.
    public func error(_ cmd: String, _ args: String = "{}") throws -> (code: String, message: String) {
        let reply = try request(#"{"id": "e", "cmd": "\#(cmd)", "args": \#(args)}"#)
        guard reply["ok"] as? Bool == false, let error = reply["error"] as? [String: Any],
              let code = error["code"] as? String, let message = error["message"] as? String else {
            throw ControlTestError("\(cmd) \(args) did not fail: \(reply)")
        }
        return (code, message)
    }

    /// `frames_flipped` from `stats`.
    public func framesFlipped() throws -> Int {
        guard let n = try result("stats")["frames_flipped"] as? Int else { throw ControlTestError("stats without frames_flipped") }
        return n
    }

    /// Runs the built kioskctl against this daemon (`--socket` added unless given); throws when it has not finished
    /// within `timeout` seconds.
    public func kioskctl(_ arguments: [String], stdin: FileHandle? = nil, timeout: Double = 60) throws -> (status: Int32, stdout: Data, stderr: String) {
        try KioskdProcess.kioskctl(arguments, socket: socketPath, stdin: stdin, timeout: timeout)
    }

    /// Waits for kioskd to exit by itself (`--frames N`), then the exit status and output.
    @discardableResult
    public func waitForExit(timeout: Double = 300) -> CommandResult {
        if let finished { return finished }
        let result = process.finish(timeout: timeout)
        finished = result
        try? FileManager.default.removeItem(atPath: directory)
        return result
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

extension KioskdProcess {
    /// Runs the built kioskctl against the control socket at `socket` (`--socket` added unless given); throws when it
    /// has not finished within `timeout` seconds.
    public static func kioskctl(_ arguments: [String], socket socketPath: String, stdin: FileHandle? = nil,
                                timeout: Double = 60) throws -> (status: Int32, stdout: Data, stderr: String) {
        let process = Process()
        process.executableURL = KioskdProcess.productsDirectory.appendingPathComponent("kioskctl")
        var withSocket = arguments
        if !arguments.contains("--socket") && !arguments.contains("--help") {
            // Before a `--`, after which everything is a positional argument.
            withSocket.insert(contentsOf: ["--socket", socketPath], at: arguments.firstIndex(of: "--") ?? arguments.endIndex)
        }
        process.arguments = withSocket
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = stdin ?? FileHandle.nullDevice
        try process.run()
        let deadline = ProcessDeadline(process, seconds: timeout)
        // Read both pipes while the child runs, so a large PNG on stdout cannot block it.
        let errData = OneShot<Data>()
        let errRead = DispatchSemaphore(value: 0)
        let reader = Thread {
            errData.set(err.fileHandleForReading.readDataToEndOfFile())
            errRead.signal()
        }
        reader.start()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try deadline.finish("kioskctl \(arguments.joined(separator: " "))")
        // The child has exited: its stderr ends now, unless something it started holds the pipe open.
        guard errRead.wait(timeout: .now() + 10) == .success else {
            throw ControlTestError("kioskctl \(arguments.joined(separator: " ")): its stderr stayed open after it exited")
        }
        return (process.terminationStatus, stdout, String(decoding: errData.value ?? Data(), as: UTF8.self))
    }
}

/// A value one thread sets once and another reads. Any thread.
private final class OneShot<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value?
    func set(_ value: Value) { lock.withLock { stored = value } }
    var value: Value? { lock.withLock { stored } }
}
