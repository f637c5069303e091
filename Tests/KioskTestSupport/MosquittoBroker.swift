import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A Mosquitto broker (Debian `mosquitto`) for one test: listens on 127.0.0.1 only, on a port that was free,
/// with its config (and password file) in a fresh directory under /tmp. Ready once it logs that it runs.
/// `mosquitto_sub`/`mosquitto_pub` (Debian `mosquitto-clients`) talk to it. One test thread.
public final class MosquittoBroker {
    public let directory: String
    public let port: Int
    public let credentials: (username: String, password: String)?
    private var process: Process?
    private var output: Pipe?

    /// The CA, server and client certificates of a TLS broker, made with openssl in the broker's directory.
    public private(set) var certificates: TestCertificates?

    /// Starts the broker; with `credentials`, anonymous clients are refused and a password file made with
    /// `mosquitto_passwd` holds the one user. With `tls`, the listener speaks TLS with a certificate from a CA
    /// made for this broker, and requires a client certificate from the same CA.
    public init(credentials: (username: String, password: String)? = nil, tls: Bool = false) throws {
        var template = Array("/tmp/kioskd-mqtt-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ControlTestError("mkdtemp: errno \(errno)") }
        directory = String(cString: made)
        port = try LoopbackPort.free()
        self.credentials = credentials
        var config = "listener \(port) 127.0.0.1\nlog_dest stderr\npersistence false\nmax_queued_messages 100000\n"
        if let credentials {
            let passwords = directory + "/passwords"
            let made = try Self.run("/usr/bin/mosquitto_passwd", ["-b", "-c", passwords, credentials.username, credentials.password])
            guard made.status == 0 else { throw ControlTestError("mosquitto_passwd: \(made.output)") }
            // Started as root, the broker reads the file after dropping to the mosquitto user.
            chmod(directory, 0o755)
            chmod(passwords, 0o644)
            config += "allow_anonymous false\npassword_file \(passwords)\n"
        } else {
            config += "allow_anonymous true\n"
        }
        if tls {
            let made = try TestCertificates(directory: directory)
            certificates = made
            config += "cafile \(made.caFile)\ncertfile \(made.serverCertFile)\nkeyfile \(made.serverKeyFile)\nrequire_certificate true\n"
            chmod(directory, 0o755)
        }
        try config.write(toFile: directory + "/mosquitto.conf", atomically: true, encoding: .utf8)
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    public var url: String { "\(certificates == nil ? "mqtt" : "mqtts")://127.0.0.1:\(port)" }

    /// Writes a kioskd config file at `path` whose `mqtt:` section is `url: <this broker>` and `lines` (each
    /// `key: value`), for `kioskd run --config`.
    public func writeKioskdConfig(_ lines: String, to path: String) throws {
        let section = ("url: \(url)\n" + lines).split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")
        try "mqtt:\n\(section)\n".write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Starts the broker (again, after `stop`) on the same port; returns once it accepts connections.
    public func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        process.arguments = ["-c", directory + "/mosquitto.conf"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        self.process = process
        output = pipe
        let reader = PipeLineReader(pipe)
        do {
            try reader.waitForLines(1, "mosquitto to report it runs", timeout: 20) { $0.contains(" running") }
        } catch {
            stop()
            throw ControlTestError("mosquitto on 127.0.0.1:\(port) did not start: \(error)")
        }
        // Nothing reads the log from here on: it goes to a file instead of filling the pipe.
        drain(pipe)
    }

    /// Stops the broker (SIGTERM) and waits for it to exit, SIGKILL after 10 s.
    public func stop() {
        guard let process, process.isRunning else { return }
        let deadline = ProcessDeadline(process, seconds: 10)
        process.terminate()
        process.waitUntilExit()
        deadline.cancel()
        self.process = nil
    }

    /// `mosquitto_pub` of one message (or, with `lines`, one message per line of its input); waits for it.
    public func publish(_ topic: String, _ payload: String, retain: Bool = false, qos: Int = 1) throws {
        let result = try Self.run("/usr/bin/mosquitto_pub", clientArguments + ["-q", "\(qos)", "-t", topic, "-m", payload] + (retain ? ["-r"] : []))
        guard result.status == 0 else { throw ControlTestError("mosquitto_pub \(topic): \(result.output)") }
    }

    /// Publishes the bytes of the file at `path` as one message on `topic` (`mosquitto_pub -f`): for payloads far
    /// larger than an argument can be.
    public func publish(_ topic: String, file path: String, qos: Int = 1) throws {
        let result = try Self.run("/usr/bin/mosquitto_pub", clientArguments + ["-q", "\(qos)", "-t", topic, "-f", path], timeout: 120)
        guard result.status == 0 else { throw ControlTestError("mosquitto_pub -f \(path) on \(topic): \(result.output)") }
    }

    /// Publishes each of `lines` as one message on `topic` through a single `mosquitto_pub -l`.
    public func publish(_ topic: String, lines: [String], qos: Int = 1) throws {
        let result = try Self.run("/usr/bin/mosquitto_pub", clientArguments + ["-q", "\(qos)", "-t", topic, "-l"],
                                  input: lines.joined(separator: "\n") + "\n")
        guard result.status == 0 else { throw ControlTestError("mosquitto_pub -l \(topic): \(result.output)") }
    }

    /// The payload of the first message on `topic` (a retained one counts), as bytes: for binary payloads,
    /// which the line-based `subscribe` cannot carry. Throws after `timeout` seconds.
    public func firstMessage(on topic: String, timeout: Int = 20) throws -> Data {
        let result = try Self.runForData("/usr/bin/mosquitto_sub", clientArguments + ["-C", "1", "-N", "-W", "\(timeout)", "-t", topic],
                                         timeout: Double(timeout) + 10)
        guard result.status == 0, !result.output.isEmpty else {
            throw ControlTestError("no message on \(topic) within \(timeout) s (mosquitto_sub status \(result.status))")
        }
        return result.output
    }

    /// An MQTT 5 `mosquitto_pub` whose message carries a response topic and correlation data.
    public func publish(_ topic: String, _ payload: String, responseTopic: String, correlationData: String) throws {
        let result = try Self.run("/usr/bin/mosquitto_pub", clientArguments + ["-V", "mqttv5", "-q", "1", "-t", topic, "-m", payload,
                                                                             "-D", "publish", "response-topic", responseTopic,
                                                                             "-D", "publish", "correlation-data", correlationData])
        guard result.status == 0 else { throw ControlTestError("mosquitto_pub \(topic): \(result.output)") }
    }

    /// A `mosquitto_pub -l` kept running on `topic`: each line sent is a message at once, without the start of a
    /// process, for timing.
    public func linePublisher(_ topic: String) throws -> MQTTLinePublisher {
        try MQTTLinePublisher(arguments: clientArguments + ["-q", "1", "-t", topic, "-l"])
    }

    /// Starts a `mosquitto_sub -v` on `topics`; returns once it is subscribed. With `showCorrelationData`, it
    /// speaks MQTT 5 and each line is `TOPIC CORRELATION-DATA PAYLOAD`.
    public func subscribe(_ topics: [String], showCorrelationData: Bool = false) throws -> MQTTSubscription {
        try MQTTSubscription(broker: self, topics: topics, showCorrelationData: showCorrelationData)
    }

    var clientArguments: [String] {
        var arguments = ["-h", "127.0.0.1", "-p", "\(port)"]
        if let credentials { arguments += ["-u", credentials.username, "-P", credentials.password] }
        if let certificates {
            arguments += ["--cafile", certificates.caFile, "--cert", certificates.clientCertFile, "--key", certificates.clientKeyFile]
        }
        return arguments
    }

    private func drain(_ pipe: Pipe) {
        let log = directory + "/mosquitto.log"
        FileManager.default.createFile(atPath: log, contents: nil)
        let handle = FileHandle(forWritingAtPath: log)
        pipe.fileHandleForReading.readabilityHandler = { reading in
            let data = reading.availableData
            if data.isEmpty { reading.readabilityHandler = nil; return }
            handle?.write(data)
        }
    }

    static func run(_ path: String, _ arguments: [String], input: String? = nil, timeout: Double = 30) throws -> (status: Int32, output: String) {
        let result = try runForData(path, arguments, input: input, timeout: timeout)
        return (result.status, String(decoding: result.output, as: UTF8.self))
    }

    static func runForData(_ path: String, _ arguments: [String], input: String? = nil, timeout: Double = 30) throws -> (status: Int32, output: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        let inputPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
        try process.run()
        // Reading the output to its end waits for the child: the deadline bounds both.
        let deadline = ProcessDeadline(process, seconds: timeout)
        if let input {
            inputPipe.fileHandleForWriting.write(Data(input.utf8))
            try inputPipe.fileHandleForWriting.close()
        }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try deadline.finish("\(path) \(arguments.joined(separator: " "))")
        return (process.terminationStatus, data)
    }
}

/// A running `mosquitto_sub -v`: each message is a line `TOPIC PAYLOAD`. One test thread.
public final class MQTTSubscription {
    private let process = Process()
    private let pipe = Pipe()
    private let reader: PipeLineReader
    /// Lines read but not yet taken by `waitFor`: retained messages that came before the subscription was known
    /// to be in place, and messages on topics not awaited yet. Bounded by what a test publishes.
    private var early: [String] = []

    /// Called between short reads while a wait goes on, when set: a test whose kiosk runs on the test thread's own
    /// loop turns that loop here, so that the kiosk answers while the test waits for its messages.
    public var whileWaiting: (() -> Void)?

    init(broker: MosquittoBroker, topics: [String], showCorrelationData: Bool) throws {
        // A retained message on a topic of its own shows when the subscription is in place.
        let marker = "kioskd-test/ready/\(UUID().uuidString)"
        try broker.publish(marker, "ready", retain: true)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
        let format = showCorrelationData ? ["-V", "mqttv5", "-F", "%t %D %p"] : ["-v"]
        process.arguments = broker.clientArguments + format + ["-q", "1"] + (topics + [marker]).flatMap { ["-t", $0] }
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        reader = PipeLineReader(pipe)
        // Retained messages of the other topics may come first: they are kept for `waitFor`.
        var seen: [String] = []
        try reader.waitForLines(1, "the subscription to be in place", timeout: 20) { line in
            seen.append(line)
            return line.hasPrefix(marker + " ") && line.hasSuffix(" ready")
        }
        early = seen.dropLast()
    }

    deinit {
        if process.isRunning {
            let deadline = ProcessDeadline(process, seconds: 10)
            process.terminate()
            process.waitUntilExit()
            deadline.cancel()
        }
    }

    /// The next line before `deadline`, nil once it passed or the output ended; with `whileWaiting`, the lines that
    /// have arrived are taken without waiting, and it is called between looks.
    private func nextLine(before deadline: Date) -> String? {
        guard let whileWaiting else { return reader.nextLine(deadline: deadline) }
        while true {
            if let line = reader.nextLine(deadline: .distantPast) { return line }
            guard !reader.ended, Date() < deadline else { return nil }
            whileWaiting()
        }
    }

    /// The next `count` messages on `topic` whose payload satisfies `predicate`; throws after `timeout` seconds.
    @discardableResult
    public func waitFor(_ count: Int = 1, on topic: String, timeout: Double = 20, where predicate: (String) -> Bool = { _ in true }) throws -> [String] {
        func matches(_ line: String) -> Bool { line.hasPrefix(topic + " ") && predicate(String(line.dropFirst(topic.count + 1))) }
        var found: [String] = []
        while found.count < count, let index = early.firstIndex(where: matches) {
            found.append(early.remove(at: index))
        }
        // Messages on other topics are kept for later calls: topics may be awaited in any order.
        let deadline = Date().addingTimeInterval(timeout)
        while found.count < count {
            guard let line = nextLine(before: deadline) else {
                throw ControlTestError("waited \(timeout) s for \(count) message(s) on \(topic) but got \(found.count)\(reader.ended ? " (mosquitto_sub ended)" : ""); other messages: \(early.suffix(3))")
            }
            if matches(line) { found.append(line) } else { early.append(line) }
        }
        return found.map { String($0.dropFirst(topic.count + 1)) }
    }

    /// Reads messages until `take(topic, payload)` has accepted `count` of them (each is offered once, as it
    /// arrives, after any kept from earlier calls); throws after `timeout` seconds.
    public func waitForAny(_ count: Int, timeout: Double = 20, _ take: (String, String) -> Bool) throws {
        var taken = 0
        func offer(_ line: String) -> Bool {
            guard let space = line.firstIndex(of: " "), take(String(line[..<space]), String(line[line.index(after: space)...])) else { return false }
            taken += 1
            return true
        }
        early.removeAll { taken < count && offer($0) }
        let deadline = Date().addingTimeInterval(timeout)
        while taken < count {
            guard let line = nextLine(before: deadline) else {
                throw ControlTestError("waited \(timeout) s for \(count) messages but got \(taken)")
            }
            if !offer(line) { early.append(line) }
        }
    }

    /// The messages read but not taken yet whose topic starts with `prefix`, without taking them. Right after
    /// `subscribe`, these are the broker's retained messages on the subscribed topics (they come before the
    /// subscription's own marker).
    public func keptMessages(prefix: String) -> [(topic: String, payload: String)] {
        early.compactMap { line in
            guard line.hasPrefix(prefix), let space = line.firstIndex(of: " ") else { return nil }
            return (String(line[..<space]), String(line[line.index(after: space)...]))
        }
    }

    /// The next `count` JSON messages on any topic starting with `prefix`, each with its topic.
    public func waitForJSONOnTopics(_ count: Int, prefix: String, timeout: Double = 20) throws -> [(topic: String, payload: [String: Any])] {
        var found: [(topic: String, payload: [String: Any])] = []
        func take(_ line: String) -> Bool {
            guard line.hasPrefix(prefix), let space = line.firstIndex(of: " "),
                  let object = (try? JSONSerialization.jsonObject(with: Data(line[line.index(after: space)...].utf8))) as? [String: Any]
            else { return false }
            found.append((String(line[..<space]), object))
            return true
        }
        early.removeAll { found.count < count && take($0) }
        let deadline = Date().addingTimeInterval(timeout)
        while found.count < count {
            guard let line = nextLine(before: deadline) else {
                throw ControlTestError("waited \(timeout) s for \(count) JSON message(s) under \(prefix) but got \(found.count)")
            }
            if !take(line) { early.append(line) }
        }
        return found
    }

    /// `waitFor` for JSON payloads, parsed.
    public func waitForJSON(_ count: Int = 1, on topic: String, timeout: Double = 20,
                            where predicate: ([String: Any]) -> Bool = { _ in true }) throws -> [[String: Any]] {
        func parse(_ text: String) -> [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
        }
        return try waitFor(count, on: topic, timeout: timeout) { parse($0).map(predicate) ?? false }.compactMap(parse)
    }
}

/// A certificate authority made with openssl for one test, and a server (127.0.0.1) and a client certificate it
/// signed; files readable by the broker once it drops root. One test thread.
public struct TestCertificates {
    public let caFile: String
    public let serverCertFile: String
    public let serverKeyFile: String
    public let clientCertFile: String
    public let clientKeyFile: String

    init(directory: String) throws {
        let openssl = "/usr/bin/openssl"
        func run(_ arguments: [String]) throws {
            let result = try MosquittoBroker.run(openssl, arguments)
            guard result.status == 0 else { throw ControlTestError("openssl \(arguments.joined(separator: " ")): \(result.output)") }
        }
        let d = directory
        caFile = d + "/ca.pem"
        serverCertFile = d + "/server.pem"
        serverKeyFile = d + "/server.key"
        clientCertFile = d + "/client.pem"
        clientKeyFile = d + "/client.key"
        try run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", d + "/ca.key", "-out", caFile, "-days", "2",
                 "-subj", "/CN=kioskd test CA"])
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: d + "/server.ext", atomically: true, encoding: .utf8)
        for (name, subject, extensions) in [("server", "/CN=127.0.0.1", [d + "/server.ext"]), ("client", "/CN=kiosk", [])] {
            try run(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(d)/\(name).key", "-out", "\(d)/\(name).csr", "-subj", subject])
            try run(["x509", "-req", "-in", "\(d)/\(name).csr", "-CA", caFile, "-CAkey", d + "/ca.key", "-CAcreateserial",
                     "-out", "\(d)/\(name).pem", "-days", "2"] + (extensions.isEmpty ? [] : ["-extfile", extensions[0]]))
        }
        for file in [caFile, serverCertFile, serverKeyFile, clientCertFile, clientKeyFile] { chmod(file, 0o644) }
    }
}

/// A running `mosquitto_pub -l`: one message per line written. One test thread.
public final class MQTTLinePublisher {
    private let process = Process()
    private let input = Pipe()

