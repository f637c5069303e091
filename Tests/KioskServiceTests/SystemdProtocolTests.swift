import Glibc
import KioskCore
import KioskService
import KioskTestSupport
import XCTest

/// systemd's service protocol as kioskd speaks it without libsystemd: the notify socket's address and datagrams, the
/// watchdog's variables and socket activation's, each malformed value refused with an error that names it.
final class SystemdProtocolTests: XCTestCase {
    private func env(_ values: [String: String]) -> (String) -> String? { { values[$0] } }

    private func message(of error: Error) -> String { String(describing: error) }

    // MARK: NOTIFY_SOCKET

    func testNotifySocketIsAPathOrAnAbstractNameAndAnythingElseIsNamedInTheError() throws {
        XCTAssertEqual(try SystemdProtocol.NotifyAddress("/run/systemd/notify"), .path("/run/systemd/notify"))
        XCTAssertEqual(try SystemdProtocol.NotifyAddress("@/org/freedesktop/systemd1/notify/42"),
                       .abstract("/org/freedesktop/systemd1/notify/42"))
        for bad in ["", "run/notify", "@", "vsock:2:1234"] {
            XCTAssertThrowsError(try SystemdProtocol.NotifyAddress(bad), bad) { error in
                XCTAssertTrue(message(of: error).contains("NOTIFY_SOCKET=\(bad):"), message(of: error))
            }
        }
        let long = "/tmp/" + String(repeating: "n", count: 120)
        XCTAssertThrowsError(try SystemdProtocol.NotifyAddress(long)) { error in
            XCTAssertTrue(message(of: error).contains("longer than a Unix socket path"), message(of: error))
        }
    }

    func testADatagramReachesAPathSocketWhole() throws {
        let socket = try NotifySocket()
        try SystemdProtocol.notify("READY=1\nSTATUS=scene default, page 1", to: try SystemdProtocol.NotifyAddress(socket.path))
        XCTAssertEqual(try socket.waitFor("READY", timeout: 10) { $0.hasPrefix("READY=1") }, "READY=1\nSTATUS=scene default, page 1")
    }

