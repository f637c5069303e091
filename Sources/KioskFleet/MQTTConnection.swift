#if canImport(Glibc)
import Glibc
#endif
import CKioskMosquitto
import CMosquitto
import KioskCore
import Logging

/// Where and how to reach the broker, as `MQTTConnection` needs it. An immutable value; any thread.
public struct MQTTEndpoint: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var useTLS: Bool
    public var clientID: String
    public var keepaliveSeconds: Int
    public var username: String?
    public var password: String?
    public var caFile: String?
    public var certFile: String?
    public var keyFile: String?
    /// Published by the broker, retained, when the connection is lost without a DISCONNECT.
    public var will: (topic: String, payload: String)?
    /// The largest packet taken from the broker: asked for at an MQTT 5 CONNECT (Maximum Packet Size), and a
    /// larger message that arrives all the same is dropped before it is copied (`onOversized`).
    public var maximumPacketBytes = 256 * 1024

    public init(host: String, port: Int, useTLS: Bool = false, clientID: String, keepaliveSeconds: Int = 60) {
        self.host = host
        self.port = port
        self.useTLS = useTLS
        self.clientID = clientID
        self.keepaliveSeconds = keepaliveSeconds
    }

    public static func == (a: MQTTEndpoint, b: MQTTEndpoint) -> Bool {
        a.host == b.host && a.port == b.port && a.useTLS == b.useTLS && a.clientID == b.clientID
            && a.keepaliveSeconds == b.keepaliveSeconds && a.username == b.username && a.password == b.password
            && a.caFile == b.caFile && a.certFile == b.certFile && a.keyFile == b.keyFile
            && a.will?.topic == b.will?.topic && a.will?.payload == b.will?.payload && a.maximumPacketBytes == b.maximumPacketBytes
    }
}

/// A message received from the broker. An immutable value; any thread.
public struct MQTTMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var retained: Bool
    /// MQTT 5: where the sender wants the answer, and the bytes to give back with it.
    public var responseTopic: String? = nil
    public var correlationData: [UInt8]? = nil
}

/// One libmosquitto client driven by the main loop, with no thread of its own: the client's socket is a loop
/// source (readable always, writable while libmosquitto has output queued) served with `mosquitto_loop_read`
/// and `mosquitto_loop_write`, and a one-second timer runs `mosquitto_loop_misc` for keepalive pings. The TCP
/// connect is non-blocking (`mosquitto_connect_async` without the threaded interface), so a broker that is slow
/// or down never holds the loop; a lost or refused connection is retried after a backoff that doubles up to
/// `maxBackoff`, with jitter so a fleet does not reconnect in step. `onConnected` runs after every CONNACK: the
/// owner subscribes and publishes there, so subscriptions survive reconnects.
///
/// Each connection is started on a worker (`BackgroundJobs`): `resolver` turns the host name into an address
/// there (getaddrinfo may wait seconds on a slow DNS server), and the connect starts there too; the outcome
/// comes back to the loop as a value through the loop's waker. The client handle is handed to the worker for
/// that one call and the loop leaves it alone until the outcome is back.
///
/// Lives on the loop thread: create, use and stop it there. libmosquitto calls back only from inside the loop
/// calls made here, so the callbacks run on the loop thread too.
public final class MQTTConnection {
    /// Turns the broker's host name into a numeric address, on a worker thread: it may block, the loop never
    /// waits for it. The error names the host and the reason.
    public typealias Resolver = @Sendable (_ host: String, _ port: Int) -> Result<String, SystemError>

