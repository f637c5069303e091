import Foundation
import KioskControl
import KioskCore
import KioskScene
import Logging

/// A kiosk in a fleet: its topics on one broker, over an `MQTTConnection`.
///
/// - `<prefix>/status`: `online`, retained; `offline` by the last will or on a clean stop.
/// - `<prefix>/state`: retained JSON from `state()`, published when it changes (apart from the figures that
///   always move) and at least every `stateInterval`.
/// - `<prefix>/cmd` and `kioskd/group/<name>/cmd`: control-socket requests, run through the same
///   `CommandRegistry`, answered on `<prefix>/reply` with the id echoed (or on the MQTT 5 response topic the
///   request names, under `<prefix>/`, with its correlation data). Commands outside `mqtt.allow` (by default
///   everything but `ping` and `stats`) get `permission_denied`.
/// - `<prefix>/event/<name>`: the events named in `mqtt.events`.
/// - `<prefix>/screenshot/request`: with `screenshot` in `mqtt.allow`, publishes the screen as PNG bytes on
///   `<prefix>/screenshot` (retained with `mqtt.screenshot_retain`). One capture at a time: requests that come
///   while one is taken are answered by its picture; at most `mqtt.screenshots_per_minute` in a minute.
/// - `<prefix>/action`: the name of each `emit` action as its widget is pressed (Home Assistant's device triggers).
/// - The scene's data sources: each matching message sets its data key through `onData`. Payloads are read off the
///   loop, one at a time, the newest per topic (older ones waiting are replaced); one that takes longer than
///   `payloadTimeBudget` is dropped.
///
/// Every message refused or dropped (too large, over a budget, over the data limits) is counted and named through
/// `onError`, which the owner turns into an `error` event.
///
/// Lives on the loop thread, like the registry it calls.
public final class FleetClient {
    public let settings: MQTTSettings
    public let prefix: String
    public let connection: MQTTConnection
    /// The kiosk's state as `<prefix>/state` carries it. `volatileStateKeys` are left out of the change check.
    public var state: () -> JSONValue = { [:] }
    /// Sets data keys from data-source messages (the scene's `data.set`); an error names why they were refused.
    public var onData: (([String: String]) throws -> Void)?
    /// A message refused or dropped: the `error` event's code and message.
    public var onError: ((_ code: String, _ message: String) -> Void)?
    /// Data-source payloads dropped (oversized, over the time budget, too many topics waiting, over the data
    /// limits) and replaced by a newer one on their topic before they were read.
    public private(set) var payloadsDropped = 0
    public private(set) var payloadsReplaced = 0
    /// Screenshot requests answered by a capture already under way, and refused by the rate limit.
    public private(set) var screenshotsCoalesced = 0
    public private(set) var screenshotsRefused = 0
    /// Requests answered and refused, for logs and tests.
    public private(set) var requestsAnswered = 0
    /// The scene's page names: the Home Assistant select's options.
    public var pages: () -> [String] = { [] }
    /// The names the scene's `emit` actions emit: a Home Assistant device trigger each.
    public var actions: () -> [String] = { [] }
    /// kioskd's version, for the Home Assistant device.
    public var version = ""

    public static let volatileStateKeys: Set<String> = ["fps", "missed_vblanks", "uptime_s", "frames_flipped", "mqtt_longest_loop_hold_ms",
                                                              "mqtt_longest_loop_block_ms"]
    /// Largest `cmd` payload taken, as the socket's longest line.
    public static let maxRequestBytes = LineFramer.defaultMaxLineBytes
    /// The longest reading one data-source payload may take (on a worker); a longer one is dropped.
    public static let payloadTimeBudget: Duration = .milliseconds(100)
    /// Topics whose newest payload may wait to be read; a message on another topic beyond them is dropped.
    public static let maximumWaitingTopics = 256

