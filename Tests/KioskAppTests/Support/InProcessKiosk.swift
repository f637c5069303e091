import Foundation
import KioskApp
import KioskCore
import KioskScene
import KioskTestSupport
import Logging
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// A `Kiosk` run in the test's own process, as `kioskd run` runs one, on a thread of its own (the kiosk's loop
/// thread), with its control socket in a fresh short directory under /tmp (sun_path holds 108 bytes); ready once it
/// answers `ping`. The test talks to it through that socket, as a client of kioskd would: the same requests and
/// replies as a daemon's (`ControlClient`), with no process started and no command line parsed.
///
/// Its settings come as `kioskd run` resolves them (`KioskConfiguration.resolve`): the settings given (the command
/// line's layer) over the config file over the board file it names, keep-going by default unless a scene is given.
/// The signals kioskd hears are blocked on the kiosk's thread alone (its loop reads them through a signalfd), so
/// `signal` aims them there, and nothing sent to the process could reach it. A file that cannot be used fails the
/// run with its error (the command line's keep-going for a bad config file is the executable's rule, tested there).
///
/// A finished kiosk is released, but its loop is not: the loop holds its handlers strongly (and its wakers for its
/// whole life), and handlers hold what holds the loop. In kioskd that ends with the process; here each kiosk leaves
/// its loop's descriptors (about six) and a couple of idle worker threads behind until the test process exits.
final class InProcessKiosk: ControlClient {
    let directory: String
    let socketPath: String
    private let state = RunState()
    private let log = LogLines()
    /// The variables `environment` replaced, with their values before.
    private let savedEnvironment: [(String, String?)]
    private let thread: Thread
    private var stopped = false

    /// A headless run at `mode` with the settings `change` gives (what a test would give on the command line), over
    /// the config file `config`. Scene files are watched only where `change` asks for it (`watch = true`): each
    /// watch is an inotify instance, of which a user has 128 in all (fs.inotify.max_user_instances), and a finished
    /// kiosk's loop is never freed (see the type's note), so every watch would last as long as the test process.
    convenience init(mode: String? = "320x240@60", config: String? = nil, capturePages: String? = nil, backlightDirectory: String? = nil,
                     environment: [String: String] = [:], serving: Bool = true, _ change: (inout KioskConfig) -> Void = { _ in }) throws {
        var settings = KioskConfig()
        settings.backend = .headless
        settings.mode = try mode.map { try ModeRequest(validating: $0) }
        change(&settings)
        if settings.watch == nil { settings.watch = false }
        try self.init(settings, config: config, capturePages: capturePages, backlightDirectory: backlightDirectory, environment: environment,
                      serving: serving)
    }

