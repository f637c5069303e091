import Foundation

/// Runs the built `kioskd` (or `kioskctl`) binary the way a user or systemd would, for tests of the command line.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// Non-empty stderr lines.
    public var errorLines: [String] { stderr.split(separator: "\n").map(String.init).filter { !$0.isEmpty } }
}

public enum KioskdProcess {
    /// The folder holding the built products: the test bundle sits beside them.
    public static var productsDirectory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    public static var kioskdPath: String { productsDirectory.appendingPathComponent("kioskd").path }

    /// The folder every scratch directory is in: what tests give kioskd as `--screenshot-dir`.
    public static var scratchRoot: String { productsDirectory.appendingPathComponent("test-scratch").path }

    /// A scratch directory for files a test writes; inside the build folder so it is writable in the VM too.
    public static func scratchDirectory(_ name: String) throws -> URL {
        let url = productsDirectory.appendingPathComponent("test-scratch").appendingPathComponent(name)
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Starts kioskd with `arguments`; call `finish` on the result to collect its output.
    public static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> RunningProcess {
        try RunningProcess(path: kioskdPath, arguments: arguments, environment: environment)
    }

    /// Runs kioskd to completion (killed after `timeout` seconds).
    public static func run(_ arguments: [String], timeout: Double = 120) throws -> CommandResult {
        try start(arguments).finish(timeout: timeout)
    }

    /// Parses a `--stats-out` file.
    public static func readStats(_ url: URL) throws -> [String: Any] {
        let data = try Data(contentsOf: url)
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw NSError(domain: "kioskd-tests", code: 1, userInfo: [NSLocalizedDescriptionKey: "stats file is not a JSON object"])
        }
        return object
    }
}

/// A child process whose output is collected to files (pipes could fill up and block a chatty child).
public final class RunningProcess {
    public let process = Process()
    private let outURL: URL
    private let errURL: URL

    public init(path: String, arguments: [String], environment: [String: String] = [:]) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        outURL = dir.appendingPathComponent("stdout")
        errURL = dir.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        process.standardInput = FileHandle.nullDevice
        exited.enter()
        process.terminationHandler = { [exited] _ in exited.leave() }
        try process.run()
    }

    /// Left when the child exits: `finish` waits on it with a deadline.
    private let exited = DispatchGroup()

    public func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

    /// What the process has written to stderr so far, while it runs.
    public var stderrSoFar: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    /// Waits for exit (SIGKILL after `timeout` seconds) and returns status and output.
    public func finish(timeout: Double = 120) -> CommandResult {
        if exited.wait(timeout: .now() + timeout) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        process.waitUntilExit()
        let out = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
        let err = (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: outURL.deletingLastPathComponent())
        return CommandResult(status: process.terminationStatus, stdout: out, stderr: err)
    }
}