    init(arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        try? input.fileHandleForWriting.close()
        let deadline = ProcessDeadline(process, seconds: 10)
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        deadline.cancel()
    }

    public func send(_ line: String) throws {
        guard process.isRunning else { throw ControlTestError("mosquitto_pub -l exited with status \(process.terminationStatus)") }
        try input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }
}

/// The scene of the fleet tests, in process and against kioskd: a `reading` text showing `temperature` (fed from
/// `home/livingroom/temperature`'s `value`) and the data key `label` (from `home/label`), a ticker that animates so
/// frames flip all the time, and a `second` page all #203040.
public enum FleetTestScene {
    public static let yaml = """
        size: display
        background: black
        font: {family: Sans, size: 40}
        data: {temperature: "--", label: none}
        data_sources:
          - {mqtt: home/livingroom/temperature, key: temperature, field: value}
          - {mqtt: home/label, key: label}
        pages:
          - name: main
            widgets:
              - {id: reading, type: text, text: "{temperature} C", x: 0, y: 0, width: 100%, height: 50%, foreground: white}
              - {id: news, type: ticker, text: "a ticker keeps frames flipping", speed: 80, x: 0, y: 60%, width: 100%, height: 20%, foreground: white}
          - name: second
            widgets:
              - {id: other, type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "#203040"}

        """
}
