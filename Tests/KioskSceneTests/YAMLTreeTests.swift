import KioskTestSupport
import XCTest
import Yams
@testable import KioskScene

/// `YAMLTree` gives plain scalars the tags Yams' default (regular expression) resolver gives them, without it.
final class YAMLTreeTests: XCTestCase {
    private func yamsTag(_ text: String) -> String {
        Resolver.default.resolveTag(of: Node(text)).rawValue
    }

    func testHandPickedScalarsResolveAsYamsResolvesThem() {
        let cases = [
            "", "~", "null", "Null", "NULL", "nULL", "yes", "No", "ON", "oFF", "true", "True", "TRUE", "tRUE",
            "0", "00", "07", "08", "0o", "0o7", "0o8", "0b", "0b101", "0b102", "0x", "0x1F", "0xg", "-0x1F", "+12",
            "1_000", "_1", "1:30", "1:60", "190:20:30", "1:2:3.5", "-1:30.25", "0:30",
            "1.", "1.5", ".5", "._", "-.5", "+.5", "1e5", "1e", "1.5e-3", "1.5E+3", ".5e3", ".5e+3", "1.5e",
            ".inf", "-.Inf", "+.INF", "inf", ".nan", ".NaN", "-.nan", "nan",
            "<<", "=", "==", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5",
            "2001-12-14 21:59:43.10", "2002-12-14", "2001-1-1 1:00:00Z", "2001-12-14 21:59:43.10 ",
            "2001-12-14 21:59:43 +05:3", "2001-12-14T21:59:43", "2001-12-1", "12:00", "Sans Bold 24", "#fff",
            "true\n", "12\n", "null\r\n", "1.5\n\n", "-", "+", ".", "-0", "+0", "0_", "1__", "0x_", "0b_",
        ]
        for text in cases {
            XCTAssertEqual(YAMLTree.tag(ofPlain: text).rawValue, yamsTag(text), "plain scalar \(text.debugDescription)")
        }
    }

