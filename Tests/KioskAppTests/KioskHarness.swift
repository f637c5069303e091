import Foundation
@testable import KioskApp
import KioskControl
import KioskCore
import KioskScene
import KioskTestSupport
import Logging
import XCTest

/// One kiosk in the test's process, built from a configuration as `kioskd run` builds it: the headless backend, a
/// scene file of the test's, a control socket under /tmp, and by default the manual clock, so a rule about time is
/// checked by moving the clock (`advance`) rather than by waiting. Commands are called through the control socket's
/// registry (`call`), as a client's line would be, or by a client on the socket (`subscribe`); `waitUntil` turns
/// the loop and the render pool until a condition holds. `tearDown` (or the harness going away) stops it and closes
/// everything it opened, so many kiosks can be built one after another in one process. Test thread only.
final class KioskHarness {
    let kiosk: Kiosk
    let loop: MainLoop
    let pool: RenderQueuePool
    /// The test's folder: the scene file and anything else the test writes.
    let directory: URL
    let socketPath: String
    /// The manual clock's poller; nil on the real loop.
    let poller: ManualPoller?
    /// What the kiosk logged, at info and above.
    let log = CapturedLog()
    private let socketFolder: String
    private var stopped = false

    /// A one-page scene with a text widget `t` showing `{greeting}`.
    static let greetingScene = """
        size: display
        data: {greeting: none}
        pages:
          - name: main
            widgets:
              - {id: t, type: text, text: "{greeting}", x: 0, y: 0, width: 100%, height: 50%}
          - name: second
            widgets: []

        """