    private let registry: CommandRegistry
    private let loop: MainLoop
    private let client = ControlConnection.remote(number: 0)
    private var dataSources: [DataSource] = []
    /// Reads data-source payloads, one at a time.
    private let payloadJobs: BackgroundJobs
    /// The newest unread payload of each topic, and the order their topics arrived in.
    private var waitingPayloads: [String: MQTTMessage] = [:]
    private var waitingTopics: [String] = []
    private var readingPayload = false
    private var screenshotInFlight = false
    /// When each capture of the last minute started.
    private var recentScreenshots: [MonotonicInstant] = []
    private var stateTimer: TimerHandle?
    private var lastState: JSONValue?
    private var lastStatePublished: MonotonicInstant?
    /// The device-trigger configs published, so that those the next scene lacks are removed.
    private var triggerTopics: Set<String> = []
    private let stateInterval: Duration
    private let logger = Logger(label: "kioskd.mqtt")

    /// Sets up the client; `start` connects. `password` is the one `settings.password()` read from its file
    /// when kioskd started, before the loop.
    ///
    /// - Throws: an error naming the problem: a command in `allow` that does not exist, a client libmosquitto
    ///   refuses.
    public init(settings: MQTTSettings, password: String? = nil, registry: CommandRegistry, loop: MainLoop,
                deviceID: String = MQTTSettings.hostDeviceID(), stateInterval: Duration = .seconds(60)) throws {
        self.settings = settings
        self.registry = registry
        self.loop = loop
        self.stateInterval = stateInterval
        prefix = settings.resolvedTopicPrefix(deviceID: deviceID)
        let unknown = settings.allowedCommands.filter { registry.argumentNames(of: $0) == nil }.sorted()
        guard unknown.isEmpty else {
            throw SystemError("mqtt.allow: unknown command \(unknown.map { "'\($0)'" }.joined(separator: ", ")); known: \(registry.commandNames.joined(separator: ", "))")
        }
        var endpoint = MQTTEndpoint(host: settings.host, port: settings.port, useTLS: settings.useTLS,
                                    clientID: settings.resolvedClientID(deviceID: deviceID), keepaliveSeconds: settings.keepaliveSeconds)
        endpoint.username = settings.username
        endpoint.password = password
        endpoint.caFile = settings.caFile
        endpoint.certFile = settings.certFile
        endpoint.keyFile = settings.keyFile
        endpoint.will = (topic: "\(prefix)/status", payload: "offline")
        endpoint.maximumPacketBytes = settings.maximumPacketBytes
        connection = try MQTTConnection(loop: loop, endpoint: endpoint)
        payloadJobs = try BackgroundJobs(loop: loop, label: "kioskd.mqtt.payloads")
        connection.onConnected = { [unowned self] in connected() }
        connection.onAcknowledged = { [unowned self] mid in acknowledgedListeners.emit(mid) }
        connection.onMessage = { [unowned self] message in received(message) }
        connection.onOversized = { [unowned self] topic, bytes in
            if dataSources.contains(where: { MQTTConnection.topic(topic, matches: $0.topic) }) { payloadsDropped += 1 }
            onError?("payload_too_large", "MQTT \(topic): a message of \(bytes) bytes was dropped: more than \(settings.maximumPacketBytes), the limit (mqtt.max_packet_size)")
        }
    }

    deinit { stop() }

    public var commandTopic: String { "\(prefix)/cmd" }
    public var replyTopic: String { "\(prefix)/reply" }
    public var statusTopic: String { "\(prefix)/status" }
    public var stateTopic: String { "\(prefix)/state" }
    /// Anything sent here publishes the screen as PNG bytes on `screenshotTopic`.
    public var screenshotRequestTopic: String { "\(prefix)/screenshot/request" }
    public var screenshotTopic: String { "\(prefix)/screenshot" }
    /// JPEG thumbnails of the screen, retained (`mqtt.thumbnail_every`).
    public var thumbnailTopic: String { "\(prefix)/thumbnail" }
    public var actionTopic: String { "\(prefix)/action" }
    /// Proof of play's records, QoS 1, each with its sequence number.
    private let connectedListeners = Listeners<Void>()
    private let acknowledgedListeners = Listeners<Int32>()
    public var playsTopic: String { "\(prefix)/plays" }
    public func groupCommandTopic(_ group: String) -> String { "kioskd/group/\(group)/cmd" }