    public let endpoint: MQTTEndpoint
    public private(set) var isConnected = false
    /// Successful connections (CONNACK accepted) since start: 1 after the first, 2 after a reconnect.
    public private(set) var connectionCount = 0
    public var onConnected: (() -> Void)?
    public var onMessage: ((MQTTMessage) -> Void)?
    /// A message larger than `endpoint.maximumPacketBytes` arrived (a broker that ignores Maximum Packet Size, or
    /// MQTT 3.1.1, which has none): its topic and payload size. It was not copied or handed on.
    public var onOversized: ((_ topic: String, _ bytes: Int) -> Void)?
    /// Messages dropped as oversized since start.
    public private(set) var oversizedMessages = 0
    public var onDisconnected: (() -> Void)?
    /// Called on the loop thread with the message id of a QoS 1 message the broker acknowledged (PUBACK).
    public var onAcknowledged: ((Int32) -> Void)?
    /// Called with each retry's delay when a connection fails: what the backoff chose.
    public var onRetryScheduled: ((Duration) -> Void)?
    /// Connection attempts made, the first included.
    public private(set) var attempts = 0
    /// The longest one call into libmosquitto held the loop, the callbacks it made (requests answered) included:
    /// what the client costs a frame at worst.
    public var longestLoopHold: Duration { holds.longestHold }
    /// The longest one such call spent blocked (off the CPU of its own accord: a read, a write, a sleep), which a
    /// client that never waits on the loop keeps near zero however loaded the machine is (`LoopHoldMeter`).
    public var longestLoopBlock: Duration { holds.longestBlock }
    private var holds = LoopHoldMeter()
    /// Whether the protocol is MQTT 5 (the default) or 3.1.1 (after a broker refused 5).
    public private(set) var usesMQTT5 = true

    /// The first retry waits about this long; each failure doubles it up to `maxBackoff`.
    public var minBackoff: Duration = .milliseconds(250)
    public var maxBackoff: Duration = .seconds(10)
    /// How the host name is resolved before each connection attempt: getaddrinfo by default.
    public var resolver: Resolver = MQTTConnection.systemResolver
    /// The address the last connection attempt went to (numeric), once resolved.
    public private(set) var resolvedAddress: String?

    private let loop: MainLoop
    private var handle: MosquittoHandle
    /// The broker refused MQTT 5: the next attempt makes a 3.1.1 client (libmosquitto keeps a v5 client's CONNECT
    /// properties and refuses a 3.1.1 connect while it holds them).
    private var needsMQTT311Handle = false
    private var mosq: OpaquePointer { handle.pointer }
    private let connectJobs: BackgroundJobs
    /// A worker holds the client handle, starting a connection: nothing on the loop touches it until the outcome
    /// is back.
    private var connecting = false
    private var source: SourceHandle?
    private var miscTimer: TimerHandle?
    private var retryTimer: TimerHandle?
    private var failures = 0
    private var started = false
    private var stopped = false
    private let logger = Logger(label: "kioskd.mqtt")

    /// libmosquitto is loaded when the first client is made (see CKioskMosquitto): nil once it is loaded and
    /// initialised, else why not.
    private static let libraryFailure: String? = {
        if let failure = kiosk_mosquitto_load_failure() { return String(cString: failure) }
        let rc = mosquitto_lib_init()
        return rc == MOSQ_ERR_SUCCESS.rawValue ? nil : "mosquitto_lib_init failed: \(String(cString: mosquitto_strerror(rc)))"
    }()

    /// Sets the client up (credentials, TLS files, last will); nothing is sent until `start`.
    ///
    /// - Throws: `SystemError` naming the broker and libmosquitto's reason, e.g. a TLS file it cannot use.
    public init(loop: MainLoop, endpoint: MQTTEndpoint) throws {
        self.loop = loop
        self.endpoint = endpoint
        handle = try Self.makeHandle(endpoint, mqtt5: true)
        connectJobs = try BackgroundJobs(loop: loop, label: "kioskd.mqtt.connect")
        installCallbacks()
    }

