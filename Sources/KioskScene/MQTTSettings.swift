import Foundation
import KioskCore
import Yams

/// The `mqtt:` section of the configuration: which broker, as whom, under which topics, and what may be done
/// through it. An immutable value; any thread.
public struct MQTTSettings: Sendable, Equatable {
    public var host: String
    public var port: Int
    /// `mqtts://`: TLS, verified against `caFile` (or the system's certificates).
    public var useTLS: Bool
    /// Defaults to `kioskd-<device id>`.
    public var clientID: String?
    /// Defaults to `kioskd/<device id>`.
    public var topicPrefix: String?
    public var username: String?
    /// A file holding the password (one line); read when kioskd starts (`password()`), so it stays out of the
    /// config file.
    public var passwordFile: String?
    /// Where the config file names `passwordFile`, for the error when it cannot be read.
    public var passwordFileLocation: SourceLocation?
    public var caFile: String?
    public var certFile: String?
    public var keyFile: String?
    public var keepaliveSeconds: Int
    /// Groups this kiosk answers for on `kioskd/group/<name>/cmd`.
    public var groups: [String]
    /// Commands allowed over MQTT; nil means `defaultAllowed`.
    public var allow: [String]?
    /// Events published on `<prefix>/event/<name>`.
    public var events: [String]
    public var homeAssistant: Bool
    /// Whether the picture published on `<prefix>/screenshot` is retained (Home Assistant's image entity wants it).
    public var screenshotRetain = false
    /// Pictures taken for `<prefix>/screenshot/request` in any minute; more requests are refused (`rate_limited`).
    public var screenshotsPerMinute = 6
    /// The largest packet kioskd takes from the broker, asked for at CONNECT (MQTT 5's Maximum Packet Size, which
    /// the broker honours by not sending larger ones); a larger message that still arrives is dropped before it is
    /// copied, counted, and named in an `error` event.
    public var maximumPacketBytes = 256 * 1024
    /// Seconds between the JPEG thumbnails of the screen published, retained, on `<prefix>/thumbnail` (and one at
    /// once on every fault of an output: a black or frozen screen, a flip timeout); nil publishes none.
    public var thumbnailEverySeconds: Int?
    /// A thumbnail's width in pixels (the height follows the screen's aspect ratio).
    public var thumbnailWidth = 320
    public static let thumbnailEveryRange = 5...86_400
    public static let thumbnailWidthRange = 32...1920

    /// Default-deny: with no `allow`, only the two read-only commands that say whether the kiosk lives. Anything
    /// that reads the scene or its data, or changes what is shown, must be listed.
    public static let defaultAllowed = [ControlCommandName.ping, .stats].map(\.rawValue)
    /// Commands that make sense only on a socket connection: never over MQTT, whatever `allow` says.
    public static let neverAllowed = [ControlCommandName.subscribe, .unsubscribe].map(\.rawValue)
    public static let eventNames = ["scene", "data", "error", "video", "web", "input"]
    /// Every command kioskd's control socket answers, by its own name: `ControlCommandName`'s cases, the list the
    /// registry's commands are keyed by, so `kioskd check-config` can name a misspelt `allow` entry without starting
    /// anything. `allow` may also give a command's alias (`display.power`).
    public static var knownCommands: [String] { ControlCommandName.allCases.map(\.rawValue).sorted() }
    static let keys = ["url", "client_id", "topic_prefix", "username", "password_file", "ca_file", "cert_file", "key_file",
                       "keepalive", "group", "allow", "events", "homeassistant", "screenshot_retain", "screenshots_per_minute",
                       "max_packet_size", "thumbnail_every", "thumbnail_width"]
    /// `max_packet_size`'s range: a control request's longest line fits under the least, and the most stays far
    /// below what a board's memory takes twice (libmosquitto's buffer and the copy handed over).
    public static let packetSizeRange = 4 * 1024...16 * 1024 * 1024

