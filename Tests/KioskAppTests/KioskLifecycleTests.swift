import Foundation
@testable import KioskApp
import KioskCore
import KioskTestSupport
import Logging
import XCTest

/// Kiosks built, run and let go one after another in one process, as the in-process tests build them: each lets go
/// of every descriptor it opened, and each descriptor is closed once.
final class KioskLifecycleTests: XCTestCase {
    /// The process's open descriptors (a listing's own descriptor, gone by the time it is read, left out).
    private func openDescriptors() -> Set<Int32> {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(names.compactMap(Int32.init).filter { fcntl($0, F_GETFD) >= 0 })
    }

    /// What a descriptor is (`/proc/self/fd`'s link: a path, `socket:[…]`, `anon_inode:[eventfd]`…).
    private func describe(_ fd: Int32) -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)")) ?? "?"
    }

    /// Each kiosk runs to `--frames` on the real loop with its control socket, a client subscribed to it, the scene
    /// watched and proof of play recorded; once it is gone, so are its loop and every descriptor it opened. (Handlers
    /// that held the command registry, the outputs or the loop kept each kiosk's loop, signalfd, inotify and sockets
    /// open until the process ended.)
    ///
    /// A kiosk that keeps descriptors keeps them every time, so the process grows in every round. The test process
    /// also holds what earlier tests started (WebKit's threads and processes open descriptors of their own, seconds
    /// later): one round may grow by those, never two.
    func testKiosksRunOneAfterAnotherLetGoOfTheirLoopsAndDescriptors() throws {
        var previous: Set<Int32>?
        var grown: [String] = []
        var before = sigset_t()
        pthread_sigmask(SIG_BLOCK, nil, &before)
        for round in 0..<4 {
            weak var goneKiosk: Kiosk?
            weak var goneLoop: MainLoop?
            try {
                let harness = try KioskHarness("lifecycle", manualClock: false) { run, directory in
                    run.configuration.settings.frames = 30
                    run.configuration.settings.watch = true
                    run.configuration.playsDatabase = directory.appendingPathComponent("plays.db").path
                }
                goneKiosk = harness.kiosk
                goneLoop = harness.loop
                let subscriber = try ControlTestSocket(path: harness.socketPath, timeoutSeconds: 5)
                XCTAssertTrue(subscriber.write(Array(#"{"id": 1, "cmd": "subscribe", "args": {"events": ["flip"]}}"#.utf8 + [10])))
                try harness.kiosk.session.run(startingEngine: false)
                harness.kiosk.stopServing()
                try harness.kiosk.finish()
                XCTAssertEqual(harness.kiosk.session.flips.framesFlipped, 30, "round \(round)")
            }()
            XCTAssertNil(goneKiosk, "round \(round): the kiosk outlived its run")
            XCTAssertNil(goneLoop, "round \(round): the kiosk's loop outlived it")
            var after = sigset_t()
            pthread_sigmask(SIG_BLOCK, nil, &after)
            for signal in [SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2] {
                XCTAssertEqual(sigismember(&after, signal), sigismember(&before, signal),
                               "round \(round): signal \(signal) blocked or not as before the kiosk (children inherit the mask)")
            }
            let open = openDescriptors()
            // The first kiosk may open what the process keeps (font caches); the later ones may open nothing more.
            if let previous {
                let new = open.subtracting(previous).sorted()
                if !new.isEmpty { grown.append("round \(round): \(new.map { "\($0) \(describe($0))" })") }
            }
            previous = open
        }
        XCTAssertLessThanOrEqual(grown.count, 1, "descriptors left open by the kiosks: \(grown)")
        if !grown.isEmpty { print("kiosk lifecycle: one round grew, by something other than its kiosk: \(grown)") }
    }

    /// A client that cannot connect closes its socket once. A throwing initializer of a class whose properties are
    /// all set runs its `deinit` as well, so a socket closed on the way out of `init` and again in `deinit` was closed
    /// twice, and in a process with a kiosk in it the second close took whatever the kiosk's threads had just opened
    /// under that number. Here another thread keeps opening pipes while connects fail, and checks each pipe is still
    /// open when it closes it itself.
    func testAClientThatCannotConnectClosesItsSocketOnce() throws {
        let missing = "/tmp/kioskapp-no-such-socket-\(getpid())"
        let done = Lock(false), harmed = Lock(0)
        let opener = Thread {
            while !done.withLock({ $0 }) {
                var pair: [Int32] = [-1, -1]
                guard pipe(&pair) == 0 else { continue }
                sched_yield()
                for fd in pair {
                    if fcntl(fd, F_GETFD) < 0 { harmed.withLock { $0 += 1 } } else { close(fd) }
                }
            }
        }
        opener.start()
        defer { done.withLock { $0 = true } }
        for _ in 0..<3000 {
            XCTAssertThrowsError(try ControlTestSocket(path: missing, timeoutSeconds: 1))
        }
        done.withLock { $0 = true }
        XCTAssertEqual(harmed.withLock { $0 }, 0, "descriptors of another thread closed by a failed connect")
    }
}
