import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A deterministic generator (SplitMix64) so a failing storm or fuzz run can be replayed with its seed.
public struct SplitMix: Sendable, RandomNumberGenerator {
    var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// What a storm did and what came back.
public struct StormReport: Sendable {
    /// Malformed, mutated, truncated, binary and wrongly typed lines sent (oversized lines counted apart).
    public var malformedSent = 0
    public var oversizedSent = 0
    /// Oversized lines answered with `line_too_long` followed by the server closing the connection.
    public var oversizedRefused = 0
    /// Well-formed requests sent, and those answered with exactly the expected reply.
    public var wellFormedSent = 0
    public var wellFormedAnsweredCorrectly = 0
    /// What was wrong with the rest (first few).
    public var problems: [String] = []
    /// The most control clients kioskd reported at once (`control_clients` in `stats`, sampled).
    public var peakConnections = 0
    /// `frames_flipped` as the monitor saw it during the storm, every fifth flip.
    public var flipSamples: [Int] = []
    public var totalMessages: Int { malformedSent + oversizedSent + wellFormedSent }
}

/// Throws malformed traffic at a kioskd control socket from several threads at once, with well-formed requests
/// mixed in whose replies are checked exactly, while extra idle connections stay open.
///
/// The storm writes each batch in pieces of random size, so lines are split across writes and a well-formed
/// request arrives interleaved with garbage before and after it.
public enum ControlStorm {
    public struct Expected: Sendable {
        public var width: Int
        public var height: Int
        public init(width: Int, height: Int) { self.width = width; self.height = height }
    }