    public init(host: String, port: Int = 1883, useTLS: Bool = false) {
        self.host = host
        self.port = port
        self.useTLS = useTLS
        keepaliveSeconds = 60
        groups = []
        events = []
        homeAssistant = false
    }

    /// The most of a password file read: its first line is the password.
    static let maximumPasswordFileBytes = 64 * 1024

    /// The commands `allow` lets through, each by its own name (an alias in `allow` allows its command by either).
    public var allowedCommands: Set<String> {
        Set((allow ?? Self.defaultAllowed).map { ControlCommandName(wireName: $0)?.rawValue ?? $0 }).subtracting(Self.neverAllowed)
    }

    /// The first line of `passwordFile`, nil without one. Synchronous file I/O: call it before the loop starts.
    /// - Throws: the file that cannot be read, at the place the config file names it, with the errno
    ///   (`kioskd.yaml:7:18: mqtt.password_file: /etc/kioskd/mqtt.password: cannot read it: EACCES`).
    public func password() throws(SceneValidationError) -> String? {
        guard let passwordFile else { return nil }
        let bytes: [UInt8]
        do throws(RegularFileError) {
            // A regular file only: a FIFO given by mistake is refused, not waited on; never more than the bound.
            bytes = try RegularFile(opening: passwordFile).contents(maximumBytes: Self.maximumPasswordFileBytes)
        } catch {
            let location = passwordFileLocation ?? SourceLocation(file: passwordFile, line: 1, column: 1)
            let message: String
            switch error.reason {
            case .notFound(let code), .system(_, let code): message = "\(passwordFile): cannot read it: \(errnoDescription(code))"
            case .notRegular: message = "\(passwordFile) \(error.problem)"
            }
            throw SceneValidationError(diagnostics: [SceneDiagnostic(severity: .error, location: location, path: "mqtt.password_file",
                                                                     message: message)])
        }
        let text = String(decoding: bytes, as: UTF8.self)
        return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
    }

    /// The device id topics and the client id default to: the host name.
    public static func hostDeviceID() -> String {
        let name = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? ""
        return sanitizedTopicLevel(name.isEmpty ? "kiosk" : name)
    }

    /// `name` usable as one topic level: no `/`, `+`, `#` or NUL.
    static func sanitizedTopicLevel(_ name: String) -> String {
        String(name.map { "/+#\u{0}".contains($0) ? "_" : $0 })
    }

    public func resolvedTopicPrefix(deviceID: String = MQTTSettings.hostDeviceID()) -> String {
        topicPrefix ?? "kioskd/\(deviceID)"
    }

    public func resolvedClientID(deviceID: String = MQTTSettings.hostDeviceID()) -> String {
        clientID ?? "kioskd-\(deviceID)"
    }

    // MARK: Decoding