    func testADatagramReachesAnAbstractSocket() throws {
        // systemd's own notify socket is abstract in some setups: the name is the address's exact length, no NUL.
        let name = "kioskd-notify-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = [UInt8(0)] + Array(name.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (i, b) in bytes.enumerated() { raw[i] = b } }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        XCTAssertEqual(bound, 0, "bind @\(name): errno \(errno)")

        try SystemdProtocol.notify("WATCHDOG=1", to: try SystemdProtocol.NotifyAddress("@" + name))
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&poller, 1, 10_000), 1, "a datagram within 10 s")
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        XCTAssertEqual(count, 10)
        XCTAssertEqual(String(decoding: buffer[0..<max(count, 0)], as: UTF8.self), "WATCHDOG=1")
    }

    func testANotifySocketThatIsGoneIsAnErrorNamingItAndTheErrno() {
        let path = "/tmp/kioskd-no-such-notify-\(getpid()).sock"
        XCTAssertThrowsError(try SystemdProtocol.notify("READY=1", to: .path(path))) { error in
            XCTAssertEqual((error as? SystemError)?.errno, ENOENT)
            XCTAssertTrue(message(of: error).contains("notify socket \(path): sendto"), message(of: error))
        }
    }

    // MARK: WATCHDOG_USEC

    func testTheWatchdogPeriodIsForThisProcessOnlyAndMalformedValuesAreNamed() throws {
        let pid: pid_t = 4242
        XCTAssertNil(try SystemdProtocol.watchdogMicroseconds(environment: env([:]), pid: pid))
        XCTAssertEqual(try SystemdProtocol.watchdogMicroseconds(environment: env(["WATCHDOG_USEC": "200000"]), pid: pid), 200_000)
        XCTAssertEqual(try SystemdProtocol.watchdogMicroseconds(
            environment: env(["WATCHDOG_USEC": "200000", "WATCHDOG_PID": "4242"]), pid: pid), 200_000)
        XCTAssertNil(try SystemdProtocol.watchdogMicroseconds(
            environment: env(["WATCHDOG_USEC": "200000", "WATCHDOG_PID": "4243"]), pid: pid), "another process's")
        for (variables, named) in [(["WATCHDOG_USEC": "abc"], "WATCHDOG_USEC=abc"), (["WATCHDOG_USEC": "0"], "WATCHDOG_USEC=0"),
                                   (["WATCHDOG_USEC": "-5"], "WATCHDOG_USEC=-5"),
                                   (["WATCHDOG_USEC": "1000", "WATCHDOG_PID": "me"], "WATCHDOG_PID=me")] {
            XCTAssertThrowsError(try SystemdProtocol.watchdogMicroseconds(environment: env(variables), pid: pid)) { error in
                XCTAssertTrue(message(of: error).hasPrefix(named + ":"), message(of: error))
            }
        }
    }

    // MARK: LISTEN_FDS

    /// Two descriptors at consecutive numbers (duplicates of a pipe's ends), close-on-exec cleared.
    private func consecutiveDescriptors() throws -> (Int32, [Int32]) {
        var ends: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&ends), 0)
        defer { ends.forEach { close($0) } }
        for start in stride(from: Int32(600), to: 1000, by: 7) {
            let first = fcntl(ends[0], F_DUPFD, start)
            let second = fcntl(ends[1], F_DUPFD, first + 1)
            if first >= 0, second == first + 1 { return (first, [first, second]) }
            close(first); close(second)
        }
        throw SystemError("no two consecutive free descriptors from 600")
    }

    func testSocketsPassedToThisProcessComeWithTheirNamesAndBecomeCloseOnExec() throws {
        let (start, fds) = try consecutiveDescriptors()
        defer { fds.forEach { close($0) } }
        let pid: pid_t = 777
        let named = try SystemdProtocol.listenFds(
            environment: env(["LISTEN_PID": "777", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "control:metrics"]), pid: pid, start: start)
        XCTAssertEqual(named.map(\.fd), fds)
        XCTAssertEqual(named.map(\.name), ["control", "metrics"])
        for fd in fds { XCTAssertNotEqual(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0, "descriptor \(fd) is close-on-exec") }

        let unnamed = try SystemdProtocol.listenFds(environment: env(["LISTEN_PID": "777", "LISTEN_FDS": "2"]), pid: pid, start: start)
        XCTAssertEqual(unnamed.map(\.name), ["unknown", "unknown"])
        XCTAssertTrue(try SystemdProtocol.listenFds(environment: env([:]), pid: pid, start: start).isEmpty, "not socket-activated")
        XCTAssertTrue(try SystemdProtocol.listenFds(environment: env(["LISTEN_PID": "778", "LISTEN_FDS": "2"]), pid: pid,
                                                    start: start).isEmpty, "another process's sockets")
    }

    func testMalformedSocketActivationVariablesAreNamed() throws {
        let (start, fds) = try consecutiveDescriptors()
        defer { fds.forEach { close($0) } }
        let cases: [([String: String], String)] = [
            (["LISTEN_PID": "x", "LISTEN_FDS": "1"], "LISTEN_PID=x:"),
            (["LISTEN_PID": "9", "LISTEN_FDS": "two"], "LISTEN_FDS=two:"),
            (["LISTEN_PID": "9", "LISTEN_FDS": "-1"], "LISTEN_FDS=-1:"),
            (["LISTEN_PID": "9", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "control"], "LISTEN_FDNAMES=control: names 1 sockets, LISTEN_FDS=2"),
        ]
        for (variables, named) in cases {
            XCTAssertThrowsError(try SystemdProtocol.listenFds(environment: env(variables), pid: 9, start: start)) { error in
                XCTAssertTrue(message(of: error).hasPrefix(named), message(of: error))
            }
        }
        // A count beyond what is open: the descriptor that is not is named, with EBADF.
        close(fds[1])
        XCTAssertThrowsError(try SystemdProtocol.listenFds(environment: env(["LISTEN_PID": "9", "LISTEN_FDS": "2"]), pid: 9, start: start)) { error in
            XCTAssertEqual((error as? SystemError)?.errno, EBADF)
            XCTAssertTrue(message(of: error).contains("descriptor \(start + 1)"), message(of: error))
        }
    }
}
