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
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, process.process.isRunning {
            if (try? kioskctl(["ping"]))?.status == 0 { return process }
            usleep(50_000)
        }
        let result = process.finish(timeout: 5)
        daemon = nil
        throw XCTSkip("kioskd did not answer on \(socketPath): status \(result.status) \(result.stderr)")
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
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    private func stats() throws -> JSONValue {
        let result = try kioskctl(["stats", "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        return try JSONDecoder().decode(JSONValue.self, from: Data(result.stdout.utf8))["result"] ?? .null
    }

    func testPingStatsAndDisplayInfo() throws {
        _ = try startDaemon()
        let ping = try kioskctl(["ping"])
        XCTAssertEqual(ping.status, 0)
        XCTAssertEqual(ping.stdout, "pong\n")

        let first = try stats()["frames_flipped"]?.intValue ?? -1
        usleep(300_000)
        let second = try stats()["frames_flipped"]?.intValue ?? -1
        XCTAssertGreaterThan(first, 0)
        XCTAssertGreaterThan(second, first, "frames keep flipping between two calls")
        XCTAssertNotNil(try stats()["missed_vblanks"])

        let info = try kioskctl(["display-info", "--json"])
        XCTAssertEqual(info.status, 0, info.stderr)
        let reply = try JSONDecoder().decode(JSONValue.self, from: Data(info.stdout.utf8))
        XCTAssertEqual(reply["result"]?["mode"]?["width"], 320)
        XCTAssertEqual(reply["result"]?["buffers"], 2)
        XCTAssertNotNil(reply["result"]?["commit_api"]?.stringValue)

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
        XCTAssertTrue(unknown.stdout.contains("unknown_command"), unknown.stdout)

        let badLevel = try kioskctl(["raw", #"{"id": 2, "cmd": "log.level", "args": {"level": 3}}"#])
        XCTAssertEqual(badLevel.status, 1)
        XCTAssertTrue(badLevel.stdout.contains("invalid_argument"), badLevel.stdout)

        let level = try kioskctl(["raw", #"{"id": 3, "cmd": "log.level", "args": {"level": "debug"}}"#])
        XCTAssertEqual(level.status, 0, level.stderr)
        XCTAssertTrue(level.stdout.contains(#""level":"debug""#), level.stdout)

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
        usleep(500_000)
        process.terminate()
        process.waitUntilExit()
        let lines = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        let events = lines.compactMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }.filter { $0["event"] == "flip" }
        XCTAssertGreaterThan(events.count, 5, "about 30 flips in half a second at 60 Hz")
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

        var answered = false
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, process.isRunning, !answered {
            answered = (try? kioskctl(["ping"]))?.status == 0
            if !answered { usleep(50_000) }
        }
        XCTAssertTrue(answered, "kioskd answered on the socket systemd (here: python) passed it")
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        var info = stat()
        XCTAssertEqual(lstat(socketPath, &info), 0, "a socket kioskd did not make is not removed by it")
    }

    /// Several clients send malformed, truncated, mutated and oversized lines with well-formed requests in
    /// between, while the daemon flips frames headless.
    func testMalformedStormLeavesTheDaemonServingAndFlipping() throws {
        let process = try startDaemon()
        let framesBefore = try stats()["frames_flipped"]?.intValue ?? 0
        let rssBefore = residentKiB(process.process.processIdentifier)
        let path = socketPath
        let clientCount = 4, linesPerClient = 2800
        let results = Lock<[(answered: Int, expected: Int, garbage: Int)]>([])

        DispatchQueue.concurrentPerform(iterations: clientCount) { clientIndex in
            var generator = SplitMix(seed: UInt64(clientIndex + 1))
            var expected = 0, answered = 0, garbage = 0
            guard let socket = try? BlockingTestSocket(path: path) else { return }
            var batch: [UInt8] = []
            var batchIds: Set<String> = []
            for n in 0..<linesPerClient {
                if n % 10 == 0 {
                    let id = "ok-\(clientIndex)-\(n)"
                    batch += Array(#"{"id": "\#(id)", "cmd": "ping"}"#.utf8) + [0x0A]
                    batchIds.insert(id)
                } else {
                    batch += malformedLine(&generator) + [0x0A]
                    garbage += 1
                }
                if batch.count > 16_000 || n == linesPerClient - 1 {
                    socket.write(batch)
                    expected += batchIds.count
                    answered += socket.readUntil(ids: batchIds)
                    batch = []
                    batchIds = []
                }
            }
            results.withLock { $0.append((answered, expected, garbage)) }
        }

        // Oversized lines, each on its own connection, which the server closes after its error reply.
        for _ in 0..<3 {
            let socket = try BlockingTestSocket(path: path)
            socket.write([UInt8](repeating: 0x7B, count: (1 << 20) + 100))
            XCTAssertTrue(socket.readAll().contains("line_too_long"))
        }

        let totals = results.withLock { $0 }
        XCTAssertEqual(totals.count, clientCount)
        for total in totals { XCTAssertEqual(total.answered, total.expected, "every well-formed request answered") }
        XCTAssertGreaterThanOrEqual(totals.map(\.garbage).reduce(0, +), 10_000)
        XCTAssertTrue(process.process.isRunning, "the daemon is still up")
        let framesAfter = try stats()["frames_flipped"]?.intValue ?? 0
        XCTAssertGreaterThan(framesAfter, framesBefore, "flips kept rising")
        let rssAfter = residentKiB(process.process.processIdentifier)
        if let rssBefore, let rssAfter {
            XCTAssertLessThan(rssAfter - rssBefore, 32 * 1024, "RSS grew by \(rssAfter - rssBefore) KiB")
        }
    }
}

private func residentKiB(_ pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
    return Int(line.split(separator: " ").dropFirst().first ?? "")
}

/// A deterministic generator so a failing storm can be replayed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// A malformed, truncated or mutated request line, never containing a newline.
func malformedLine(_ generator: inout SplitMix) -> [UInt8] {
    let seeds = [
        #"{"id": 1, "cmd": "ping"}"#, #"{"id": 2, "cmd": "subscribe", "args": {"events": ["flip"]}}"#,
        #"{"id": 3, "cmd": "log.level", "args": {"level": "info"}}"#, #"{"id": 4, "cmd": "stats"}"#,
    ]
    var bytes = Array(seeds[generator.below(seeds.count)].utf8)
    switch generator.below(6) {
    case 0: bytes = Array(bytes.prefix(generator.below(bytes.count)))  // truncated
    case 1: for _ in 0..<3 { bytes[generator.below(bytes.count)] = UInt8(truncatingIfNeeded: generator.next()) }  // mutated
    case 2: bytes = (0..<generator.below(200)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }  // noise
    case 3: bytes = Array(#"{"id": 5, "cmd": \#(generator.below(100))}"#.utf8)  // wrong cmd type
    case 4: bytes = Array(#"{"id": 6, "cmd": "subscribe", "args": {"events": [\#(generator.below(9))]}}"#.utf8)  // wrong arg type
    default: bytes = Array(#"{"id": 7, "cmd": "no.such.\#(generator.below(1000))"}"#.utf8)  // unknown command
    }
    return bytes.map { $0 == 0x0A ? 0x20 : $0 }
}

/// A blocking client for threads of the storm test. One thread each.
final class BlockingTestSocket {
    let fd: Int32
    private var framer = LineFramer(maxLineBytes: 16 << 20)

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let result = try UnixSocketAddress(path: path).connect(fd)
        guard result == 0 else { close(fd); throw SystemError("connect \(path)", errno: errno) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Reads replies until every id in `ids` has been answered (or the read times out); returns how many were.
    func readUntil(ids: Set<String>) -> Int {
        var missing = ids
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !missing.isEmpty {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            for case .line(let line) in framer.append(chunk[0..<n]) {
                if let reply = try? JSONDecoder().decode(JSONValue.self, from: Data(line)),
                   let id = reply["id"]?.stringValue, reply["ok"] == true {
                    missing.remove(id)
                }
            }
        }
        return ids.count - missing.count
    }

    /// Everything until the server closes (or the read times out).
    func readAll() -> String {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            data += chunk[0..<n]
        }
        return String(decoding: data, as: UTF8.self)
    }
}