    /// Decodes the `mqtt:` mapping from a composed YAML node, reporting every problem with its location.
    public static func decode(node: Node, file: String, path: String = "mqtt") throws -> MQTTSettings {
        var problems: [SceneDiagnostic] = []
        func error(_ node: Node, _ at: String, _ message: String) {
            problems.append(SceneDiagnostic(severity: .error, location: SourceLocation(file: file, line: node.mark?.line ?? 1, column: node.mark?.column ?? 1),
                                            path: at, message: message))
        }
        func fail() -> SceneValidationError { SceneValidationError(diagnostics: problems) }
        guard let mapping = node.mapping else {
            error(node, path, "expected a mapping with 'url'")
            throw fail()
        }
        var fields: [String: (key: Node, value: Node)] = [:]
        for (keyNode, value) in mapping {
            guard let key = keyNode.scalar?.string else { error(keyNode, path, "keys must be plain strings"); continue }
            guard keys.contains(key) else {
                let hint = Suggestion.nearest(to: key, in: keys).map { "; did you mean '\($0)'?" } ?? "; known keys: \(keys.joined(separator: ", "))"
                error(keyNode, "\(path).\(key)", "unknown key '\(key)'\(hint)")
                continue
            }
            fields[key] = (keyNode, value)
        }
        func string(_ key: String) -> String? {
            guard let v = fields[key]?.value else { return nil }
            guard let s = v.scalar?.string, !s.isEmpty else { error(v, "\(path).\(key)", "expected a non-empty string"); return nil }
            return s
        }
        func names(_ key: String) -> [String]? {
            guard let v = fields[key]?.value else { return nil }
            if let s = v.scalar?.string, !s.isEmpty { return [s] }
            guard let items = v.sequence else { error(v, "\(path).\(key)", "expected a name or a list of names"); return nil }
            var result: [String] = []
            for (i, item) in items.enumerated() {
                guard let s = item.scalar?.string, !s.isEmpty else { error(item, "\(path).\(key)[\(i)]", "expected a name"); continue }
                result.append(s)
            }
            return result
        }

        var settings = MQTTSettings(host: "")
        if let urlNode = fields["url"]?.value {
            if let url = string("url") {
                switch parseURL(url) {
                case .success(let (host, port, tls)):
                    settings.host = host
                    settings.port = port
                    settings.useTLS = tls
                case .failure(let message):
                    error(urlNode, "\(path).url", message.description)
                }
            }
        } else {
            error(node, path, "missing 'url' (mqtt://host:port or mqtts://host:port)")
        }
        settings.clientID = string("client_id")
        if let prefix = string("topic_prefix"), let v = fields["topic_prefix"]?.value {
            if prefix.contains("+") || prefix.contains("#") || prefix.hasSuffix("/") || prefix.hasPrefix("/") {
                error(v, "\(path).topic_prefix", "'\(prefix)' must not contain '+' or '#' or start or end with '/'")
            } else {
                settings.topicPrefix = prefix
            }
        }
        settings.username = string("username")
        for (key, keyPath) in [("password_file", \MQTTSettings.passwordFile), ("ca_file", \.caFile), ("cert_file", \.certFile), ("key_file", \.keyFile)] {
            settings[keyPath: keyPath] = string(key)
        }
        settings.passwordFileLocation = fields["password_file"].map {
            SourceLocation(file: file, line: $0.value.mark?.line ?? 1, column: $0.value.mark?.column ?? 1)
        }
        if let v = fields["keepalive"]?.value {
            if let n = v.scalar.flatMap({ Int($0.string) }), (5...65535).contains(n) {
                settings.keepaliveSeconds = n
            } else {
                error(v, "\(path).keepalive", "expected whole seconds from 5 to 65535")
            }
        }
        if let groups = names("group") {
            for (i, group) in groups.enumerated() where sanitizedTopicLevel(group) != group {
                error(fields["group"]!.value, "\(path).group[\(i)]", "group '\(group)' must not contain '/', '+' or '#'")
            }
            settings.groups = groups
        }
        if let allow = names("allow") {
            for name in allow where neverAllowed.contains(name) {
                error(fields["allow"]!.value, "\(path).allow", "'\(name)' works only on the control socket")
            }
            for name in allow where ControlCommandName(wireName: name) == nil {
                let hint = Suggestion.nearest(to: name, in: ControlCommandName.acceptedNames).map { "did you mean '\($0)'? " } ?? ""
                error(fields["allow"]!.value, "\(path).allow", "unknown command '\(name)'; \(hint)known: \(knownCommands.joined(separator: ", "))")
            }
            settings.allow = allow
        }
        if let events = names("events") {
            for name in events where !eventNames.contains(name) {
                let hint = Suggestion.nearest(to: name, in: eventNames).map { "did you mean '\($0)'? " } ?? ""
                error(fields["events"]!.value, "\(path).events", "unknown event '\(name)'; \(hint)known: \(eventNames.joined(separator: ", "))")
            }
            settings.events = events
        }
        for (key, keyPath) in [("homeassistant", \MQTTSettings.homeAssistant), ("screenshot_retain", \.screenshotRetain)] {
            guard let v = fields[key]?.value else { continue }
            if let b = v.scalar.flatMap({ YAMLTree.bool($0) }) { settings[keyPath: keyPath] = b } else {
                error(v, "\(path).\(key)", "expected true or false")
            }
        }
        if let v = fields["screenshots_per_minute"]?.value {
            if let n = YAMLTree.int(v), (1...60).contains(n) { settings.screenshotsPerMinute = n } else {
                error(v, "\(path).screenshots_per_minute", "expected a whole number from 1 to 60")
            }
        }
        if let v = fields["thumbnail_every"]?.value {
            if let n = YAMLTree.int(v), thumbnailEveryRange.contains(n) { settings.thumbnailEverySeconds = n } else {
                error(v, "\(path).thumbnail_every", "expected whole seconds from \(thumbnailEveryRange.lowerBound) to \(thumbnailEveryRange.upperBound)")
            }
        }
        if let v = fields["thumbnail_width"]?.value {
            if let n = YAMLTree.int(v), thumbnailWidthRange.contains(n) { settings.thumbnailWidth = n } else {
                error(v, "\(path).thumbnail_width", "expected pixels from \(thumbnailWidthRange.lowerBound) to \(thumbnailWidthRange.upperBound)")
            }
            if fields["thumbnail_every"] == nil, let key = fields["thumbnail_width"]?.key {
                error(key, "\(path).thumbnail_width", "a width needs 'thumbnail_every' (thumbnails are off without it)")
            }
        }
        if let v = fields["max_packet_size"]?.value {
            if let n = YAMLTree.int(v), packetSizeRange.contains(n) { settings.maximumPacketBytes = n } else {
                error(v, "\(path).max_packet_size", "expected bytes from \(packetSizeRange.lowerBound) to \(packetSizeRange.upperBound)")
            }
        }
        if settings.passwordFile != nil && settings.username == nil, let v = fields["password_file"]?.key {
            error(v, "\(path).password_file", "a password needs 'username'")
        }
        if (settings.certFile == nil) != (settings.keyFile == nil) {
            error(node, path, "'cert_file' and 'key_file' go together")
        }
        if !settings.useTLS, let v = fields["ca_file"] ?? fields["cert_file"] {
            error(v.key, path, "TLS files need an mqtts:// url")
        }
        guard problems.isEmpty else { throw fail() }
        return settings
    }

