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
/// registry (`call`), as a client's line would be; `waitUntil` turns the loop and the render pool until a condition
/// holds. `tearDown` (or the harness going away) stops it and closes everything it opened, so many kiosks can be
/// built one after another in one process. Test thread only.
final class KioskHarness {
    let kiosk: Kiosk
    let loop: MainLoop
    let pool: RenderQueuePool
    /// The test's folder: the scene file and anything else the test writes.
    let directory: URL
    let socketPath: String
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
        try configure(&resolved, directory)
        if resolved.configuration.clockSynchronizedFile == nil {
            resolved.configuration.clockSynchronizedFile = directory.appendingPathComponent("synchronized").path
        }
        if manualClock {
            loop = MainLoop.manual().loop
            pool = RenderQueuePool(strategy: .manual)
        } else {
            loop = try MainLoop.epoll()
            pool = RenderQueuePool(strategy: resolved.configuration.renderStrategy.poolStrategy)
        }
        kiosk = try Kiosk(resolved, logger: Logger(label: "kiosk-harness"), loop: loop, pool: pool)
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

    /// Stops the kiosk as the end of a run does: the control socket and the fleet closed, every output stopped.
    func tearDown() {
        guard !stopped else { return }
        stopped = true
        kiosk.stopServing()
        kiosk.outputs.stop()
        try? FileManager.default.removeItem(atPath: socketFolder)
    }

    /// The reply of `command` as the socket would give it: its result, or its error. A deferred command's reply is
    /// awaited, turning the loop.
    func call(_ command: String, _ arguments: [String: JSONValue] = [:]) throws -> (result: JSONValue?, error: JSONValue?) {
        guard let control = kiosk.control else { throw ControlTestError("the kiosk has no control socket") }
        var reply: JSONValue?
        _ = control.server.commands.start(ControlRequest(command: command, arguments: arguments), from: .remote(number: -1)) { reply = $0 }
        try waitUntil("the reply to \(command)") { reply != nil }
        return (reply?["result"], reply?["error"])
    }

    /// Turns the loop and the render pool until `condition` holds, for at most `timeout` seconds (`Poll`).
    func waitUntil(_ what: @autoclosure () -> String, timeout: Double = 10, _ condition: () throws -> Bool) throws {
        try Poll.until(what(), timeout: timeout, turning: loop, running: pool, condition)
    }

    /// Moves the manual clock forward by `duration`, firing the timers due on the way.
    func advance(by duration: Duration) {
        loop.advanceTime(by: duration)
    }

    var first: DrivenOutput { kiosk.outputs.first }
}
