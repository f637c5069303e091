import Foundation
@testable import KioskApp
import KioskCore
import KioskFleet
import KioskScene
import KioskTestSupport
import XCTest

extension KioskHarness {
    /// A kiosk built as `kioskd run --backend headless [--mode MODE] --scene SCENE --no-watch --seat none --socket …
    /// --config FILE` builds it, with the harness's own asset cache: the command line's settings over the config file
    /// at `configPath` (and the board file either names) through `ResolvedRun.read`, on the real loop. `commandLine`
    /// changes the command line first (a board file, a calibration…).
    static func reading(_ name: String, scene: String = greetingScene, configPath: String?, mode: ModeRequest? = ModeRequest(width: 320, height: 240, refreshHz: 60),
                        commandLine change: (inout KioskConfig) -> Void = { _ in }) throws -> KioskHarness {
        try KioskHarness(name, scene: scene, manualClock: false) { run, _ in
            let prepared = run.configuration.settings
            var commandLine = KioskConfig()
            commandLine.backend = .headless
            commandLine.mode = mode
            commandLine.scene = prepared.scene
            commandLine.watch = false
            commandLine.input.seat = prepared.input.seat
            commandLine.control.socket = prepared.control.socket
            commandLine.cache.directory = prepared.cache.directory
            change(&commandLine)
            run = try ResolvedRun.read(commandLine: commandLine, configPath: configPath)
        }
    }

    /// One turn of the loop (and, on the manual clock, of the render pool), waiting a few milliseconds at most for
    /// the loop's events: for a test that waits on something outside the kiosk while the kiosk goes on.
    func turn() {
        var turned = false
        try? waitUntil("one turn of the loop") {
            defer { turned = true }
            return turned
        }
    }

    /// Runs `work`, something that blocks (a client process, a subscriber waiting for a message), on a thread of its
    /// own (with the signals the kiosk blocks unblocked, as the processes it starts inherit them) while this thread
    /// turns the kiosk's loop so that the kiosk answers it, for at most `timeout` seconds; returns what `work`
    /// returned, or throws what it threw.
    func meanwhile<Value>(_ what: String, timeout: Double = 60, _ work: @escaping () throws -> Value) throws -> Value {
        let outcome = Outcome<Value>(work)
        withKioskSignalsUnblocked {
            Thread { outcome.run() }.start()
        }
        try waitUntil(what, timeout: timeout) { outcome.result != nil }
        return try outcome.result!.get()
    }
}

/// What a blocking call on another thread gave, handed to the test thread under a lock. Any thread.
private final class Outcome<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var work: (() throws -> Value)?
    private var stored: Result<Value, any Error>?

    init(_ work: @escaping () throws -> Value) { self.work = work }

    /// Runs the work once, on the thread that calls it.
    func run() {
        guard let work = lock.withLock({ () -> (() throws -> Value)? in defer { self.work = nil }; return self.work }) else { return }
        let result = Result { try work() }
        lock.withLock { stored = result }
    }

    var result: Result<Value, any Error>? { lock.withLock { stored } }
}

/// A kiosk in the test's process with an `mqtt:` section for a real Mosquitto broker on loopback, as
/// `kioskd run --config FILE` would have it: the real loop and workers, and the fleet tests' scene (`FleetTestScene`:
/// data sources on `home/livingroom/temperature` and `home/label`, a ticker that keeps frames flipping). The test thread turns the kiosk's loop whenever it waits: for a reply
/// on the control socket, for a message on a subscription made here (`subscribe`), or for a blocking call
/// (`meanwhile`). Test thread only.
final class FleetKiosk {
    let harness: KioskHarness
    let broker: MosquittoBroker
    let prefix: String
    private let client: HarnessClient


    /// - Parameters:
    ///   - mqtt: the `mqtt:` section's lines besides the url, the prefix and the client id.
    ///   - configTail: config file lines after the `mqtt:` section (`outputs:`).
    ///   - mode: `--mode`; nil for none (an `outputs:` section gives each output's).
    init(_ name: String, broker: MosquittoBroker, prefix: String = "kioskd/test-kiosk", mqtt lines: String = "", configTail: String = "",
         mode: ModeRequest? = ModeRequest(width: 320, height: 240, refreshHz: 60)) throws {
        self.broker = broker
        self.prefix = prefix
        let config = broker.directory + "/mqtt-\(name.filter { $0.isLetter || $0.isNumber }).yaml"
        try broker.writeKioskdConfig("topic_prefix: \(prefix)\nclient_id: \(name)\n\(lines)", to: config)
        if !configTail.isEmpty {
            try (try String(contentsOfFile: config, encoding: .utf8) + configTail).write(toFile: config, atomically: true, encoding: .utf8)
        }
        harness = try KioskHarness.reading(name, scene: FleetTestScene.yaml, configPath: config, mode: mode)
        client = try harness.connect()
    }