    /// Builds and starts the kiosk of `commandLine` over the config file `config`; throws with the kiosk's error when
    /// it fails to start, or when it does not answer `ping` within `readyTimeout` seconds.
    /// Without `serving`, the run has no control socket (`socket: none`) and nothing is awaited: a run that ends by
    /// itself (`frames`), for `waitForExit`.
    /// `capturePages` and `backlightDirectory` are the command line's `--capture-pages` and `--backlight-dir`.
    /// `environment` is set in this process's environment (systemd's `NOTIFY_SOCKET`, `WATCHDOG_USEC`) until the run
    /// ends: set before the kiosk's thread starts, while the test's is the one thread reading it.
    init(_ commandLine: KioskConfig, config: String? = nil, capturePages: String? = nil, backlightDirectory: String? = nil,
         environment: [String: String] = [:], serving: Bool = true, readyTimeout: Double = 30) throws {
        var template = Array("/tmp/kioskapp-ctl-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw ControlTestError("mkdtemp: errno \(errno)") }
        directory = String(cString: made)
        socketPath = directory + "/control.sock"
        savedEnvironment = environment.keys.map { ($0, getenv($0).map { String(cString: $0) }) }
        for (name, value) in environment { setenv(name, value, 1) }
        var given = commandLine
        given.control.socket = serving ? socketPath : "none"
        let settings = given
        let state = self.state, socket = socketPath, log = self.log
        thread = Thread {
            state.running(on: pthread_self())
            // The kiosk is gone (its loop, sockets and threads closed) by the time the run is reported ended, so the
            // next test's kiosk never meets this one's descriptors.
            let failure = Self.run(settings, config: config, capturePages: capturePages, backlightDirectory: backlightDirectory,
                                   state: state, log: log)
            state.finished(failure)
        }
        thread.name = "kiosk"
        // Scenes render on the pool's threads; the loop's own work (layout, YAML) wants a main thread's stack.
        thread.stackSize = 8 << 20
        thread.start()
        guard serving else { return }
        // No event can say the socket is up (events need a connection): poll until a ping is answered.
        var answered = false
        try? Poll.until("the kiosk to answer ping on \(socket)", timeout: readyTimeout, interval: 0.02) {
            if state.hasFinished { return true }
            answered = (try? ControlTestSocket(path: socket, timeoutSeconds: 5))?.request(#"{"id": 0, "cmd": "ping"}"#)?["ok"] as? Bool == true
            return answered
        }
        if answered { return }
        let failure = stop()
        throw ControlTestError("the kiosk did not answer on \(socket): \(failure.map { "\($0)" } ?? "it ran on without answering")")
    }

    deinit { stop() }

    /// Whether the run goes on.
    var isRunning: Bool { !state.hasFinished }

    /// What the kiosk has logged so far (at info and above), one line each: `level: message`.
    var logLines: [String] { log.lines }

    /// The test's own process, which the kiosk runs in.
    var pid: Int32 { getpid() }

    func stopAndDescribe() -> String {
        stop().map { "the run failed: \($0)" } ?? "the run ended without an error"
    }

    /// Builds the kiosk on the calling thread (its loop thread) and runs it until it stops; the error it failed with.
    private static func run(_ settings: KioskConfig, config: String?, capturePages: String?, backlightDirectory: String?,
                            state: RunState, log: LogLines) -> (any Error)? {
        do {
            let resolved = try resolve(settings, config: config, capturePages: capturePages, backlightDirectory: backlightDirectory)
            let kiosk = try Kiosk(resolved, logger: Logger(label: "kioskd") { _ in RecordingLogHandler(sink: log) })
            state.started(stop: try kiosk.makeStopFromAnyThread())
            try kiosk.run()
            return nil
        } catch {
            return error
        }
    }

    /// The settings of one run, resolved as `kioskd run` resolves them.
    private static func resolve(_ commandLine: KioskConfig, config: String?, capturePages: String?, backlightDirectory: String?) throws -> ResolvedRun {
        var run = ResolvedRun()
        var configFile = KioskConfig()
        if let config {
            let loaded = try ConfigLoader.load(path: config)
            configFile = loaded.config
            run.warnings = loaded.warnings
            if let mqtt = loaded.config.mqtt {
                run.fleet = FleetWiring.Configuration(settings: mqtt, file: config, password: try mqtt.password())
            }
        }
        let board = try (commandLine.board ?? configFile.board).map { try BoardConfig.load(path: $0) } ?? BoardConfig()
        var configuration = KioskConfiguration.resolve(commandLine: commandLine, configFile: configFile, boardFile: board)
        configuration.capturePages = capturePages
        configuration.backlightDirectory = backlightDirectory
        if configuration.settings.keepGoing == nil { configuration.settings.keepGoing = commandLine.scene == nil }
        try configuration.validate()
        run.configuration = configuration
        return run
    }

    /// Waits for the run to end by itself (`frames`), at most `timeout` seconds; its error, if it failed.
    func waitForExit(timeout: Double = 60) throws -> (any Error)? {
        guard state.waitFinished(timeout: timeout) else { throw ControlTestError("the kiosk ran on for \(timeout) s") }
        removeDirectory()
        return state.error
    }

    /// Ends the run at the next frame boundary, as SIGTERM does, and waits for it (20 s at most); the error the run
    /// ended with, if any. A run that does not end within that is a test failure's worth of error.
    @discardableResult
    func stop() -> (any Error)? {
        defer { removeDirectory() }
        state.stopKiosk()
        guard state.waitFinished(timeout: 20) else { return ControlTestError("the kiosk did not stop within 20 s") }
        return state.error
    }

    /// Stops the run; a run that ended with an error, or did not end, fails the test.
    func stopExpectingSuccess(file: StaticString = #filePath, line: UInt = #line) {
        if let error = stop() { XCTFail("the kiosk's run failed: \(error)", file: file, line: line) }
    }

    /// Sends `signal` to the kiosk's thread, where its loop reads it (the signals kioskd hears are blocked there
    /// and read through a signalfd): what `kill` does to kioskd, aimed at the one thread that takes it.
    func signal(_ signal: Int32) throws {
        guard let thread = state.thread else { throw ControlTestError("the kiosk's thread has not started") }
        let status = pthread_kill(thread, signal)
        guard status == 0 else { throw ControlTestError("pthread_kill \(signal): errno \(status)") }
    }

    private func removeDirectory() {
        guard !stopped else { return }
        stopped = true
        try? FileManager.default.removeItem(atPath: directory)
        for (name, value) in savedEnvironment {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
    }

    /// What the kiosk's thread tells the test's: how to stop it, and how it ended. Any thread.
    private final class RunState: @unchecked Sendable {
        private let lock = NSLock()
        private var stop: (@Sendable () -> Void)?
        private var ended = false
        private var failure: (any Error)?
        private let done = DispatchSemaphore(value: 0)
        private var loopThread: pthread_t?

        func running(on thread: pthread_t) { lock.withLock { loopThread = thread } }
        /// The kiosk's thread while its run lasts.
        var thread: pthread_t? { lock.withLock { ended ? nil : loopThread } }

        private var stopAsked = false

        /// The kiosk is built: `stop` ends its run (at once if that was asked for already).
        func started(stop: @escaping @Sendable () -> Void) {
            if lock.withLock({ self.stop = stop; return stopAsked }) { stop() }
        }

        func finished(_ error: (any Error)?) {
            lock.withLock { (ended, failure) = (true, error) }
            done.signal()
        }

        var hasFinished: Bool { lock.withLock { ended } }
        var error: (any Error)? { lock.withLock { failure } }

        func stopKiosk() {
            lock.withLock { () -> (@Sendable () -> Void)? in
                stopAsked = true
                return ended ? nil : stop
            }?()
        }

        /// Whether the run ended within `timeout` seconds; once it has, at once.
        func waitFinished(timeout: Double) -> Bool {
            if hasFinished { return true }
            guard done.wait(timeout: .now() + timeout) == .success else { return false }
            done.signal()
            return true
        }
    }

    /// The lines a kiosk logged. Any thread.
    private final class LogLines: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [String] = []
        func append(_ line: String) { lock.withLock { stored.append(line) } }
        var lines: [String] { lock.withLock { stored } }
    }

    /// Keeps each line logged at `logLevel` or above, as kioskd would write it to stderr.
    private struct RecordingLogHandler: LogHandler {
        let sink: LogLines
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            sink.append("\(event.level): \(event.message)")
        }
    }
}
