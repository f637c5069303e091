import Foundation
import Glibc
import KioskControl
import KioskCore
import KioskTestSupport
import XCTest

/// kioskd run headless with a control socket, driven by the built kioskctl and by raw socket clients.
final class KioskctlEndToEndTests: XCTestCase {
    private var directory = ""
    private var socketPath: String { directory + "/control.sock" }
    private var daemon: RunningProcess?

    override func setUpWithError() throws {
        directory = try makeSocketDirectory()
    }

    override func tearDownWithError() throws {
        if let daemon {
            daemon.signal(SIGTERM)
            _ = daemon.finish(timeout: 10)
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func startDaemon() throws -> RunningProcess {
        let process = try KioskdProcess.start(["run", "--backend", "headless", "--mode", "320x240@60", "--socket", socketPath])
        daemon = process
        // No event can say the socket is up: poll until kioskctl's ping is answered.
        var answered = false
        try? Poll.until("kioskd to answer kioskctl ping", timeout: 30, interval: 0.05) {
            answered = process.process.isRunning ? (try? kioskctl(["ping"]))?.status == 0 : false
            return answered || !process.process.isRunning
        }
        if answered { return process }
        let result = process.finish(timeout: 5)
        daemon = nil
        throw SystemError("kioskd did not answer on \(socketPath): status \(result.status) \(result.stderr)")
    }

    private func kioskctl(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = KioskdProcess.productsDirectory.appendingPathComponent("kioskctl")
        process.arguments = arguments.first.map { ["help", "--help"].contains($0) } == true ? arguments : arguments + (arguments.contains("--socket") ? [] : ["--socket", socketPath])
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let deadline = ProcessDeadline(process, seconds: 60)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try deadline.finish("kioskctl \(arguments.joined(separator: " "))")
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    private func stats() throws -> JSONValue {
        let result = try kioskctl(["stats", "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return try JSONDecoder().decode(JSONValue.self, from: Data(result.stdout.utf8))["result"] ?? .null
    }

    func testPingStatsAndOutputInfo() throws {
        _ = try startDaemon()
        let ping = try kioskctl(["ping"])
        XCTAssertEqual(ping.status, 0)
        XCTAssertEqual(ping.stdout, "pong\n")

        let first = try stats()["frames_flipped"]?.intValue ?? -1
        try ControlEventStream(socketPath: socketPath, events: ["flip"]).waitFor(2, events: "flip", timeout: 10)
        let second = try stats()["frames_flipped"]?.intValue ?? -1
        XCTAssertGreaterThan(first, 0)
        XCTAssertGreaterThan(second, first, "frames keep flipping between two calls")
        XCTAssertNotNil(try stats()["missed_vblanks"])

        // `display-info` is `output-info`'s older name, kept for scripts written before.
        for name in ["output-info", "display-info"] {
            let info = try kioskctl([name, "--json"])
            XCTAssertEqual(info.status, 0, "\(name): \(info.stderr)")
            let reply = try JSONDecoder().decode(JSONValue.self, from: Data(info.stdout.utf8))
            XCTAssertEqual(reply["result"]?["mode"]?["width"], 320, name)
            XCTAssertEqual(reply["result"]?["buffers"], 2, name)
            XCTAssertNotNil(reply["result"]?["commit_api"]?.stringValue, name)
        }

        let human = try kioskctl(["version"])
        XCTAssertEqual(human.status, 0, human.stderr)
        XCTAssertTrue(human.stdout.contains("version: "), human.stdout)
    }

    func testExitStatuses() throws {
        let missing = try kioskctl(["ping", "--socket", directory + "/absent.sock"])
        XCTAssertEqual(missing.status, 3, "cannot connect")
        XCTAssertTrue(missing.stderr.contains("absent.sock"), missing.stderr)

        let usage = try kioskctl(["frobnicate"])
        XCTAssertEqual(usage.status, 2, "usage error")

        let help = try kioskctl(["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("3  cannot connect"), help.stdout)

        _ = try startDaemon()
        let unknown = try kioskctl(["raw", #"{"id": 1, "cmd": "frobnicate"}"#])
        XCTAssertEqual(unknown.status, 1, "error reply")
        XCTAssertEqual(unknown.stdout, #"{"error":{"code":"unknown_command","message":"unknown command 'frobnicate'"},"id":1,"ok":false}"# + "\n")

        let badLevel = try kioskctl(["raw", #"{"id": 2, "cmd": "log.level", "args": {"level": 3}}"#])
        XCTAssertEqual(badLevel.status, 1)
        XCTAssertEqual(badLevel.stdout, #"{"error":{"code":"invalid_argument","message":"log.level: 'level' must be a string, got number"},"id":2,"ok":false}"# + "\n")

        let level = try kioskctl(["raw", #"{"id": 3, "cmd": "log.level", "args": {"level": "debug"}}"#])
        XCTAssertEqual(level.status, 0, level.stderr)
        XCTAssertEqual(level.stdout, #"{"id":3,"ok":true,"result":{"level":"debug"}}"# + "\n")

        let viaEnvironment = try kioskctl(["ping", "--socket", socketPath], environment: ["KIOSKD_SOCKET": "/nonexistent"])
        XCTAssertEqual(viaEnvironment.status, 0, "--socket wins over KIOSKD_SOCKET")
    }

    func testWatchStreamsFlipEvents() throws {
        _ = try startDaemon()
        let process = Process()
        process.executableURL = KioskdProcess.productsDirectory.appendingPathComponent("kioskctl")
        process.arguments = ["watch", "flip", "--socket", socketPath]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let deadline = ProcessDeadline(process, seconds: 30)
        defer { process.terminate(); process.waitUntilExit(); deadline.cancel() }
        let lines = try PipeLineReader(out).waitForLines(6, "flip event lines", timeout: 10) { $0.contains(#""event":"flip""#) }
        let events = lines.compactMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }.filter { $0["event"] == "flip" }
        XCTAssertEqual(events.count, 6, "each line is one JSON flip event: \(lines)")
        let sequences = events.compactMap { $0["data"]?["sequence"]?.intValue }
        XCTAssertEqual(sequences, sequences.sorted(), "flip sequences rise")
        XCTAssertNotNil(events.first?["data"]?["timestamp_ns"]?.intValue)
    }

    /// systemd socket activation: the listening socket arrives as fd 3 with LISTEN_PID / LISTEN_FDS, and
    /// kioskd serves it instead of binding its own (binding would fail: the path is taken by a live socket).
    func testSocketActivationServesTheInheritedSocket() throws {
        let script = """
        import os, socket, sys
        path, kioskd = sys.argv[1], sys.argv[2]
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        s.listen(16)
        if s.fileno() != 3:
            os.dup2(s.fileno(), 3)
        os.set_inheritable(3, True)
        os.environ["LISTEN_PID"] = str(os.getpid())
        os.environ["LISTEN_FDS"] = "1"
        os.execv(kioskd, [kioskd, "run", "--backend", "headless", "--mode", "320x240@60", "--socket", path])
        """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, socketPath, KioskdProcess.kioskdPath]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) }; process.waitUntilExit() }

        // No event can say the socket is served: poll until kioskctl's ping is answered.
        var answered = false
        try? Poll.until("kioskd to answer on the inherited socket", timeout: 30, interval: 0.05) {
            answered = process.isRunning ? (try? kioskctl(["ping"]))?.status == 0 : false
            return answered || !process.isRunning
        }
        XCTAssertTrue(answered, "kioskd answered on the socket systemd (here: python) passed it")
        let deadline = ProcessDeadline(process, seconds: 30)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        try deadline.finish("kioskd after SIGTERM")
        XCTAssertEqual(process.terminationStatus, 0)
        var info = stat()
        XCTAssertEqual(lstat(socketPath, &info), 0, "a socket kioskd did not make is not removed by it")
    }
}
