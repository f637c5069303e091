/// Documents an attacker sends to a parser: alias bombs with their aliases in key and value positions, nesting
/// deep in block and flow style, huge scalars, invalid UTF-8, tags, JSON of the wrong shape and random bytes.
/// Each kind is chosen in turn, its sizes from the generator. A value; any thread.
public struct HostileDocuments: Sequence, IteratorProtocol {
    public enum Kind: CaseIterable, Sendable {
        case aliasBombValue, aliasBombKey, aliasKey, collectionKey, deepBlock, deepFlow, hugeScalar, invalidUTF8, tags,
             wrongJSON, randomBytes, mutatedScene
    }

    private var generator: SplitMix
    private var remaining: Int
    private var index = 0

    public init(count: Int, seed: UInt64) {
        generator = SplitMix(seed: seed)
        remaining = count
    }

    public mutating func next() -> (kind: Kind, bytes: [UInt8])? {
        guard remaining > 0 else { return nil }
        remaining -= 1
        let kind = Kind.allCases[index % Kind.allCases.count]
        index += 1
        return (kind, document(kind))
    }

    private mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &generator) }

    /// The "billion laughs": `levels` anchors, each a list of `fanOut` aliases to the one before.
    private mutating func bomb(levels: Int, fanOut: Int, flow: Bool) -> String {
        var text = "a0: &a0 [" + Array(repeating: "x", count: fanOut).joined(separator: ",") + "]\n"
        for level in 1..<levels {
            let items = Array(repeating: "*a\(level - 1)", count: fanOut)
            text += flow ? "a\(level): &a\(level) [" + items.joined(separator: ",") + "]\n"
                : "a\(level): &a\(level)\n" + items.map { "  - \($0)\n" }.joined()
        }
        return text
    }

    private mutating func document(_ kind: Kind) -> [UInt8] {
        switch kind {
        case .aliasBombValue:
            return Array((bomb(levels: int(3...12), fanOut: int(2...10), flow: int(0...1) == 0) + "value: *a\(int(0...2))\n").utf8)
        case .aliasBombKey:
            // The field's 648-byte document: the last mapping key an alias to the whole nest.
            let levels = int(3...12)
            return Array((bomb(levels: levels, fanOut: int(2...10), flow: true) + "? *a\(levels - 1) : boom\n").utf8)
        case .aliasKey:
            return Array("a: &k \(String(repeating: "x", count: int(1...64)))\n? *k\n: v\n{*k : 1}: 2\n".utf8)
        case .collectionKey:
            return Array("? [\(Array(repeating: "1", count: int(1...200)).joined(separator: ","))]\n: v\n".utf8)
        case .deepBlock:
            let depth = int(100...400)
            return Array((0..<depth).map { String(repeating: " ", count: $0) + "k\($0):\n" }.joined().utf8)
        case .deepFlow:
            let depth = int(50...3_000)
            return Array(("{\"a\": " + String(repeating: "[", count: depth) + String(repeating: "]", count: int(0...depth)) + "}").utf8)
        case .hugeScalar:
            return Array(("{\"value\": \"" + String(repeating: "9", count: int(1...256 * 1024)) + "\"}").utf8)
        case .invalidUTF8:
            var bytes = Array("{\"value\": \"ok\", \"key\": \"".utf8)
            for _ in 0..<int(1...16) { bytes.append([0xC0, 0xFF, 0xED, 0xA0, 0x80, 0xF4, 0x90][int(0...6)]) }
            return bytes + Array("\"}".utf8)
        case .tags:
            let tags = ["!!binary", "!!python/object:os.system", "!<tag:yaml.org,2002:int>", "!local", "!!set", "!!omap", "!!timestamp", "!"]
            return Array((0..<int(1...40)).map { "k\($0): \(tags[int(0...tags.count - 1)]) \(int(0...1) == 0 ? "x" : "[1, 2]")\n" }.joined().utf8)
        case .wrongJSON:
            let shapes = ["[]", "null", "42", "\"value\"", "{\"value\": {\"value\": 1}}", "{\"value\": [1, 2]}", "{\"id\": [], \"cmd\": {}}",
                          "{\"value\": 1e999999}", "{\"value\": -0}", "{\"\": \"\"}", "{\"value\":", "{\"cmd\": \"ping\", \"args\": []}"]
            return Array(shapes[int(0...shapes.count - 1)].utf8)
        case .randomBytes:
            return (0..<int(0...2_048)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        case .mutatedScene:
            var bytes = Array("pages:\n  - name: main\n    widgets:\n      - {type: text, id: t, text: '{{t}}', x: 10, y: 10}\n      - {type: rect, background: red}\n".utf8)
            for _ in 0..<int(1...8) {
                bytes[int(0...bytes.count - 1)] = Array("&*!?:[]{}-|>#'\"\n ".utf8)[int(0...16)]
            }
            return bytes
        }
    }
}