    /// A client for `endpoint`: credentials, TLS files and last will set, speaking MQTT 5 (for response topics)
    /// or 3.1.1. Any thread.
    private static func makeHandle(_ endpoint: MQTTEndpoint, mqtt5: Bool) throws -> MosquittoHandle {
        let object = "MQTT broker \(endpoint.host):\(endpoint.port)"
        if let failure = libraryFailure { throw SystemError("\(object): \(failure)") }
        guard let pointer = mosquitto_new(endpoint.clientID, true, nil) else {
            throw SystemError("\(object): mosquitto_new for client id '\(endpoint.clientID)' failed", errno: errno)
        }
        let handle = MosquittoHandle(pointer)
        func check(_ rc: Int32, _ what: String) throws {
            guard rc == MOSQ_ERR_SUCCESS.rawValue else {
                throw SystemError("\(object): \(what): \(String(cString: mosquitto_strerror(rc)))")
            }
        }
        mosquitto_int_option(pointer, MOSQ_OPT_PROTOCOL_VERSION, Int32(mqtt5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311))
        if let username = endpoint.username {
            try check(mosquitto_username_pw_set(pointer, username, endpoint.password), "username")
        }
        if endpoint.useTLS {
            // Without a CA file the system's certificate directory verifies the broker.
            let capath = endpoint.caFile == nil ? "/etc/ssl/certs" : nil
            try check(mosquitto_tls_set(pointer, endpoint.caFile, capath, endpoint.certFile, endpoint.keyFile, nil),
                      "TLS (ca \(endpoint.caFile ?? "/etc/ssl/certs"), cert \(endpoint.certFile ?? "none"), key \(endpoint.keyFile ?? "none"))")
        }
        if let will = endpoint.will {
            let bytes = Array(will.payload.utf8)
            try check(mosquitto_will_set(pointer, will.topic, Int32(bytes.count), bytes, 1, true), "last will on \(will.topic)")
        }
        return handle
    }

    /// Points the handle's callbacks at this connection.
    private func installCallbacks() {
        let handle = mosq
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        mosquitto_connect_callback_set(handle) { _, context, code in
            guard let context else { return }
            Unmanaged<MQTTConnection>.fromOpaque(context).takeUnretainedValue().connected(code: code)
        }
        mosquitto_publish_callback_set(handle) { _, context, mid in
            guard let context else { return }
            Unmanaged<MQTTConnection>.fromOpaque(context).takeUnretainedValue().onAcknowledged?(mid)
        }
        mosquitto_message_v5_callback_set(handle) { _, context, message, properties in
            guard let context, let message else { return }
            let m = message.pointee
            let connection = Unmanaged<MQTTConnection>.fromOpaque(context).takeUnretainedValue()
            // Checked before anything is copied: libmosquitto's own buffer is all an oversized message costs.
            guard Int(m.payloadlen) <= connection.endpoint.maximumPacketBytes else {
                return connection.oversized(topic: String(cString: m.topic), bytes: Int(m.payloadlen))
            }
            let payload = m.payloadlen > 0 && m.payload != nil
                ? Array(UnsafeRawBufferPointer(start: m.payload, count: Int(m.payloadlen))) : []
            var received = MQTTMessage(topic: String(cString: m.topic), payload: payload, retained: m.retain)
            if let properties {
                var topic: UnsafeMutablePointer<CChar>?
                if mosquitto_property_read_string(properties, Int32(MQTT_PROP_RESPONSE_TOPIC.rawValue), &topic, false) != nil, let topic {
                    received.responseTopic = String(cString: topic)
                    free(topic)
                }
                var data: UnsafeMutableRawPointer?
                var length: UInt16 = 0
                if mosquitto_property_read_binary(properties, Int32(MQTT_PROP_CORRELATION_DATA.rawValue), &data, &length, false) != nil {
                    received.correlationData = data.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
                    free(data)
                }
            }
            connection.received(received)
        }
    }

    deinit {
        // The handle is destroyed with its last reference: here, or on the worker when one still holds it.
        stop()
    }

    private var name: String { "MQTT broker \(endpoint.host):\(endpoint.port)" }

    /// Starts connecting; failures are logged and retried, never thrown.
    public func start() {
        guard !started, !stopped else { return }
        started = true
        attempt()
    }

