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
///   request names, with its correlation data). Commands outside `mqtt.allow` get `permission_denied`.
/// - `<prefix>/event/<name>`: the events named in `mqtt.events`.
/// - `<prefix>/screenshot/request`: any message publishes the screen as PNG bytes on `<prefix>/screenshot`.
/// - `<prefix>/action`: the name of each `emit` action as its widget is pressed (Home Assistant's device triggers).
/// - The scene's data sources: each matching message sets its data key through `onData`.
///
/// Lives on the loop thread, like the registry it calls.
public final class FleetClient {
    public let settings: MQTTSettings
    public let prefix: String
    public let connection: MQTTConnection
    /// The kiosk's state as `<prefix>/state` carries it. `volatileStateKeys` are left out of the change check.
    public var state: () -> JSONValue = { [:] }
    /// Sets data keys from data-source messages (the scene's `data.set`).
    public var onData: (([String: String]) -> Void)?
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

    private let registry: CommandRegistry
    private let loop: MainLoop
    private let client = ControlConnection.remote(number: 0)
    private var dataSources: [DataSource] = []
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
        connection = try MQTTConnection(loop: loop, endpoint: endpoint)
        connection.onConnected = { [unowned self] in connected() }
        connection.onMessage = { [unowned self] message in received(message) }
    }

    deinit { stop() }

    public var commandTopic: String { "\(prefix)/cmd" }
    public var replyTopic: String { "\(prefix)/reply" }
    public var statusTopic: String { "\(prefix)/status" }
    public var stateTopic: String { "\(prefix)/state" }
    /// Anything sent here publishes the screen as PNG bytes on `screenshotTopic`.
    public var screenshotRequestTopic: String { "\(prefix)/screenshot/request" }
    public var screenshotTopic: String { "\(prefix)/screenshot" }
    public var actionTopic: String { "\(prefix)/action" }
    public func groupCommandTopic(_ group: String) -> String { "kioskd/group/\(group)/cmd" }

    public func start() {
        connection.start()
        // Changes that no event announces (display power through a command) are noticed within this period.
        stateTimer = loop.addTimer(after: .seconds(2), repeating: .seconds(2)) { [unowned self] in publishState(force: false) }
    }

    /// Publishes `offline` and disconnects cleanly.
    public func stop() {
        stateTimer?.cancel()
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
        publishState(force: true)
        publishDiscovery()
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
            run(ControlRequest(id: "ha-power", command: "display.power", arguments: ["on": .bool(text == "ON")]))
            publishState(force: false)
        case ha.pageCommandTopic where !message.retained:
            run(ControlRequest(id: "ha-page", command: "page.show", arguments: ["name": .string(text)]))
        default:
            return message.topic == ha.powerCommandTopic || message.topic == ha.pageCommandTopic
        }
        return true
    }

    /// The screen as PNG bytes on `topic`, retained (Home Assistant's image entity reads it). The picture is
    /// taken in memory (no path argument), which is why it needs no entry in `mqtt.allow`.
    private func publishScreenshot(to topic: String) {
        registry.start(ControlRequest(id: "ha-screenshot", command: "screenshot"), from: client) { [weak self] answer in
            guard let self else { return }
            guard let encoded = answer["result"]?["png_base64"]?.stringValue, let png = Data(base64Encoded: encoded) else {
                reply(answer)
                return
            }
            connection.publish(topic, Array(png), retain: true)
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
        if message.topic == screenshotRequestTopic {
            if !message.retained { publishScreenshot(to: screenshotTopic) }
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
        var values: [String: String] = [:]
        for source in dataSources where MQTTConnection.topic(message.topic, matches: source.topic) {
            switch source.value(of: message.payload) {
            case .success(let value): values[source.key] = value
            case .failure(let problem): logger.warning("data source \(source.key) (\(source.location)): \(problem)")
            }
        }
        if !values.isEmpty { onData?(values) }
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

    /// Runs `request` when `mqtt.allow` lists its command, answering either way.
    private func run(_ request: ControlRequest, replyTo address: ReplyAddress? = nil) {
        let address = address ?? ReplyAddress(topic: replyTopic, correlationData: nil)
        guard settings.allowedCommands.contains(request.command) else {
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
