import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A kiosk the tests talk to through its control socket, whether it runs as a `kioskd` child process
/// (`ControlledKioskd`) or in the test's own process (KioskAppTests' `InProcessKiosk`): the requests, replies and
/// kioskctl runs both share.
public protocol ControlClient: AnyObject {
    /// The control socket's path.
    var socketPath: String { get }
    /// The process whose memory the kiosk's is: kioskd's, or the test's own.
    var pid: Int32 { get }
    /// Whether the kiosk still runs.
    var isRunning: Bool { get }
    /// Stops the kiosk and says how it ended, for a failure's message.
    func stopAndDescribe() -> String
}

extension ControlClient {
    /// A new connection to the kiosk.
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

    /// Runs the built kioskctl against this kiosk (`--socket` added unless given); throws when it has not finished
    /// within `timeout` seconds.
    public func kioskctl(_ arguments: [String], stdin: FileHandle? = nil, timeout: Double = 60) throws -> (status: Int32, stdout: Data, stderr: String) {
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

/// A small one-shot box for a value another thread produces.
private final class OneShot<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value?
    func set(_ value: Value) { lock.withLock { stored = value } }
    var value: Value? { lock.withLock { stored } }
}