    public static func run(socketPath: String, clients: Int = 8, messagesPerClient: Int = 1500, idleConnections: Int = 32,
                           expected: Expected, seed: UInt64 = 1, replyTimeoutSeconds: Int = 20, flipGapLimit: Double = 2) -> StormReport {
        let report = ReportBox()
        var idle: [ControlTestSocket] = []
        for _ in 0..<idleConnections {
            do { idle.append(try ControlTestSocket(path: socketPath, timeoutSeconds: replyTimeoutSeconds)) } catch { report.problem("idle connection: \(error)") }
        }
        // A monitor follows the flips through the storm and asks for stats: flips must keep coming while it runs.
        let stormOver = ManagedFlag()
        let done = DispatchSemaphore(value: 0)
        Thread {
            monitor(path: socketPath, until: stormOver, report: report, flipGapLimit: flipGapLimit)
            done.signal()
        }.start()
        let clientsDone = DispatchSemaphore(value: 0)
        for index in 0..<clients {
            Thread {
                stormClient(index: index, path: socketPath, messages: messagesPerClient, expected: expected,
                            seed: seed &+ UInt64(index) &* 7919, report: report, timeout: replyTimeoutSeconds)
                clientsDone.signal()
            }.start()
        }
        // Every read and write of the storm's threads times out (the sockets' SO_RCVTIMEO and SO_SNDTIMEO, the
        // monitor's flip waits) and a thread ends at its first problem: these waits end with them.
        for _ in 0..<clients { clientsDone.wait() }
        stormOver.set()
        done.wait()
        // The idle connections were open through the storm; each must still be served.
        for (n, socket) in idle.enumerated() {
            let reply = socket.request(#"{"id": "idle-\#(n)", "cmd": "ping"}"#)
            report.record(sent: 1)
            if check(reply, id: "idle-\(n)", { ($0["result"] as? [String: Any])?["pong"] as? Bool == true }) {
                report.recordCorrect()
            } else {
                report.problem("idle connection \(n): \(String(describing: reply))")
            }
        }
        return report.value
    }

    /// Follows the `flip` events until the storm is over, sampling `stats` every fifth flip (each sample is a
    /// well-formed request too). A gap of more than `flipGapLimit` seconds between two flips is a problem: the
    /// loop must keep flipping while the storm runs.
    private static func monitor(path: String, until over: ManagedFlag, report: ReportBox, flipGapLimit: Double) {
        let flips: ControlEventStream
        do { flips = try ControlEventStream(socketPath: path, events: ["flip"]) } catch {
            report.problem("monitor: \(error)")
            return
        }
        var n = 0
        repeat {
            let id = "monitor-\(n)"
            n += 1
            let reply = try? flips.request(#"{"id": "\#(id)", "cmd": "stats"}"#)
            report.record(sent: 1)
            guard check(reply, id: id, { ($0["result"] as? [String: Any])?["frames_flipped"] is Int }),
                  let result = reply?["result"] as? [String: Any] else {
                report.problem("monitor: bad stats reply \(String(describing: reply))")
                return
            }
            report.recordCorrect()
            report.sample(flips: result["frames_flipped"] as? Int ?? 0, clients: result["control_clients"] as? Int ?? 0)
            // Flip events read while waiting for that reply came before the sample and are in its count: only
            // flips announced after it make the next sample larger.
            flips.discardPendingEvents()
            for _ in 0..<5 where !over.isSet {
                do { try flips.waitFor(1, events: "flip", timeout: flipGapLimit) } catch {
                    report.problem("monitor: no flip for \(flipGapLimit) s during the storm: \(error)")
                    return
                }
            }
        } while !over.isSet
    }

    /// One storm thread: batches of garbage with well-formed requests among them, and one oversized line on a
    /// connection of its own.
    private static func stormClient(index: Int, path: String, messages: Int, expected: Expected, seed: UInt64,
                                    report: ReportBox, timeout: Int) {
        var generator = SplitMix(seed: seed)
        oversized(index: index, path: path, generator: &generator, report: report, timeout: timeout)
        let socket: ControlTestSocket
        do { socket = try ControlTestSocket(path: path, timeoutSeconds: timeout) } catch {
            report.problem("client \(index): \(error)")
            return
        }
        var sent = 0
        var batchNumber = 0
        while sent < messages {
            var batch: [UInt8] = []
            var checks: [String: ([String: Any]) -> Bool] = [:]
            let size = min(messages - sent, 40 + generator.below(200))
            for n in 0..<size {
                // Two clients also ask for a screenshot (encoded off the loop) in the middle of their garbage.
                let screenshot = batchNumber == 3 && n == 0 && index < 2
                if n % 12 == 5 || screenshot {
                    let id = "c\(index)-b\(batchNumber)-\(n)"
                    let (line, check) = wellFormed(id: id, expected: expected, screenshot: screenshot, &generator)
                    batch += Array(line.utf8) + [0x0A]
                    checks[id] = check
                    report.record(sent: 1)
                } else {
                    batch += malformedLine(&generator) + [0x0A]
                    report.recordMalformed()
                }
            }
            sent += size
            batchNumber += 1
            // Random piece sizes: lines split across writes and arrive interleaved with what follows.
            var offset = 0
            while offset < batch.count {
                let piece = min(batch.count - offset, 1 + generator.below(4096))
                guard socket.write(Array(batch[offset..<(offset + piece)])) else {
                    report.problem("client \(index): write failed (connection closed?)")
                    return
                }
                offset += piece
            }
            var missing = checks
            while !missing.isEmpty, let reply = socket.readObject() {
                guard reply["event"] == nil, let id = reply["id"] as? String, let check = missing[id] else { continue }
                missing[id] = nil
                if check(reply) { report.recordCorrect() } else { report.problem("client \(index): wrong reply to \(id): \(reply)") }
            }
            if !missing.isEmpty {
                report.problem("client \(index): no reply to \(missing.keys.sorted().prefix(3)) (closed: \(socket.closedByPeer))")
                return
            }
        }
    }

    /// A line over 1 MiB on a connection of its own: the server answers `line_too_long` and closes.
    private static func oversized(index: Int, path: String, generator: inout SplitMix, report: ReportBox, timeout: Int) {
        guard let socket = try? ControlTestSocket(path: path, timeoutSeconds: timeout) else {
            report.problem("client \(index): cannot open the oversized connection")
            return
        }
        report.recordOversized()
        var line = Array(#"{"id": 1, "cmd": "ping", "args": {"pad": ""#.utf8)
        // Filled in place, a plain loop: a `map` over a range takes the runtime's type-metadata lock per element
        // in a debug build, and eight clients building a megabyte each that way queue on it for minutes under
        // ThreadSanitizer.
        let padding = (1 << 20) + 64 + generator.below(1 << 16)
        var letters = generator
        line += [UInt8](unsafeUninitializedCapacity: padding) { buffer, initialized in
            for i in 0..<padding { buffer[i] = 0x61 + UInt8(letters.next() % 26) }
            initialized = padding
        }
        generator = letters
        line += Array(#""}}"#.utf8) + [0x0A]
        // The server stops reading at the limit and closes; the rest of the write may fail, which is fine.
        socket.write(line)
        let text = socket.readToEnd()
        if text.contains("line_too_long") && socket.closedByPeer {
            report.recordOversizedRefused()
        } else {
            report.problem("client \(index): oversized line got \(text.prefix(200)) closed=\(socket.closedByPeer)")
        }
    }

    /// A well-formed request and the check its reply must pass. Some are errors with a known code.
    private static func wellFormed(id: String, expected: Expected, screenshot: Bool, _ generator: inout SplitMix)
        -> (String, ([String: Any]) -> Bool) {
        func result(_ reply: [String: Any]) -> [String: Any]? {
            reply["ok"] as? Bool == true ? reply["result"] as? [String: Any] : nil
        }
        func errorCode(_ reply: [String: Any]) -> String? {
            reply["ok"] as? Bool == false ? (reply["error"] as? [String: Any])?["code"] as? String : nil
        }
        if screenshot {
            return (#"{"id": "\#(id)", "cmd": "screenshot"}"#, { reply in
                guard let r = result(reply), let text = r["png_base64"] as? String, let png = Data(base64Encoded: text) else { return false }
                return r["width"] as? Int == expected.width && r["height"] as? Int == expected.height
                    && png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            })
        }
        switch generator.below(6) {
        case 0:
            return (#"{"id": "\#(id)", "cmd": "ping"}"#, { result($0)?["pong"] as? Bool == true })
        case 1:
            return (#"{"cmd": "stats", "id": "\#(id)"}"#, { (result($0)?["frames_flipped"] as? Int ?? -1) >= 0 })
        case 2:
            return (#"{"id": "\#(id)", "cmd": "display.info", "args": {}}"#, { reply in
                let mode = result(reply)?["mode"] as? [String: Any]
                return mode?["width"] as? Int == expected.width && mode?["height"] as? Int == expected.height
            })
        case 3:
            return (#"{"id": "\#(id)", "cmd": "display.power", "args": {"on": "yes"}}"#, { reply in
                errorCode(reply) == "invalid_argument" && ((reply["error"] as? [String: Any])?["message"] as? String ?? "").contains("'on'")
            })
        case 4:
            return (#"{"id": "\#(id)", "cmd": "no.such.command"}"#, { errorCode($0) == "unknown_command" })
        default:
            return (#"{"id": "\#(id)", "cmd": "log.level"}"#, { result($0)?["level"] is String })
        }
    }

    /// A line that is not a valid request, or a request with a wrong argument; never contains a newline.
    public static func malformedLine(_ generator: inout SplitMix) -> [UInt8] {
        let seeds = [
            #"{"id": 1, "cmd": "ping"}"#, #"{"id": 2, "cmd": "stats"}"#, #"{"id": 3, "cmd": "display.info"}"#,
            #"{"id": 4, "cmd": "widget.set", "args": {"id": "x", "props": {"text": "hi"}}}"#,
            #"{"id": 5, "cmd": "data.set", "args": {"values": {"a": 1, "b": "two"}}}"#,
            #"{"id": 6, "cmd": "page.show", "args": {"name": "p", "transition": {"kind": "fade", "duration": 0.4}}}"#,
        ]
        var bytes = Array(seeds[generator.below(seeds.count)].utf8)
        switch generator.below(10) {
        case 0: bytes = Array(bytes.prefix(generator.below(bytes.count)))  // truncated
        case 1: for _ in 0..<3 { bytes[generator.below(bytes.count)] = UInt8(truncatingIfNeeded: generator.next()) }  // mutated
        case 2: bytes = (0..<generator.below(300)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }  // binary noise
        case 3: bytes = Array(#"{"id": 7, "cmd": \#(generator.below(100))}"#.utf8)  // cmd not a string
        case 4:
            let wrong = [#"{"on": "yes"}"#, #"{"path": 5}"#, #"{"values": [1]}"#, #"{"events": [1]}"#, #"{"level": 3}"#,
                         #"{"id": 9, "props": "x"}"#, #"{"name": null}"#, #"{"keys": "a"}"#]
            let commands = ["display.power", "screenshot", "data.set", "subscribe", "log.level", "widget.set", "page.show", "data.get"]
            let k = generator.below(wrong.count)
            bytes = Array(#"{"id": "w", "cmd": "\#(commands[k])", "args": \#(wrong[k])}"#.utf8)  // wrong argument type
        case 5: bytes = Array(#"{"id": 8, "cmd": "no.such.\#(generator.below(1000))"}"#.utf8)  // unknown command
        case 6: bytes = Array(String(repeating: "[", count: 1 + generator.below(5000)).utf8)  // deep nesting
        case 7: bytes = Array(#"{"id": {"nested": true}, "cmd": "ping"}"#.utf8)  // id not a scalar
        case 8: bytes = Array(#"{"id": 1e999, "cmd": "ping", "args": [1, 2]}"#.utf8)  // args not an object
        default: bytes = [0xFF, 0xFE, 0x00, 0xC3] + bytes.reversed()  // invalid UTF-8 and reversed text
        }
        return bytes.map { $0 == 0x0A ? 0x20 : $0 }
    }

    static func check(_ reply: [String: Any]?, id: String, _ test: ([String: Any]) -> Bool) -> Bool {
        guard let reply, reply["id"] as? String == id else { return false }
        return test(reply)
    }
}

/// The storm's tallies, shared by its threads.
private final class ReportBox: @unchecked Sendable {
    private let lock = NSLock()
    private var report = StormReport()

    var value: StormReport { lock.withLock { report } }
    func record(sent: Int) { lock.withLock { report.wellFormedSent += sent } }
    func recordCorrect() { lock.withLock { report.wellFormedAnsweredCorrectly += 1 } }
    func recordMalformed() { lock.withLock { report.malformedSent += 1 } }
    func recordOversized() { lock.withLock { report.oversizedSent += 1 } }
    func recordOversizedRefused() { lock.withLock { report.oversizedRefused += 1 } }
    func sample(flips: Int, clients: Int) {
        lock.withLock {
            report.flipSamples.append(flips)
            report.peakConnections = max(report.peakConnections, clients)
        }
    }
    func problem(_ text: String) { lock.withLock { if report.problems.count < 20 { report.problems.append(text) } } }
}

/// A flag one thread sets and another polls.
private final class ManagedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// Resident memory of a process in KiB (VmRSS in /proc/PID/status).
public func residentKiB(of pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
    return Int(line.split(separator: " ").dropFirst().first ?? "")
}