    /// `mqtt://host[:port]` or `mqtts://host[:port]`; the port defaults to 1883 and 8883.
    static func parseURL(_ url: String) -> Result<(String, Int, Bool), URLProblem> {
        let tls: Bool
        let rest: Substring
        if url.hasPrefix("mqtt://") { tls = false; rest = url.dropFirst(7) }
        else if url.hasPrefix("mqtts://") { tls = true; rest = url.dropFirst(8) }
        else { return .failure(URLProblem("'\(url)' must start with mqtt:// or mqtts://")) }
        let authority = rest.hasSuffix("/") ? rest.dropLast() : rest
        guard !authority.isEmpty, !authority.contains("/"), !authority.contains("@") else {
            return .failure(URLProblem("'\(url)' must be mqtt[s]://host:port (no path or user; give 'username')"))
        }
        var host = String(authority)
        var port = tls ? 8883 : 1883
        if authority.hasPrefix("[") {
            // [IPv6]:port
            guard let close = authority.firstIndex(of: "]") else { return .failure(URLProblem("'\(url)': unclosed '['")) }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let p = Int(after.dropFirst()), (1...65535).contains(p) else {
                    return .failure(URLProblem("'\(url)': the port must be 1 to 65535"))
                }
                port = p
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            guard let p = Int(authority[authority.index(after: colon)...]), (1...65535).contains(p) else {
                return .failure(URLProblem("'\(url)': the port must be 1 to 65535"))
            }
            port = p
        }
        guard !host.isEmpty else { return .failure(URLProblem("'\(url)' names no host")) }
        return .success((host, port, tls))
    }

    struct URLProblem: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}