    public func start() {
        connection.start()
        // Changes that no event announces (display power through a command) are noticed within this period.
        stateTimer = loop.addTimer(after: .seconds(2), repeating: .seconds(2)) { [unowned self] in publishState(force: false) }
    }

    /// Publishes `offline` and disconnects cleanly.
    public func stop() {
        stateTimer?.cancel()
        syncGroup?.stop()
        connection.stop(finalMessages: [(statusTopic, "offline")])
    }

    /// The scene's data sources: the topics of the previous scene are left, the new ones subscribed (their
    /// retained messages give the values at once).
    public func setDataSources(_ sources: [DataSource]) {
        let old = Set(dataSources.map(\.topic)), new = Set(sources.map(\.topic))
        dataSources = sources
        for topic in old.subtracting(new) { connection.unsubscribe(topic) }
        for topic in new.subtracting(old).sorted() { connection.subscribe(topic) }
    }

    /// Whether `mqtt.events` names `name` (so its data is worth building).
    public func publishes(event name: String) -> Bool { settings.events.contains(name) }

    /// Publishes `{"event": name, "data": data}` on `<prefix>/event/<name>` when `mqtt.events` names it.
    public func publish(event name: String, data: JSONValue) {
        guard settings.events.contains(name), connection.isConnected else { return }
        connection.publish("\(prefix)/event/\(name)", Self.text(ControlMessage.event(name, data: data)), qos: 0)
    }

    /// A widget whose `on_press` is `{emit: name}` was pressed: `name` goes out on `actionTopic` (QoS 0, not
    /// retained: a trigger fires once, as it happens).
    public func actionEmitted(_ name: String) {
        guard connection.isConnected else { return }
        connection.publish(actionTopic, Array(name.utf8), qos: 0)
    }

    /// Something in the state may have changed: publish it now if it did.
    public func stateMayHaveChanged() { publishState(force: false) }

    /// A new scene: its data sources replace the old ones, and Home Assistant learns its pages and triggers.
    public func sceneChanged(dataSources: [DataSource]) {
        setDataSources(dataSources)
        publishDiscovery()
        publishState(force: false)
    }

    public var homeAssistant: HomeAssistantDiscovery { HomeAssistantDiscovery(prefix: prefix, clientID: connection.endpoint.clientID, version: version) }

    // MARK: Connection

    private func connected() {
        connection.subscribe(commandTopic)
        connection.subscribe(screenshotRequestTopic)
        for group in settings.groups { connection.subscribe(groupCommandTopic(group)) }
        for topic in Set(dataSources.map(\.topic)).sorted() { connection.subscribe(topic) }
        if settings.homeAssistant {
            let ha = homeAssistant
            for topic in [HomeAssistantDiscovery.statusTopic, ha.powerCommandTopic, ha.pageCommandTopic] {
                connection.subscribe(topic)
            }
        }
        connection.publish(statusTopic, "online", retain: true)
        syncGroup?.start()
        publishState(force: true)
        publishDiscovery()
        connectedListeners.emit(())
    }

    /// The sync group this kiosk is a member of (`joinSyncGroup`), nil for none.
    public private(set) var syncGroup: SyncGroup?

