import Foundation
import KioskCore
import KioskFleet
import KioskTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The MQTT client on a real epoll loop: a broker that never answers or is not there never holds the loop, and
/// failed connections are retried with a doubling, capped, jittered backoff.
final class MQTTConnectionTests: XCTestCase {
    /// Runs `body` on a thread of its own that owns a fresh loop, so a loop that blocked would fail this test at
    /// the deadline instead of hanging it.
    private func onLoopThread<Result: Sendable>(timeout: Double = 30, _ body: @escaping @Sendable (MainLoop) throws -> Result) throws -> Result {
        let box = ResultBox<Result>()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.set(Swift.Result { try body(try MainLoop.epoll()) })
            done.signal()
        }
        thread.start()
        guard done.wait(timeout: .now() + timeout) == .success else {
            XCTFail("the loop thread did not finish within \(timeout) s: the loop was blocked")
            throw ControlTestError("loop blocked")
        }
        return try XCTUnwrap(box.value).get()
    }

    /// A TCP socket on 127.0.0.1 with a port: listening (the kernel completes handshakes nobody accepts) or not.
    private func loopbackSocket(listening: Bool) throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard ok, !listening || listen(fd, 4) == 0 else { throw ControlTestError("loopback socket: errno \(errno)") }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    func testABrokerThatNeverAnswersNeverHoldsTheLoop() throws {
        let (listener, port) = try loopbackSocket(listening: true)
        defer { close(listener) }
        let (ticks, connected, attempts) = try onLoopThread { loop in
            let connection = try MQTTConnection(loop: loop, endpoint: MQTTEndpoint(host: "127.0.0.1", port: port, clientID: "silent", keepaliveSeconds: 30))
            connection.start()
            var ticks = 0
            let timer = loop.addTimer(after: .milliseconds(5), repeating: .milliseconds(5)) {
                ticks += 1
                if ticks == 100 { loop.stop() }
            }
            loop.run()
            timer.cancel()
            return (ticks, connection.isConnected, connection.attempts)
        }
        XCTAssertEqual(ticks, 100, "the loop kept turning while the broker said nothing")
        XCTAssertFalse(connected)
        XCTAssertEqual(attempts, 1, "still waiting for CONNACK on the first connection, not retrying")
        // The client did reach the broker's socket and sent its CONNECT (packet type 1) without waiting for it.
        let peer = accept(listener, nil, nil)
        XCTAssertGreaterThanOrEqual(peer, 0)
        defer { close(peer) }
        var first: UInt8 = 0
        XCTAssertEqual(recv(peer, &first, 1, Int32(MSG_DONTWAIT)), 1)
        XCTAssertEqual(first, 0x10, "an MQTT CONNECT")
    }

    func testASilentBrokerIsDroppedAtTheKeepaliveAndTriedAgain() throws {
        let (listener, port) = try loopbackSocket(listening: true)
        defer { close(listener) }
        let (retryAfter, attempts, connected) = try onLoopThread { loop in
            let connection = try MQTTConnection(loop: loop, endpoint: MQTTEndpoint(host: "127.0.0.1", port: port, clientID: "silent", keepaliveSeconds: 5))
            connection.minBackoff = .milliseconds(10)
            let started = MonotonicInstant.now()
            var retryAfter: Duration?
            connection.onRetryScheduled = { _ in
                retryAfter = MonotonicInstant.now() - started
                loop.stop()
            }
            connection.start()
            let deadline = loop.addTimer(after: .seconds(20)) { loop.stop() }
            loop.run()
            deadline.cancel()
            return (retryAfter, connection.attempts, connection.isConnected)
        }
        XCTAssertFalse(connected)
        XCTAssertEqual(attempts, 1)
        let after = try XCTUnwrap(retryAfter, "no retry within 20 s: the silent connection was kept")
        XCTAssertGreaterThanOrEqual(after, .seconds(4), "given up by the keepalive check, not at once")
    }

    func testRefusedConnectionsAreRetriedWithADoublingCappedJitteredBackoff() throws {
        // Bound but not listening: every connect is refused.
        let (reserved, port) = try loopbackSocket(listening: false)
        defer { close(reserved) }
        let (delays, attempts, connected) = try onLoopThread { loop in
            let connection = try MQTTConnection(loop: loop, endpoint: MQTTEndpoint(host: "127.0.0.1", port: port, clientID: "refused"))
            connection.minBackoff = .milliseconds(10)
            connection.maxBackoff = .milliseconds(80)
            var delays: [Duration] = []
            connection.onRetryScheduled = { delay in
                delays.append(delay)
                if delays.count == 8 { loop.stop() }
            }
            connection.start()
            loop.run()
            return (delays, connection.attempts, connection.isConnected)
        }
        XCTAssertFalse(connected)
        XCTAssertEqual(attempts, 8)
        for (n, delay) in delays.enumerated() {
            let base = Duration.milliseconds(min(80, 10 << n))
            XCTAssertTrue(delay >= base / 2 && delay <= base, "retry \(n): \(delay) is outside [\(base / 2), \(base)]")
        }
        XCTAssertEqual(Set(delays.suffix(4)).count > 1, true, "jitter spreads the retries: \(delays)")
    }
}

