// libyaml's event parser, the copy Yams compiles into the binary: its C module (CYaml) is visible to every target
// that depends on Yams. No second libyaml is linked, so the events read here are those Yams' composer reads next.
import CYaml

/// The shape of a YAML text read event by event, before any tree is composed, with its work bounded as the events
/// arrive: nodes counted with every alias expanded (an alias counts the whole node it names), nesting depth, and
/// the node kinds a mapping key may be. A document outside these bounds
/// is refused at the event that crosses them, with its line and column, after work proportional to the bytes
/// read so far: an alias bomb of a few hundred bytes is refused after a few hundred events, where composing it
/// first (as Yams does, hashing every key it checks for duplicates through the whole expansion) never ends.
///
/// Syntax errors are not reported here: the scan stops and leaves them to the composer, whose messages name them.
/// Stateless; any thread.
enum YAMLEventScan {
    struct Limits {
        /// Nodes of the document with every alias expanded.
        var maximumNodes: Int
        /// Collections inside each other, block and flow.
        var maximumDepth: Int
    }

    /// Why a document was refused, at the event where it was (1-based line and column).
    struct Refusal: Error, Equatable {
        var message: String
        var line: Int
        var column: Int
    }

    /// One collection open around the current event.
    private struct Frame {
        var isMapping: Bool
        var anchor: String?
        /// Nodes so far, the collection itself included, aliases expanded.
        var size = 1
        /// In a mapping: whether the next node is a key.
        var expectsKey = true
    }

    /// nil when `text` is within `limits` (or is not YAML: the composer says why), else the first refusal.
    static func refusal(in text: String, limits: Limits) -> Refusal? {
        var text = text
        return text.withUTF8 { bytes -> Refusal? in
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) == 1 else {
                return Refusal(message: "YAML: the parser could not be set up (out of memory)", line: 1, column: 1)
            }
            defer { yaml_parser_delete(&parser) }
            yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
            yaml_parser_set_input_string(&parser, bytes.baseAddress, bytes.count)
            return scan(&parser, limits)
        }
    }

    private static func scan(_ parser: inout yaml_parser_t, _ limits: Limits) -> Refusal? {
        var stack: [Frame] = []
        var nodes = 0
        /// The expanded size of each anchored node, by name, once it ended.
        var anchors: [String: Int] = [:]
        var event = yaml_event_t()
        while true {
            // A syntax error: the composer reports it with its own message and place.
            guard yaml_parser_parse(&parser, &event) == 1 else { return nil }
            defer { yaml_event_delete(&event) }
            let mark = event.start_mark
            func refuse(_ message: String) -> Refusal {
                Refusal(message: message, line: Int(mark.line) + 1, column: Int(mark.column) + 1)
            }
            let type = event.type
            if type == YAML_STREAM_END_EVENT { return nil }
            guard type == YAML_SCALAR_EVENT || type == YAML_ALIAS_EVENT || type == YAML_SEQUENCE_START_EVENT
                    || type == YAML_MAPPING_START_EVENT || type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT else {
                continue
            }
            if type == YAML_SEQUENCE_END_EVENT || type == YAML_MAPPING_END_EVENT {
                guard let done = stack.popLast() else { continue }
                if let anchor = done.anchor { anchors[anchor] = done.size }
                finished(size: done.size, in: &stack)
                continue
            }
            // A node: where it stands first.
            let isKey = stack.last.map { $0.isMapping && $0.expectsKey } ?? false
            if isKey && type == YAML_ALIAS_EVENT {
                return refuse("an alias (*\(name(event.data.alias.anchor) ?? "")) cannot be a mapping key")
            }
            if isKey && type != YAML_SCALAR_EVENT {
                return refuse("a mapping key must be a scalar, not a \(type == YAML_MAPPING_START_EVENT ? "mapping" : "sequence")")
            }
            switch type {
            case YAML_SCALAR_EVENT:
                nodes += 1
                if let anchor = name(event.data.scalar.anchor) { anchors[anchor] = 1 }
                finished(size: 1, in: &stack)
            case YAML_ALIAS_EVENT:
                // An alias to an unknown anchor is the composer's error to report; it counts as one node here.
                let size = name(event.data.alias.anchor).flatMap { anchors[$0] } ?? 1
                nodes += size
                if nodes > limits.maximumNodes {
                    return refuse("aliases expand the document beyond \(limits.maximumNodes) nodes, the limit")
                }
                finished(size: size, in: &stack)
            default:
                let isMapping = type == YAML_MAPPING_START_EVENT
                let anchor = name(isMapping ? event.data.mapping_start.anchor : event.data.sequence_start.anchor)
                if stack.count >= limits.maximumDepth { return refuse("nesting deeper than \(limits.maximumDepth) levels") }
                nodes += 1
                stack.append(Frame(isMapping: isMapping, anchor: anchor))
            }
            if nodes > limits.maximumNodes {
                return refuse("the document has more than \(limits.maximumNodes) nodes, the limit")
            }
        }
    }

    /// A node of `size` nodes ended: its parent grows by it, and a mapping's next node is a key again (or now a value).
    private static func finished(size: Int, in stack: inout [Frame]) {
        guard !stack.isEmpty else { return }
        stack[stack.count - 1].size += size
        if stack[stack.count - 1].isMapping { stack[stack.count - 1].expectsKey.toggle() }
    }

    private static func name(_ anchor: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        anchor.map { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
    }
}