    /// Publishes `payload` on `topic`, with MQTT 5 correlation data when given; while disconnected the message is
    /// dropped (and false returned): what the owner publishes in `onConnected` is what a reconnect restores.
    @discardableResult
    public func publish(_ topic: String, _ payload: [UInt8], qos: Int32 = 1, retain: Bool = false, correlationData: [UInt8]? = nil) -> Bool {
        publishTracked(topic, payload, qos: qos, retain: retain, correlationData: correlationData) != nil
    }

    /// `publish`, returning the message id `onAcknowledged` will name once the broker has it (QoS 1); nil when it
    /// was not sent.
    public func publishTracked(_ topic: String, _ payload: [UInt8], qos: Int32 = 1, retain: Bool = false,
                               correlationData: [UInt8]? = nil) -> Int32? {
        guard isConnected, !connecting else { return nil }
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        if let correlationData, usesMQTT5 {
            let added = correlationData.withUnsafeBytes {
                mosquitto_property_add_binary(&properties, Int32(MQTT_PROP_CORRELATION_DATA.rawValue), $0.baseAddress, UInt16(clamping: $0.count))
            }
            if added != MOSQ_ERR_SUCCESS.rawValue { logger.warning("\(name): correlation data for \(topic): \(String(cString: mosquitto_strerror(added)))") }
        }
        var mid: Int32 = 0
        let rc = payload.withUnsafeBytes {
            mosquitto_publish_v5(mosq, &mid, topic, Int32(payload.count), $0.baseAddress, qos, retain, properties)
        }
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            logger.warning("\(name): publish on \(topic): \(String(cString: mosquitto_strerror(rc)))")
            serviced(rc, "publish")
            return nil
        }
        serviced(rc, "publish")
        return mid
    }

    public func publish(_ topic: String, _ text: String, qos: Int32 = 1, retain: Bool = false) {
        publish(topic, Array(text.utf8), qos: qos, retain: retain)
    }

    public func subscribe(_ pattern: String, qos: Int32 = 1) {
        guard isConnected, !connecting else { return }
        let rc = mosquitto_subscribe(mosq, nil, pattern, qos)
        if rc != MOSQ_ERR_SUCCESS.rawValue {
            logger.warning("\(name): subscribe to \(pattern): \(String(cString: mosquitto_strerror(rc)))")
        }
        serviced(rc, "subscribe")
    }

    public func unsubscribe(_ pattern: String) {
        guard isConnected, !connecting else { return }
        serviced(mosquitto_unsubscribe(mosq, nil, pattern), "unsubscribe")
    }

    /// Whether `topic` matches the subscription `pattern` (`+` and `#` wildcards).
    public static func topic(_ topic: String, matches pattern: String) -> Bool {
        var result = false
        return mosquitto_topic_matches_sub(pattern, topic, &result) == MOSQ_ERR_SUCCESS.rawValue && result
    }

    /// Publishes `finalMessages` (the owner's `offline`), sends DISCONNECT so the broker does not send the last
    /// will, and waits at most `flushTimeout` for the socket to take them. Idempotent.
    public func stop(finalMessages: [(topic: String, payload: String)] = [], flushTimeout: Duration = .milliseconds(500)) {
        guard !stopped else { return }
        if isConnected && !connecting {
            for message in finalMessages { publish(message.topic, message.payload, retain: true) }
            mosquitto_disconnect(mosq)
            flush(timeout: flushTimeout)
        }
        stopped = true
        isConnected = false
        retryTimer?.cancel()
        miscTimer?.cancel()
        source?.cancel()
        source = nil
    }

    // MARK: Connecting

    /// Starts a connection on the worker: resolve the host name, then `mosquitto_connect_async`. Every attempt
    /// resolves again, so a broker that moved is found.
    private func attempt() {
        retryTimer = nil
        guard !stopped, !connecting else { return }
        attempts += 1
        if needsMQTT311Handle {
            do {
                handle = try Self.makeHandle(endpoint, mqtt5: false)
                installCallbacks()
                needsMQTT311Handle = false
            } catch {
                logger.error("\(name): \(error)")
                return scheduleRetry()
            }
        }
        connecting = true
        let handle = self.handle, endpoint = self.endpoint, resolver = self.resolver, mqtt5 = usesMQTT5
        connectJobs.run({ () -> ConnectStart in
            let address: String
            switch resolver(endpoint.host, endpoint.port) {
            case .failure(let error): return .unresolved(error)
            case .success(let found): address = found
            }
            // TLS checks the broker's certificate against the name libmosquitto connects to, so it gets the name
            // (and resolves it again, here on the worker); plain TCP goes to the address found.
            let target = endpoint.useTLS ? endpoint.host : address
            // MQTT 5 asks the broker for no packet over the bound. libmosquitto takes CONNECT properties only in its
            // blocking connect, which is fine here on the worker; it leaves the socket non-blocking for the loop,
            // and its reconnects send the same properties. A TLS connection keeps the non-blocking start, whose
            // handshake the loop drives: there the check before copying (`onOversized`) alone bounds what is taken.
            guard mqtt5, !endpoint.useTLS else {
                let rc = mosquitto_connect_async(handle.pointer, target, Int32(endpoint.port), Int32(endpoint.keepaliveSeconds))
                return .started(address: address, code: rc, errno: errno)
            }
            var properties: OpaquePointer?
            defer { mosquitto_property_free_all(&properties) }
            let added = mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_MAXIMUM_PACKET_SIZE.rawValue),
                                                     UInt32(clamping: endpoint.maximumPacketBytes))
            guard added == MOSQ_ERR_SUCCESS.rawValue else { return .started(address: address, code: added, errno: 0) }
            let rc = mosquitto_connect_bind_v5(handle.pointer, target, Int32(endpoint.port), Int32(endpoint.keepaliveSeconds), nil, properties)
            return .started(address: address, code: rc, errno: errno)
        }, then: { [weak self] outcome in self?.connectStarted(outcome) })
    }

    /// On the loop thread, with the worker done with the handle.
    private func connectStarted(_ outcome: ConnectStart) {
        connecting = false
        guard !stopped else { return }
        if case .unresolved(let error) = outcome {
            // Said once per outage; the retries that follow log at debug.
            logger.log(level: failures == 0 ? .warning : .debug, "\(name): \(error); retrying")
            scheduleRetry()
            return
        }
        guard case .started(let address, let rc, let error) = outcome else { return }
        resolvedAddress = address
        guard rc == MOSQ_ERR_SUCCESS.rawValue else {
            let reason = rc == MOSQ_ERR_ERRNO.rawValue ? errnoDescription(error) : String(cString: mosquitto_strerror(rc))
            logger.log(level: failures == 0 ? .warning : .debug, "\(name) (\(address)): connect: \(reason); retrying")
            scheduleRetry()
            return
        }
        watchSocket()
        if miscTimer == nil {
            miscTimer = loop.addTimer(after: .seconds(1), repeating: .seconds(1)) { [unowned self] in
                guard source != nil, !connecting else { return }
                serviced(timed { mosquitto_loop_misc(mosq) }, "keepalive")
            }
        }
    }

    private func scheduleRetry() {
        guard !stopped, retryTimer == nil else { return }
        let base = min(maxBackoff.nanosecondsClamped, minBackoff.nanosecondsClamped << min(failures, 20))
        failures += 1
        // Half the backoff fixed, half random: kiosks that lost the same broker spread their reconnects.
        let delay = base / 2 + Int64.random(in: 0...max(1, base / 2))
        retryTimer = loop.addTimer(after: .nanoseconds(delay)) { [unowned self] in attempt() }
        onRetryScheduled?(.nanoseconds(delay))
    }

    private func watchSocket() {
        let fd = mosquitto_socket(mosq)
        guard fd >= 0 else { return }
        if let source, source.fd == fd { return }
        source?.cancel()
        do {
            source = try loop.addSource(fd: fd, events: interest) { [unowned self] ready in
                if ready.contains(.writable) {
                    guard serviced(timed { mosquitto_loop_write(mosq, 1) }, "write") else { return }
                    // A TLS handshake in progress advances only through loop_read, whichever way it waits.
                    if endpoint.useTLS && !isConnected { guard serviced(timed { mosquitto_loop_read(mosq, 1) }, "TLS handshake") else { return } }
                }
                if ready.contains(.readable) || ready.contains(.hangup) || ready.contains(.error) {
                    serviced(timed { mosquitto_loop_read(mosq, 1) }, "read")
                }
            }
        } catch {
            logger.error("\(name): cannot watch its socket: \(error)")
            mosquitto_disconnect(mosq)
            scheduleRetry()
        }
    }

    private func timed(_ call: () -> Int32) -> Int32 {
        let mark = LoopHoldMeter.mark()
        let rc = call()
        holds.record(since: mark)
        return rc
    }

    private var interest: IOEvents { mosquitto_want_write(mosq) ? [.readable, .writable] : .readable }

    /// After every library call: follows the socket (closed on a lost connection, replaced by a reconnect) and
    /// whether output waits. Returns whether the call succeeded and the connection is still up.
    @discardableResult
    private func serviced(_ rc: Int32, _ what: String) -> Bool {
        let fd = mosquitto_socket(mosq)
        guard fd >= 0 else {
            // libmosquitto closed the socket, which epoll forgot on its own.
            source?.cancel()
            source = nil
            lost(rc, what)
            return false
        }
        if let source, source.fd == fd {
            if source.events != interest { try? source.updateEvents(interest) }
        } else if !stopped {
            watchSocket()
        }
        return rc == MOSQ_ERR_SUCCESS.rawValue
    }

    private func lost(_ rc: Int32, _ what: String) {
        guard !stopped else { return }
        let reason = rc == MOSQ_ERR_ERRNO.rawValue ? errnoDescription(errno) : String(cString: mosquitto_strerror(rc))
        if isConnected {
            logger.warning("\(name): connection lost (\(what): \(reason)); reconnecting")
            isConnected = false
            onDisconnected?()
        } else {
            logger.log(level: failures == 0 ? .warning : .debug, "\(name): not reachable (\(what): \(reason)); retrying")
        }
        scheduleRetry()
    }

    // MARK: Callbacks (from inside loop_read/write/misc, on the loop thread)

    private func connected(code: Int32) {
        // 1: a 3.1.1 broker's "unacceptable protocol version"; 132: the same from a broker that knows MQTT 5.
        if usesMQTT5 && (code == 1 || code == 132) {
            logger.info("\(name): the broker does not take MQTT 5; using 3.1.1 (no response topics)")
            usesMQTT5 = false
            needsMQTT311Handle = true
            return
        }
        guard code == 0 else {
            logger.error("\(name): connection refused: \(String(cString: mosquitto_connack_string(code)))")
            return
        }
        failures = 0
        isConnected = true
        connectionCount += 1
        logger.info("\(name): connected as '\(endpoint.clientID)'")
        onConnected?()
    }

    private func received(_ message: MQTTMessage) {
        onMessage?(message)
    }

    private func oversized(topic: String, bytes: Int) {
        oversizedMessages += 1
        logger.warning("\(name): dropped a message of \(bytes) bytes on \(topic): more than \(endpoint.maximumPacketBytes), the limit (mqtt.max_packet_size)")
        onOversized?(topic, bytes)
    }

    /// Writes what is queued until the socket takes it all or `timeout` passes: only at stop.
    private func flush(timeout: Duration) {
        let deadline = MonotonicInstant.now() + timeout
        while mosquitto_want_write(mosq) {
            let fd = mosquitto_socket(mosq)
            guard fd >= 0, MonotonicInstant.now() < deadline else { return }
            var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            let remaining = Int32(max(1, (deadline - MonotonicInstant.now()).nanosecondsClamped / 1_000_000))
            guard poll(&descriptor, 1, remaining) > 0 else { return }
            guard mosquitto_loop_write(mosq, 1) == MOSQ_ERR_SUCCESS.rawValue else { return }
        }
    }
}