    /// - Parameters:
    ///   - name: names the test's folder.
    ///   - scene: the scene file's text.
    ///   - manualClock: the manual clock and a render pool run by hand (the default), or the real loop and workers.
    ///   - configure: changes to the run's configuration before the kiosk is built (idle, MQTT, files…).
    init(_ name: String, scene: String = greetingScene, manualClock: Bool = true,
         configure: (inout ResolvedRun, URL) throws -> Void = { _, _ in }) throws {
        pthread_sigmask(SIG_BLOCK, nil, &signalMask)
        directory = try KioskdProcess.scratchDirectory("kiosk-harness-\(name.filter { $0.isLetter || $0.isNumber })")
        let scenePath = directory.appendingPathComponent("scene.yaml").path
        try scene.write(toFile: scenePath, atomically: true, encoding: .utf8)
        // A socket path must be short: under /tmp rather than the build folder.
        var template = Array("/tmp/kioskapp-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ControlTestError("mkdtemp: errno \(errno)") }
        socketFolder = String(cString: made)
        socketPath = socketFolder + "/control.sock"
        var resolved = ResolvedRun()
        resolved.configuration.settings.backend = .headless
        resolved.configuration.settings.mode = ModeRequest(width: 320, height: 240, refreshHz: 60)
        resolved.configuration.settings.scene = scenePath
        resolved.configuration.settings.watch = false
        resolved.configuration.settings.input.seat = "none"
        resolved.configuration.settings.control.socket = socketPath
        // The kiosk's own asset cache, not the machine's (/var/cache/kioskd for root), which other kiosks share.
        resolved.configuration.settings.cache.directory = directory.appendingPathComponent("cache").path
        try configure(&resolved, directory)
        if resolved.configuration.clockSynchronizedFile == nil {
            resolved.configuration.clockSynchronizedFile = directory.appendingPathComponent("synchronized").path
        }
        if manualClock {
            (loop, poller) = MainLoop.manual()
            pool = RenderQueuePool(strategy: .manual)
        } else {
            poller = nil
            loop = try MainLoop.epoll()
            pool = RenderQueuePool(strategy: resolved.configuration.renderStrategy.poolStrategy)
        }
        do {
            kiosk = try Kiosk(resolved, logger: Logger(label: "kiosk-harness") { [log] _ in log.handler }, loop: loop, pool: pool)
        } catch {
            // No deinit runs for a harness that was never made: the signals the kiosk blocked are unblocked here.
            pthread_sigmask(SIG_SETMASK, &signalMask, nil)
            try? FileManager.default.removeItem(atPath: socketFolder)
            throw error
        }
        kiosk.start()
    }

    /// The calling thread's signal mask before the kiosk: a kiosk on the real loop blocks the signals it reads
    /// (`SignalRouting`) and, as at the end of kioskd, leaves them blocked; the test process gets its mask back when
    /// the harness goes, or every process a later test starts would inherit SIGTERM blocked.
    private var signalMask = sigset_t()

    deinit {
        tearDown()
        pthread_sigmask(SIG_SETMASK, &signalMask, nil)
    }

    /// Runs `body`, which starts a child process or a thread, with the signals a kiosk blocks (`SignalRouting`)
    /// unblocked: both inherit the mask, and a child started with SIGTERM blocked ignores the SIGTERM that would stop
    /// it. A signal no kiosk has read yet would be delivered meanwhile: call it with none sent.
    func withKioskSignalsUnblocked<Value>(_ body: () throws -> Value) rethrows -> Value {
        var routed = sigset_t(), kioskMask = sigset_t()
        sigemptyset(&routed)
        for signal in SignalRouting.signals { sigaddset(&routed, signal) }
        pthread_sigmask(SIG_UNBLOCK, &routed, &kioskMask)
        defer { pthread_sigmask(SIG_SETMASK, &kioskMask, nil) }
        return try body()
    }

    /// Stops the kiosk as the end of a run does: the control socket and the fleet closed, every output stopped.
    func tearDown() {
        guard !stopped else { return }
        stopped = true
        kiosk.stopServing()
        kiosk.outputs.stop()
        try? FileManager.default.removeItem(atPath: socketFolder)
    }

    /// The reply of `command` as the socket would give it: its result, or its error. A deferred command's reply is
    /// awaited, turning the loop; on the manual clock, a reply that waits for a frame (`screenshot`) needs the clock
    /// moved a frame (`advancing`, 17 ms at 60 Hz) each turn.
    func call(_ command: String, _ arguments: [String: JSONValue] = [:],
              advancing frame: Duration? = nil) throws -> (result: JSONValue?, error: JSONValue?) {
        guard let control = kiosk.control else { throw ControlTestError("the kiosk has no control socket") }
        var reply: JSONValue?
        _ = control.server.commands.start(ControlRequest(command: command, arguments: arguments), from: .remote(number: -1)) { reply = $0 }
        try waitUntil("the reply to \(command)") {
            if reply == nil, let frame { advance(by: frame) }
            return reply != nil
        }
        return (reply?["result"], reply?["error"])
    }

    /// Turns the loop (and on the manual clock the render pool) until `condition` holds, for at most `timeout` seconds
    /// (`Poll`). On the manual clock, each turn also serves the kiosk's real descriptors (`markReadyDescriptors`), so a client on the
    /// control socket is answered as the test waits.
    func waitUntil(_ what: @autoclosure () -> String, timeout: Double = 10, _ condition: () throws -> Bool) throws {
        guard poller != nil else {
            // The real loop, whose workers render by themselves: each turn waits a little for the loop's events.
            return try Poll.until(what(), timeout: timeout, turning: loop, every: .milliseconds(5), condition)
        }
        try Poll.until(what(), timeout: timeout, turning: loop, running: pool) {
            markReadyDescriptors()
            return try condition()
        }
    }

    /// On the manual clock: the kiosk's descriptors that are ready now (the control socket, its clients, anything
    /// else it reads or writes) are reported to the manual poller, as a real poller would report them, for the
    /// loop's next turn. The clock still moves only by `advance`.
    private func markReadyDescriptors() {
        guard let poller else { return }
        var descriptors = poller.registeredDescriptors.map { fd, events in
            pollfd(fd: fd, events: Int16(events.contains(.readable) ? POLLIN : 0) | Int16(events.contains(.writable) ? POLLOUT : 0),
                   revents: 0)
        }
        guard !descriptors.isEmpty, poll(&descriptors, nfds_t(descriptors.count), 0) > 0 else { return }
        for descriptor in descriptors where descriptor.revents != 0 && descriptor.revents & Int16(POLLNVAL) == 0 {
            var ready: IOEvents = []
            if descriptor.revents & Int16(POLLIN) != 0 { ready.insert(.readable) }
            if descriptor.revents & Int16(POLLOUT) != 0 { ready.insert(.writable) }
            if descriptor.revents & Int16(POLLHUP) != 0 { ready.insert(.hangup) }
            if descriptor.revents & Int16(POLLERR) != 0 { ready.insert(.error) }
            poller.signalReady(fd: descriptor.fd, events: ready)
        }
    }

    /// Moves the manual clock forward by `duration`, firing the timers due on the way.
    func advance(by duration: Duration) {
        loop.advanceTime(by: duration)
    }

    var first: DrivenOutput { kiosk.outputs.first }

    /// A client on the kiosk's control socket, as a script would be.
    func connect() throws -> HarnessClient {
        try HarnessClient(self)
    }

    /// A client of the kiosk's control socket subscribed to `events`: the events as a client reads them, in order.
    func subscribe(_ events: [String]) throws -> HarnessClient {
        let client = try HarnessClient(self)
        let names = events.map { "\"\($0)\"" }.joined(separator: ", ")
        let reply = try client.request(#"{"id": "subscribe", "cmd": "subscribe", "args": {"events": [\#(names)]}}"#)
        guard reply["ok"] as? Bool == true else { throw ControlTestError("subscribe: \(reply)") }
        return client
    }
}

/// A client on the control socket of a harness's kiosk, read while the harness turns the loop (the kiosk answers on
/// its loop, which the test thread turns): lines as a client sends them, replies and events as it reads them, in
/// order. Test thread only.
final class HarnessClient {
    private let socket: ControlTestSocket
    private unowned let harness: KioskHarness
    /// Events read and not yet taken by `waitFor`.
    private var pending: [[String: Any]] = []
    /// Replies read and not yet taken by `request`.
    private var replies: [[String: Any]] = []

    init(_ harness: KioskHarness) throws {
        self.harness = harness
        socket = try ControlTestSocket(path: harness.socketPath, timeoutSeconds: 5)
    }

    /// Sends `line` (a request, or anything else a client might send) and returns the next reply, turning the loop
    /// until it comes; events meanwhile are kept for `waitFor`.
    func request(_ line: String, timeout: Double = 10) throws -> [String: Any] {
        try send(line + "\n")
        return try nextReply(timeout: timeout)
    }

    /// Writes `text` as it is (any number of lines, or part of one).
    func send(_ text: String) throws {
        guard socket.write(Array(text.utf8)) else { throw ControlTestError("\(text): the kiosk closed the connection") }
    }

    /// The next reply not yet taken, turning the loop until it comes.
    func nextReply(timeout: Double = 10) throws -> [String: Any] {
        var reply: [String: Any]?
        try harness.waitUntil("a reply", timeout: timeout) {
            read()
            if !replies.isEmpty { reply = replies.removeFirst() }
            return reply != nil
        }
        return reply ?? [:]
    }

    /// The next event not yet taken, whatever its name, turning the loop until it comes.
    func nextEvent(timeout: Double = 10) throws -> (name: String, data: [String: Any]) {
        var event: [String: Any]?
        try harness.waitUntil("an event", timeout: timeout) {
            read()
            if !pending.isEmpty { event = pending.removeFirst() }
            return event != nil
        }
        return (event?["event"] as? String ?? "", event?["data"] as? [String: Any] ?? [:])
    }

    /// Reads the lines that have arrived, without waiting: events into `pending`, replies into `replies`.
    private func read() {
        while let object = socket.readObject(deadline: Date() + 0.001) {
            if object["event"] != nil { pending.append(object) } else { replies.append(object) }
        }
    }

    /// The data of the next event `name` whose data satisfies `condition` (events before it are passed over),
    /// turning the loop until it comes, for at most `timeout` seconds.
    @discardableResult
    func waitFor(_ name: String, timeout: Double = 10, where condition: ([String: Any]) -> Bool = { _ in true }) throws -> [String: Any] {
        var found: [String: Any]?
        try harness.waitUntil("a '\(name)' event", timeout: timeout) {
            read()
            guard let index = pending.firstIndex(where: {
                $0["event"] as? String == name && condition($0["data"] as? [String: Any] ?? [:])
            }) else { return false }
            found = pending[index]["data"] as? [String: Any] ?? [:]
            pending.removeSubrange(...index)
            return true
        }
        return found ?? [:]
    }
}

/// The messages a kiosk logged, at info and above, for tests that check what it said. Any thread.
final class CapturedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []

    var lines: [String] { lock.withLock { messages } }

    var handler: LogHandler { Handler(log: self) }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            log.lock.withLock { log.messages.append("\(event.message)") }
        }
    }
}
