import Yams

/// A topic whose messages set one data key: `{mqtt: TOPIC, key: KEY, field: NAME}`. The payload is the value
/// as it is, or, with `field`, that member of the payload's JSON object. The scene names the binding; the MQTT
/// client, where one runs, subscribes. An immutable value; any thread.
public struct DataSource: Sendable, Equatable {
    /// The topic (or subscription pattern with `+` and `#`).
    public var topic: String
    public var key: String
    /// A member of a JSON object payload; nil takes the payload as it is.
    public var field: String?
    public var location: SourceLocation

    public init(topic: String, key: String, field: String? = nil, location: SourceLocation) {
        self.topic = topic
        self.key = key
        self.field = field
        self.location = location
    }

    /// The value a payload gives the key, or a reason it gives none.
    public func value(of payload: [UInt8]) -> Result<String, DataSourceProblem> {
        guard let text = String(validating: payload, as: UTF8.self) else {
            return .failure(DataSourceProblem("topic \(topic): the payload is not UTF-8"))
        }
        guard let field else { return .success(text) }
        // JSON is YAML: Yams is the JSON reader this module already has.
        let limit = YAMLTree.nodeLimit(forBytes: payload.count)
        let node: Node?
        do {
            node = try YAMLTree.compose(text, maximumNodes: limit)
        } catch let refused as YAMLTree.Refused {
            return .failure(DataSourceProblem("topic \(topic): the payload is refused at \(refused.line):\(refused.column): \(refused.message)"))
        } catch {
            return .failure(DataSourceProblem("topic \(topic): the payload is not a JSON object with '\(field)'"))
        }
        guard let object = node?.mapping else {
            return .failure(DataSourceProblem("topic \(topic): the payload is not a JSON object with '\(field)'"))
        }
        // The last of equal keys, as YAML's own lookup takes it.
        guard let member = object.reversed().first(where: { $0.key.scalar?.string == field })?.value else {
            return .failure(DataSourceProblem("topic \(topic): the payload has no '\(field)'"))
        }
        guard let scalar = member.scalar else {
            return .failure(DataSourceProblem("topic \(topic): '\(field)' is not a string or number"))
        }
        return .success(scalar.string)
    }
}

/// Why a message gave a data source no value. An immutable value; any thread.
public struct DataSourceProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

extension SceneDecoder {
    static let dataSourceKeys = ["mqtt", "key", "field"]

    func dataSources(_ node: Node, _ path: String, http: inout [HTTPDataSource]) -> [DataSource] {
        guard let items = node.sequence else {
            error(node, path, "expected a list of {mqtt: TOPIC, key: KEY, field: NAME}, {http: URL, key: KEY} or {rss: URL, key: KEY}")
            return []
        }
        var result: [DataSource] = []
        for (i, item) in items.enumerated() {
            let here = "\(path)[\(i)]"
            if let kinds = item.mapping?.compactMap({ $0.key.scalar?.string }).filter({ ["http", "rss"].contains($0) }), !kinds.isEmpty {
                if let source = httpDataSource(item, here) { http.append(source) }
                continue
            }
            guard let f = fields(item, here, allowed: Self.dataSourceKeys, expected: "a mapping with 'mqtt', 'http' or 'rss', and 'key'") else { continue }
            guard let topicNode = f["mqtt"]?.value else { error(item, here, "missing 'mqtt' (the topic), 'http' or 'rss' (a URL)"); continue }
            guard let topic = topicNode.scalar?.string, !topic.isEmpty else { error(topicNode, Self.child(here, "mqtt"), "expected a topic"); continue }
            if !Self.isValidSubscription(topic) {
                error(topicNode, Self.child(here, "mqtt"), "'\(topic)' is not a valid topic: '+' and '#' must fill a whole level, and '#' must be last")
                continue
            }
            guard let keyNode = f["key"]?.value else { error(item, here, "missing 'key' (the data key it sets)"); continue }
            guard let key = keyNode.scalar?.string, Template.isValidKey(key) else {
                error(keyNode, Self.child(here, "key"), "expected a binding key (letters, digits, '_', '.', '-')")
                continue
            }
            var field: String?
            if let fieldNode = f["field"]?.value {
                guard let name = fieldNode.scalar?.string, !name.isEmpty else {
                    error(fieldNode, Self.child(here, "field"), "expected the name of a JSON member")
                    continue
                }
                field = name
            }
            result.append(DataSource(topic: topic, key: key, field: field, location: location(item)))
        }
        return result
    }

    /// MQTT's rules for a subscription: wildcards take a whole level, `#` only the last; no NUL.
    static func isValidSubscription(_ topic: String) -> Bool {
        guard !topic.contains("\u{0}") else { return false }
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        for (i, level) in levels.enumerated() {
            if level.contains("#") && (level != "#" || i != levels.count - 1) { return false }
            if level.contains("+") && level != "+" { return false }
        }
        return true
    }
}