extension MQTTConnectionTests {
    func testABrokerThatRefusesMQTT5GetsMQTT311NextTime() throws {
        let (listener, port) = try loopbackSocket(listening: true)
        defer { close(listener) }
        // A 3.1.1-only broker: refuses the MQTT 5 CONNECT with a 3.1.1 CONNACK (return code 1), accepts 3.1.1.
        let levels = ResultBox<[UInt8]>()
        let brokerDone = DispatchSemaphore(value: 0)
        let broker = Thread {
            defer { brokerDone.signal() }
            var seen: [UInt8] = []
            for answer: [UInt8] in [[0x20, 0x02, 0x00, 0x01], [0x20, 0x02, 0x00, 0x00]] {
                var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&ready, 1, 20_000) == 1 else { break }
                let peer = accept(listener, nil, nil)
                var packet = [UInt8](repeating: 0, count: 256)
                var pollPeer = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
                guard poll(&pollPeer, 1, 20_000) == 1, recv(peer, &packet, packet.count, 0) > 9, packet[0] == 0x10 else { close(peer); break }
                // Fixed header (2 bytes), protocol name (6), then the protocol level.
                seen.append(packet[8])
                _ = send(peer, answer, answer.count, Int32(MSG_NOSIGNAL))
                if answer[3] == 0x01 { close(peer) } else {
                    // Kept open until the client has seen the CONNACK and the test is over.
                    var hold = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
                    _ = poll(&hold, 1, 5_000)
                    close(peer)
                }
            }
            levels.set(.success(seen))
        }
        broker.start()
        let (connected, mqtt5, attempts) = try onLoopThread { loop in
            let connection = try MQTTConnection(loop: loop, endpoint: MQTTEndpoint(host: "127.0.0.1", port: port, clientID: "fallback"))
            connection.minBackoff = .milliseconds(10)
            connection.onConnected = { loop.stop() }
            connection.start()
            let deadline = loop.addTimer(after: .seconds(20)) { loop.stop() }
            loop.run()
            deadline.cancel()
            let result = (connection.isConnected, connection.usesMQTT5, connection.attempts)
            connection.stop()
            return result
        }
        XCTAssertTrue(connected)
        XCTAssertFalse(mqtt5)
        XCTAssertEqual(attempts, 2)
        XCTAssertEqual(brokerDone.wait(timeout: .now() + 30), .success, "the fake broker finished")
        XCTAssertEqual(try levels.value?.get(), [5, 4], "MQTT 5 first, then 3.1.1")
    }
}

/// A value another thread produces. Any thread.
private final class ResultBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Result<Value, any Error>?
    func set(_ value: Result<Value, any Error>) { lock.withLock { stored = value } }
    var value: Result<Value, any Error>? { lock.withLock { stored } }
}

extension MQTTConnectionTests {
    /// A resolver that blocks (a DNS server that takes its time) holds a worker, never the loop: the loop keeps
    /// turning until the test lets the resolver answer, and then the connection goes to the address it gave.
    func testASlowResolverNeverHoldsTheLoop() throws {
        let broker = try MosquittoBroker()
        let port = broker.port
        let (ticksWhileBlocked, connected, address, hold, asked) = try onLoopThread { loop in
            let entered = Lock(false)
            let asked = Lock<[String]>([])
            let answer = DispatchSemaphore(value: 0)
            let connection = try MQTTConnection(loop: loop, endpoint: MQTTEndpoint(host: "broker.invalid", port: port, clientID: "slow-dns"))
            connection.resolver = { host, _ in
                asked.withLock { $0.append(host) }
                entered.withLock { $0 = true }
                // Bounded, so that a run whose loop never lets it answer fails on its figures instead of leaving
                // the worker blocked.
                _ = answer.wait(timeout: .now() + 30)
                return .success("127.0.0.1")
            }
            var ticksWhileBlocked = 0
            var released = false
            let timer = loop.addTimer(after: .milliseconds(5), repeating: .milliseconds(5)) {
                guard !released, entered.withLock({ $0 }) else { return }
                ticksWhileBlocked += 1
                if ticksWhileBlocked == 100 {
                    released = true
                    answer.signal()
                }
            }
            connection.onConnected = { loop.stop() }
            connection.start()
            let deadline = loop.addTimer(after: .seconds(20)) { loop.stop() }
            loop.run()
            timer.cancel()
            deadline.cancel()
            let result = (ticksWhileBlocked, connection.isConnected, connection.resolvedAddress, connection.longestLoopHold, asked.withLock { $0 })
            connection.stop()
            return result
        }
        XCTAssertEqual(asked, ["broker.invalid"], "the resolver is asked for the broker's name")
        XCTAssertEqual(ticksWhileBlocked, 100, "the loop turned while the resolver was blocked")
        XCTAssertTrue(connected, "connected to the address the resolver gave")
        XCTAssertEqual(address, "127.0.0.1")
        XCTAssertLessThan(hold, .milliseconds(50), "no call into libmosquitto on the loop waited for the resolver")
    }

    /// A name that does not resolve is retried with the backoff, resolved again each time; no connect is tried.
    func testAnUnresolvedNameIsRetriedWithTheBackoff() throws {
        let (attempts, lookups, connected) = try onLoopThread { loop in
            let lookups = Lock(0)
            let connection = try MQTTConnection(loop: loop, endpoint: MQTTEndpoint(host: "nowhere.invalid", port: 1883, clientID: "nxdomain"))
            connection.resolver = { host, port in
                lookups.withLock { $0 += 1 }
                return .failure(SystemError("MQTT broker \(host):\(port): cannot resolve the host name: Name or service not known"))
            }
            connection.minBackoff = .milliseconds(10)
            var retries = 0
            connection.onRetryScheduled = { _ in
                retries += 1
                if retries == 3 { loop.stop() }
            }
            connection.start()
            let deadline = loop.addTimer(after: .seconds(20)) { loop.stop() }
            loop.run()
            deadline.cancel()
            return (connection.attempts, lookups.withLock { $0 }, connection.isConnected)
        }
        XCTAssertEqual(attempts, 3)
        XCTAssertEqual(lookups, 3, "each attempt resolves again")
        XCTAssertFalse(connected)
    }
}