    /// The kiosk's MQTT client.
    var fleet: FleetClient {
        get throws { try XCTUnwrap(harness.kiosk.fleet?.client, "the kiosk has no MQTT client") }
    }

    /// A `mosquitto_sub` on `topics` (started with the signals the kiosk blocks unblocked, so that SIGTERM stops it)
    /// whose waits turn this kiosk's loop, and those of `others` (several kiosks of one group in one process). It holds the kiosks weakly: they go when the test lets them go.
    func subscribe(_ topics: [String], showCorrelationData: Bool = false, turning others: [FleetKiosk] = []) throws -> MQTTSubscription {
        let subscription = try harness.withKioskSignalsUnblocked { try broker.subscribe(topics, showCorrelationData: showCorrelationData) }
        let turned = ([self] + others).map { WeakHarness(harness: $0.harness) }
        subscription.whileWaiting = {
            for kiosk in turned { kiosk.harness?.turn() }
        }
        return subscription
    }

    /// Waits until `<prefix>/status` is `online`.
    func waitOnline() throws {
        try subscribe(["\(prefix)/status"]).waitFor(on: "\(prefix)/status") { $0 == "online" }
    }

    /// The first message on `topic` as bytes (a retained one counts), read while the loop turns.
    func firstMessage(on topic: String, timeout: Int = 20) throws -> Data {
        try harness.meanwhile("a message on \(topic)", timeout: Double(timeout) + 15) { [broker] in
            try broker.firstMessage(on: topic, timeout: timeout)
        }
    }

    /// The reply to `line` on the control socket.
    func request(_ line: String) throws -> [String: Any] {
        try client.request(line)
    }

    /// The result of `command` on the control socket; throws on an error reply.
    func result(_ command: String, _ arguments: String = "{}") throws -> [String: Any] {
        let reply = try client.request(#"{"id": 1, "cmd": "\#(command)", "args": \#(arguments)}"#)
        guard let result = reply["result"] as? [String: Any] else { throw ControlTestError("\(command): \(reply)") }
        return result
    }

    /// The error of `command` on the control socket; throws on a result.
    func error(_ command: String, _ arguments: String = "{}") throws -> (code: String, message: String) {
        let reply = try client.request(#"{"id": 1, "cmd": "\#(command)", "args": \#(arguments)}"#)
        guard let error = reply["error"] as? [String: Any] else { throw ControlTestError("\(command): expected an error, got \(reply)") }
        return (error["code"] as? String ?? "", error["message"] as? String ?? "")
    }

    func framesFlipped() throws -> Int {
        guard let n = try result("stats")["frames_flipped"] as? Int else { throw ControlTestError("stats without frames_flipped") }
        return n
    }

    /// The data key `key` as `data.get` gives it.
    func data(_ key: String) throws -> String? {
        (try result("data.get", #"{"keys": ["\#(key)"]}"#)["values"] as? [String: String])?[key]
    }

    /// Turns the loop until `condition` holds, for at most `timeout` seconds.
    func waitUntil(_ what: @autoclosure () -> String, timeout: Double = 20, _ condition: () throws -> Bool) throws {
        try harness.waitUntil(what(), timeout: timeout, condition)
    }

    /// Stops the kiosk (`KioskHarness.tearDown`): MQTT says `offline` and disconnects.
    func stop() { harness.tearDown() }
}

/// A kiosk a subscription turns while it waits, held weakly.
private struct WeakHarness {
    weak var harness: KioskHarness?
}

/// The fleet tests' case: a Mosquitto broker of its own for each test, and the kiosks it starts (`start`), stopped
/// in the reverse order (each restores the signal mask it found). Test thread only.
class FleetTestCase: XCTestCase {
    var broker: MosquittoBroker!
    private var kiosks: [FleetKiosk] = []
    let prefix = "kioskd/test-kiosk"

    override func setUpWithError() throws {
        broker = try MosquittoBroker()
    }

    override func tearDown() {
        while let kiosk = kiosks.popLast() { kiosk.stop() }
        broker = nil
    }

    /// A kiosk in process (`FleetKiosk`) with the `mqtt:` section's `lines`, under `prefix` (the case's by default),
    /// on `broker` (the case's by default).
    func start(_ lines: String = "", prefix: String? = nil, broker: MosquittoBroker? = nil, configTail: String = "",
               mode: ModeRequest? = ModeRequest(width: 320, height: 240, refreshHz: 60)) throws -> FleetKiosk {
        let kiosk = try FleetKiosk("\(name.filter(\.isLetter))\(kiosks.count)", broker: broker ?? self.broker, prefix: prefix ?? self.prefix,
                                   mqtt: lines, configTail: configTail, mode: mode)
        kiosks.append(kiosk)
        return kiosk
    }
}