    /// Makes this kiosk a member of the sync group `settings` names, under its MQTT client id, with its status
    /// topic's last will telling the others when it is gone. Before `start`.
    @discardableResult
    public func joinSyncGroup(_ settings: SyncSettings, clientID: String) -> SyncGroup {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let group = SyncGroup(group: settings.group, id: clientID, role: SyncGroup.Role(rawValue: settings.role.rawValue) ?? .auto,
                              statusTopic: statusTopic, transport: MQTTSyncTransport(connection), loop: loop,
                              localNow: { Int64(MonotonicInstant.now().nanoseconds) },
                              realNow: Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec))
        syncGroup = group
        return group
    }

    /// `listener` hears each (re)connection, after the client's own subscriptions and state; main thread.
    public func addConnectedListener(_ listener: @escaping () -> Void) -> ListenerToken { connectedListeners.add { listener() } }

    /// `listener` hears the message id of each QoS 1 message the broker acknowledged (PUBACK); main thread.
    public func addAcknowledgedListener(_ listener: @escaping (Int32) -> Void) -> ListenerToken { acknowledgedListeners.add(listener) }

    /// Publishes a JPEG thumbnail of the screen, retained at QoS 0 (a newer one replaces it; a lost one is
    /// replaced by the next); false when not connected.
    @discardableResult
    public func publishThumbnail(_ jpeg: [UInt8]) -> Bool {
        guard connection.isConnected else { return false }
        return connection.publish(thumbnailTopic, jpeg, qos: 0, retain: true)
    }

    /// Publishes a proof-of-play record at QoS 1 on `playsTopic`; returns the message id its PUBACK will name, nil
    /// when it was not sent (not connected).
    public func publishPlay(_ payload: String) -> Int32? {
        connection.publishTracked(playsTopic, Array(payload.utf8), qos: 1)
    }

    /// Publishes every discovery config, retained; a device trigger the scene no longer has gets an empty
    /// retained config, which removes it from Home Assistant and from the broker.
    private func publishDiscovery() {
        guard settings.homeAssistant, connection.isConnected else { return }
        let ha = homeAssistant
        for config in ha.configs(pages: pages(), actions: actions()) {
            connection.publish(config.topic, Self.text(config.payload), retain: true)
        }
        let triggers = Set(ha.triggers(actions: actions()).map(\.topic))
        for stale in triggerTopics.subtracting(triggers).sorted() { connection.publish(stale, [], retain: true) }
        triggerTopics = triggers
    }

    /// Home Assistant's topics: its restart, and the switch, select and image entities' commands. True when
    /// `message` was one of them.
    private func receivedFromHomeAssistant(_ message: MQTTMessage) -> Bool {
        guard settings.homeAssistant else { return false }
        let ha = homeAssistant
        let text = String(decoding: message.payload, as: UTF8.self)
        switch message.topic {
        case HomeAssistantDiscovery.statusTopic:
            // Home Assistant forgets discovered devices when it restarts without a persistent broker.
            if text == "online" { publishDiscovery() }
        case ha.powerCommandTopic where !message.retained:
            guard text == "ON" || text == "OFF" else {
                reply(ControlMessage.failure(id: "ha-power", error: .invalidArgument("\(message.topic): expected ON or OFF, got '\(text.prefix(40))'")))
                break
            }
            run(ControlRequest(id: "ha-power", command: ControlCommandName.outputPower.rawValue, arguments: ["on": .bool(text == "ON")]))
            publishState(force: false)
        case ha.pageCommandTopic where !message.retained:
            run(ControlRequest(id: "ha-page", command: "page.show", arguments: ["name": .string(text)]))
        default:
            return message.topic == ha.powerCommandTopic || message.topic == ha.pageCommandTopic
        }
        return true
    }

    /// A screenshot request: refused without `screenshot` in `mqtt.allow` and beyond the rate limit; answered by
    /// the capture under way when there is one (its picture goes to every requester on the one topic); else the
    /// screen is taken in memory and published as PNG bytes on `screenshotTopic`.
    private func screenshotRequested() {
        guard settings.allowedCommands.contains(ControlCommandName.screenshot.rawValue) else {
            screenshotsRefused += 1
            reply(ControlMessage.failure(id: "screenshot", error: .permissionDenied("screenshot is not allowed over MQTT (mqtt.allow)")))
            return
        }
        if screenshotInFlight {
            screenshotsCoalesced += 1
            return
        }
        let now = loop.now
        recentScreenshots.removeAll { now - $0 >= .seconds(60) }
        guard recentScreenshots.count < settings.screenshotsPerMinute else {
            screenshotsRefused += 1
            reply(ControlMessage.failure(id: "screenshot", error: ControlError(code: "rate_limited",
                message: "screenshot: \(settings.screenshotsPerMinute) a minute already taken (mqtt.screenshots_per_minute)")))
            return
        }
        recentScreenshots.append(now)
        screenshotInFlight = true
        registry.start(ControlRequest(id: "screenshot", command: "screenshot"), from: client) { [weak self] answer in
            guard let self else { return }
            screenshotInFlight = false
            guard let encoded = answer["result"]?["png_base64"]?.stringValue, let png = Data(base64Encoded: encoded) else {
                reply(answer)
                return
            }
            connection.publish(screenshotTopic, Array(png), retain: settings.screenshotRetain)
        }
    }

    private func publishState(force: Bool) {
        guard connection.isConnected else { return }
        let current = state()
        let stable = Self.withoutVolatile(current)
        let due = lastStatePublished.map { loop.now - $0 >= stateInterval } ?? true
        guard force || due || stable != lastState.map(Self.withoutVolatile) else { return }
        lastState = current
        lastStatePublished = loop.now
        connection.publish(stateTopic, Self.text(current), retain: true)
    }

    private static func withoutVolatile(_ value: JSONValue) -> JSONValue {
        guard case .object(let members) = value else { return value }
        return .object(members.filter { !volatileStateKeys.contains($0.key) })
    }

    private func received(_ message: MQTTMessage) {
        if let syncGroup, syncGroup.handles(message.topic) {
            syncGroup.receive(topic: message.topic, payload: message.payload)
            return
        }
        if message.topic == screenshotRequestTopic {
            if !message.retained { screenshotRequested() }
            return
        }
        if receivedFromHomeAssistant(message) { return }
        if message.topic == commandTopic || settings.groups.contains(where: { groupCommandTopic($0) == message.topic }) {
            // A retained request would run again on every reconnect: requests are taken only as they are sent.
            guard !message.retained else {
                logger.warning("MQTT \(message.topic): ignoring a retained request")
                return
            }
            answer(message)
            return
        }
        guard dataSources.contains(where: { MQTTConnection.topic(message.topic, matches: $0.topic) }) else { return }
        if waitingPayloads[message.topic] != nil {
            payloadsReplaced += 1
        } else if waitingTopics.count >= Self.maximumWaitingTopics {
            payloadsDropped += 1
            onError?("payload_dropped", "MQTT \(message.topic): dropped: \(Self.maximumWaitingTopics) topics already wait to be read")
            return
        } else {
            waitingTopics.append(message.topic)
        }
        waitingPayloads[message.topic] = message
        readNextPayload()
    }

    /// What reading one payload gave each data source it matched, and how long it took. An immutable value.
    private struct PayloadReading: Sendable {
        var values: [String: String] = [:]
        var problems: [String] = []
        var elapsed: Duration = .zero
    }

    /// Reads the oldest waiting topic's newest payload on the worker, then sets what it gave.
    private func readNextPayload() {
        guard !readingPayload, !waitingTopics.isEmpty else { return }
        let topic = waitingTopics.removeFirst()
        guard let message = waitingPayloads.removeValue(forKey: topic) else { return readNextPayload() }
        let sources = dataSources.filter { MQTTConnection.topic(topic, matches: $0.topic) }
        readingPayload = true
        payloadJobs.run({ () -> PayloadReading in
            let start = MonotonicInstant.now()
            var reading = PayloadReading()
            for source in sources {
                switch source.value(of: message.payload) {
                case .success(let value): reading.values[source.key] = value
                case .failure(let problem): reading.problems.append("data source \(source.key) (\(source.location)): \(problem)")
                }
            }
            reading.elapsed = MonotonicInstant.now() - start
            return reading
        }, then: { [weak self] reading in
            guard let self else { return }
            readingPayload = false
            payloadRead(reading, topic: topic)
            readNextPayload()
        })
    }

    private func payloadRead(_ reading: PayloadReading, topic: String) {
        for problem in reading.problems { logger.warning("\(problem)") }
        guard reading.elapsed <= Self.payloadTimeBudget else {
            payloadsDropped += 1
            onError?("payload_dropped", "MQTT \(topic): reading the payload took \(reading.elapsed.milliseconds.rounded()) ms, more than \(Self.payloadTimeBudget.milliseconds.rounded()) ms, the limit; dropped")
            return
        }
        guard !reading.values.isEmpty else { return }
        do { try onData?(reading.values) } catch {
            payloadsDropped += 1
            onError?("invalid_argument", "MQTT \(topic): data not set: \(error)")
        }
    }

    /// Where a reply goes: `<prefix>/reply`, or the MQTT 5 response topic the request named, with its
    /// correlation data. An immutable value.
    private struct ReplyAddress {
        var topic: String
        var correlationData: [UInt8]?
    }

    /// Runs one request as the socket would, with `mqtt.allow` checked first; every payload gets a reply.
    private func answer(_ message: MQTTMessage) {
        requestsAnswered += 1
        if let topic = message.responseTopic, !isOwnResponseTopic(topic) {
            let id = (try? ControlRequest.decode(message.payload).get().id) ?? .null
            reply(ControlMessage.failure(id: id, error: .permissionDenied(
                "response topic '\(topic.prefix(200))' is not under '\(prefix)/': replies go only to the kiosk's own topics")))
            return
        }
        let address = message.responseTopic.map { ReplyAddress(topic: $0, correlationData: message.correlationData) }
            ?? ReplyAddress(topic: replyTopic, correlationData: nil)
        guard message.payload.count <= Self.maxRequestBytes else {
            reply(ControlMessage.failure(id: .null, error: .lineTooLong(limit: Self.maxRequestBytes)), to: address)
            return
        }
        switch ControlRequest.decode(message.payload) {
        case .failure(let failure):
            reply(ControlMessage.failure(id: failure.id, error: failure.error), to: address)
        case .success(let request):
            run(request, replyTo: address)
        }
    }

    /// Whether a response topic lies under the kiosk's prefix (no wildcards): kioskd publishes with its own
    /// credentials, so a request may not make it publish anywhere the broker lets the kiosk.
    private func isOwnResponseTopic(_ topic: String) -> Bool {
        topic.hasPrefix(prefix + "/") && topic.count > prefix.count + 1 && !topic.contains("+") && !topic.contains("#")
            && !topic.contains("\u{0}")
    }

    /// Runs `request` when `mqtt.allow` lists its command, answering either way.
    private func run(_ request: ControlRequest, replyTo address: ReplyAddress? = nil) {
        let address = address ?? ReplyAddress(topic: replyTopic, correlationData: nil)
        // By its own name: `allow` lists and requests may each give a command's alias (`display.power`).
        let command = ControlCommandName(wireName: request.command)?.rawValue ?? request.command
        guard settings.allowedCommands.contains(command) else {
            let error: ControlError = registry.argumentNames(of: request.command) == nil
                ? .unknownCommand(request.command)
                : .permissionDenied("\(request.command) is not allowed over MQTT (mqtt.allow)")
            reply(ControlMessage.failure(id: request.id, error: error), to: address)
            return
        }
        registry.start(request, from: client) { [weak self] answer in self?.reply(answer, to: address) }
    }

    /// QoS 0, like events: libmosquitto's `loop_read` reads one packet per call plus one per QoS 1 message of
    /// ours still waiting for its PUBACK, so QoS 1 replies would let a burst of requests be answered in one loop
    /// turn and hold a frame. At QoS 0 each request waits for its own turn of the loop.
    private func reply(_ message: JSONValue, to address: ReplyAddress? = nil) {
        let address = address ?? ReplyAddress(topic: replyTopic, correlationData: nil)
        connection.publish(address.topic, Self.text(message), qos: 0, correlationData: address.correlationData)
    }

    private static func text(_ value: JSONValue) -> [UInt8] {
        var line = ControlMessage.line(value)
        if line.last == UInt8(ascii: "\n") { line.removeLast() }
        return line
    }
}

/// A sync group's messages over the fleet's connection: QoS 0 (a lost hello or exchange is replaced by the next).
private final class MQTTSyncTransport: SyncTransport {
    private unowned let connection: MQTTConnection
    init(_ connection: MQTTConnection) { self.connection = connection }
    func publish(_ topic: String, _ payload: [UInt8], retain: Bool) { _ = connection.publish(topic, payload, qos: 0, retain: retain) }
    func subscribe(_ pattern: String) { connection.subscribe(pattern, qos: 0) }
}