    func testGeneratedScalarsResolveAsYamsResolvesThem() {
        // Strings over the characters the rules look at, from a fixed seed so that a failure can be run again.
        let alphabet = Array("0123456789_-+.:eExXbBoOtTZ nNaAiIfFlLuUsSrR~<=\t")
        var generator = SplitMix(seed: 0x6B696F736B64)
        var mismatches: [String] = []
        for _ in 0..<20_000 {
            let length = Int(generator.next() % 12)
            let text = String((0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
            if YAMLTree.tag(ofPlain: text).rawValue != yamsTag(text) { mismatches.append(text) }
        }
        XCTAssertEqual(mismatches, [], "plain scalars resolved differently")
    }

    func testTheTreeCarriesFinalTagsStylesAndMarks() throws {
        let text = """
        a: 12
        b: '12'
        c: !!str 12
        d: [1.5, yes, ~, 2001-12-14]
        e: |
          12
        """
        let root = try XCTUnwrap(YAMLTree.compose(text, maximumNodes: 100))
        let mapping = try XCTUnwrap(root.mapping)
        func tag(_ key: String) -> String? { mapping[key]?.tag.rawValue }
        XCTAssertEqual(root.tag.rawValue, Tag.Name.map.rawValue)
        XCTAssertEqual(tag("a"), Tag.Name.int.rawValue)
        XCTAssertEqual(tag("b"), Tag.Name.str.rawValue, "a quoted scalar is a string")
        XCTAssertEqual(tag("c"), Tag.Name.str.rawValue, "an explicit tag is kept")
        XCTAssertEqual(tag("e"), Tag.Name.str.rawValue, "a block scalar is a string")
        let items = try XCTUnwrap(mapping["d"]?.sequence).map(\.tag.rawValue)
        XCTAssertEqual(items, [Tag.Name.float, .bool, .null, .timestamp].map(\.rawValue))
        XCTAssertEqual(mapping["d"]?.tag.rawValue, Tag.Name.seq.rawValue)
        XCTAssertEqual(mapping["a"]?.int, 12)
        XCTAssertNil(mapping["b"]?.int, "a quoted number is not read as a number")
        XCTAssertEqual(mapping["a"]?.mark?.line, 1)
        XCTAssertEqual(mapping["d"]?.mark?.line, 4)
        XCTAssertEqual(mapping["d"]?.sequence?[1].bool, true)
        XCTAssertNil(try YAMLTree.compose("# only a comment\n", maximumNodes: 10), "an empty document has no tree")
    }
    /// Numbers and truth values are read as Yams' `Node.float`, `.int` and `.bool` read them (whose constructors
    /// run Foundation's string search), for the hand-picked forms and for generated ones.
    func testNumbersAndTruthValuesAreReadAsYamsReadsThem() {
        func same(_ a: Double?, _ b: Double?) -> Bool {
            switch (a, b) {
            case (nil, nil): return true
            case let (x?, y?): return x.isNaN ? y.isNaN : x == y
            default: return false
            }
        }
        var texts = [
            "0", "-0", "+0", "00", "07", "08", "0o17", "0b101", "0x1F", "-0x1F", "+0x1F", "0X1F", "1_000", "-1_000",
            "1:30", "-1:30", "190:20:30", "1:2:3.5", "-1:30.25", "1.5", "-1.5", ".5", "1e5", "1.5e-3", "1_0.5",
            ".inf", "-.Inf", "+.INF", ".nan", ".NaN", "inf", "nan", "yes", "No", "ON", "off", "True", "fALSE", "y",
            "", "_", "0x", "0b", "0o", "1:", ":1", "1::2", "12abc", "Sans", "1 000",
        ]
        let alphabet = Array("0123456789_-+.:eExXbBoO")
        var generator = SplitMix(seed: 0x79616D6C)
        for _ in 0..<5_000 {
            let length = Int(generator.next() % 10) + 1
            texts.append(String((0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }))
        }
        for text in texts {
            let node = Node(text)
            // A signed part after a colon is no base-60 number here (YAML's forms have none, so such a scalar is
            // never tagged int or float); Yams reads it.
            if text.split(separator: ":", omittingEmptySubsequences: false).dropFirst().contains(where: { $0.first == "-" || $0.first == "+" }) {
                XCTAssertNil(YAMLTree.int(node), text)
                XCTAssertNil(YAMLTree.double(node), text)
                continue
            }
            XCTAssertTrue(same(YAMLTree.double(node), node.float), "\(text.debugDescription) as a number")
            XCTAssertEqual(YAMLTree.int(node), node.int, "\(text.debugDescription) as a whole number")
            XCTAssertEqual(YAMLTree.bool(node), node.bool, "\(text.debugDescription) as true or false")
        }
    }

    func testQuotedAndStringTaggedScalarsAreNotNumbersAndBase60BeyondIntIsNone() throws {
        let root = try XCTUnwrap(YAMLTree.compose("a: '12'\nb: !!str yes\nc: 12\nd: 1:30\n", maximumNodes: 100))
        let mapping = try XCTUnwrap(root.mapping)
        XCTAssertNil(YAMLTree.int(try XCTUnwrap(mapping["a"])), "a quoted number")
        XCTAssertNil(YAMLTree.double(try XCTUnwrap(mapping["a"])))
        XCTAssertNil(YAMLTree.bool(try XCTUnwrap(mapping["b"])), "a string-tagged truth value")
        XCTAssertEqual(YAMLTree.int(try XCTUnwrap(mapping["c"])), 12)
        XCTAssertEqual(YAMLTree.int(try XCTUnwrap(mapping["d"])), 90)
        // Where Yams' arithmetic would trap, the value is no number.
        XCTAssertNil(YAMLTree.int(Node("9223372036854775807:59")))
        XCTAssertEqual(YAMLTree.double(Node("9223372036854775807:59")), 9223372036854775807.0 * 60 + 59)
    }

    func testAliasesThatExpandTheDocumentBeyondTheLimitAreRefused() throws {
        // Each level doubles the one before it: 2^16 leaves from a few hundred bytes.
        var text = "a0: &a0 [x, x]\n"
        for level in 1...16 { text += "a\(level): &a\(level) [*a\(level - 1), *a\(level - 1)]\n" }
        let limit = YAMLTree.nodeLimit(forBytes: text.utf8.count)
        XCTAssertLessThan(limit, 1 << 16, "the document must expand beyond its own limit for this test")
        XCTAssertThrowsError(try YAMLTree.compose(text, maximumNodes: limit)) { error in
            XCTAssertEqual("\(error)", "aliases expand the document beyond \(limit) nodes, the limit")
        }
        // A scene that reuses an anchor a few times is well within it.
        let reuse = "base: &b {size: 12, colour: red}\none: *b\ntwo: *b\nthree: *b\n"
        let root = try XCTUnwrap(YAMLTree.compose(reuse, maximumNodes: YAMLTree.nodeLimit(forBytes: reuse.utf8.count)))
        XCTAssertEqual(root.mapping?["three"]?.mapping?["size"]?.int, 12)
    }

    func testASceneFileWithAnAliasBombGetsALocatedError() {
        var text = "a0: &a0 [x, x]\n"
        for level in 1...20 { text += "a\(level): &a\(level) [*a\(level - 1), *a\(level - 1)]\n" }
        XCTAssertThrowsError(try SceneLoader.parse(data: Data(text.utf8), file: "bomb.yaml", baseDirectory: "/tmp")) { error in
            let message = "\(error)"
            // Where the expansion crosses the limit: a11's first alias.
            XCTAssertTrue(message.contains("bomb.yaml:12:12"), message)
            XCTAssertTrue(message.contains("aliases expand the document beyond"), message)
        }
    }
}
