import Foundation
import KioskCore
import KioskTestSupport
import XCTest
@testable import KioskScene

/// Every YAML and JSON text from outside (scene files, `scene.load`, the config and board files, MQTT payloads for
/// data sources) is composed through `YAMLTree`, whose event scan bounds the work before a tree exists. These tests
/// throw adversarial documents at each entry point and hold every one to a time bound or a located refusal.
final class HostileYAMLTests: XCTestCase {
    /// `returnsPromptly`, failing the test when `work` does not finish by `deadline`: a parser that never returns
    /// fails instead of hanging the suite.
    private func finishes<T: Sendable>(within deadline: Duration, _ what: String, _ work: @escaping @Sendable () -> T) -> T? {
        guard let value = returnsPromptly(within: deadline, work) else {
            XCTFail("\(what) did not finish within its deadline")
            return nil
        }
        return value
    }

    /// The field's document: twelve levels of ten-element lists, each of aliases to the level before (10^12
    /// leaves), then a mapping key that is an alias to the last. Composing it first hung the loop for good.
    static let fieldBomb: String = {
        var text = "a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n"
        for level in 1...11 { text += "a\(level): &a\(level) [" + Array(repeating: "*a\(level - 1)", count: 10).joined(separator: ",") + "]\n" }
        return text + "? *a11 : boom\n"
    }()

    func testTheFieldsAliasBombIsRefusedAtOnceEverywhere() throws {
        XCTAssertLessThan(Self.fieldBomb.utf8.count, 700, "the document is as small as the one seen in the field")
        let source = DataSource(topic: "sensors/t", key: "t", field: "value", location: SourceLocation(file: "s.yaml", line: 1, column: 1))
        let payload = Array(Self.fieldBomb.utf8)
        let outcome = finishes(within: .seconds(5), "the data-source payload") { source.value(of: payload) }
        guard case .failure(let problem)? = outcome else { return XCTFail("the payload gave a value: \(String(describing: outcome))") }
        XCTAssertTrue(problem.description.contains("aliases expand the document beyond"), problem.description)
        XCTAssertTrue(problem.description.hasPrefix("topic sensors/t:"), problem.description)

        let scene = finishes(within: .seconds(5), "the scene") { () -> String in
            do { _ = try SceneLoader.parse(data: Data(Self.fieldBomb.utf8), file: "bomb.yaml", baseDirectory: "/tmp"); return "parsed" }
            catch { return "\(error)" }
        }
        // Refused where the expansion crosses the limit: among the fourth level's aliases, long before the key.
        XCTAssertTrue(scene?.contains("bomb.yaml:4:42:") ?? false, scene ?? "")
        XCTAssertTrue(scene?.contains("aliases expand the document beyond") ?? false, scene ?? "")
    }

    func testAnAliasCannotBeAMappingKey() throws {
        // Within every size budget: refused for where the alias stands, so no key is ever hashed through an expansion.
        XCTAssertThrowsError(try YAMLTree.compose("a: &k x\n? *k\n: v\n", maximumNodes: 100)) { error in
            XCTAssertEqual(error as? YAMLTree.Refused, YAMLTree.Refused(message: "an alias (*k) cannot be a mapping key", line: 2, column: 3))
        }
        XCTAssertThrowsError(try YAMLTree.compose("a: &k x\nb: {*k : 1}\n", maximumNodes: 100)) { error in
            XCTAssertEqual(error as? YAMLTree.Refused, YAMLTree.Refused(message: "an alias (*k) cannot be a mapping key", line: 2, column: 5))
        }
        // As a value, and merged, an alias is fine.
        let root = try XCTUnwrap(YAMLTree.compose("base: &b {size: 12}\none: *b\ntwo: {<<: *b, colour: red}\n", maximumNodes: 100))
        XCTAssertEqual(root.mapping?["one"]?.mapping?["size"]?.int, 12)
    }

    func testAMappingKeyMustBeAScalar() {
        XCTAssertThrowsError(try YAMLTree.compose("? [1, 2]\n: v\n", maximumNodes: 100)) { error in
            XCTAssertEqual(error as? YAMLTree.Refused, YAMLTree.Refused(message: "a mapping key must be a scalar, not a sequence", line: 1, column: 3))
        }
        XCTAssertThrowsError(try YAMLTree.compose("{{a: 1}: 2}", maximumNodes: 100)) { error in
            XCTAssertEqual(error as? YAMLTree.Refused, YAMLTree.Refused(message: "a mapping key must be a scalar, not a mapping", line: 1, column: 2))
        }
    }

    func testNestingIsBoundedInBlockStyle() {
        let text = (0..<200).map { String(repeating: " ", count: $0) + "k\($0):\n" }.joined()
        XCTAssertThrowsError(try YAMLTree.compose(text, maximumNodes: 10_000)) { error in
            let refused = error as? YAMLTree.Refused
            XCTAssertEqual(refused?.message, "nesting deeper than \(YAMLTree.defaultMaximumDepth) levels")
            XCTAssertEqual(refused?.line, YAMLTree.defaultMaximumDepth + 1, "the first key one level too deep")
        }
    }

    func testNodesAreCountedWithoutAliasesToo() {
        let text = "[" + Array(repeating: "1", count: 200).joined(separator: ",") + "]"
        XCTAssertThrowsError(try YAMLTree.compose(text, maximumNodes: 100)) { error in
            XCTAssertEqual((error as? YAMLTree.Refused)?.message, "the document has more than 100 nodes, the limit")
        }
    }

    /// 10,000 generated documents at each entry point: each is composed or refused within 50 ms of CPU, and a refused
    /// scene, config or board file names its line and column. The bound is judged on optimized code, as kioskd
    /// ships (test-all runs this class from its optimized test bundle); an unoptimized build runs a tenth of the
    /// documents against ten times the bound. (It shares no state across threads: the ThreadSanitizer tier skips it.)
    func testTenThousandHostileDocumentsFinishInTimeOrAreRefusedWithALocation() {
        let count = Self.isOptimized ? 10_000 : 1_000
        let bound = Self.timeBoundMilliseconds
        let outcome = finishes(within: .seconds(600), "the hostile documents") { () -> [String] in
            var problems: [String] = []
            let source = DataSource(topic: "t", key: "k", field: "value", location: SourceLocation(file: "s.yaml", line: 1, column: 1))
            let entryPoints: [(String, (Data) -> String?)] = [
                ("scene", { data in
                    do { _ = try SceneLoader.parse(data: data, file: "fuzz.yaml", baseDirectory: "/nonexistent"); return nil }
                    catch { return Self.locatedProblem(error) } }),
                ("config", { data in
                    do { _ = try ConfigLoader.parse(data: data, file: "fuzz.yaml", baseDirectory: "/nonexistent"); return nil }
                    catch { return Self.locatedProblem(error) } }),
                ("payload", { data in
                    if case .failure(let problem) = source.value(of: Array(data)), !problem.description.hasPrefix("topic t: ") {
                        return "unnamed problem: \(problem)"
                    }
                    return nil }),
            ]
            var slowest: (Double, String) = (0, "")
            for (n, (kind, bytes)) in HostileDocuments(count: count, seed: 0x686F7374696C65).enumerated() {
                let data = Data(bytes)
                for (name, parse) in entryPoints {
                    let start = Self.threadCPUNanoseconds()
                    let problem = parse(data)
                    let elapsed = Double(Self.threadCPUNanoseconds() - start) / 1e6
                    if elapsed > slowest.0 { slowest = (elapsed, "\(name) #\(n) \(kind)") }
                    if elapsed > bound { problems.append("\(name) #\(n) \(kind): \(elapsed) ms") }
                    if let problem { problems.append("\(name) #\(n) \(kind): \(problem)") }
                }
            }
            print("hostile documents: \(count) at each entry point; slowest \(slowest.0) ms (\(slowest.1)); bound \(bound) ms")
            return problems
        }
        XCTAssertEqual(outcome?.prefix(20).map { $0 } ?? ["no outcome"], [], "\(outcome?.count ?? 0) documents failed")
    }

    /// The CPU time this thread has used: the work a parse did, apart from the time the host gave to others (the
    /// suite's other processes share two cores).
    static func threadCPUNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Whether this test bundle was built with optimization (`-O`), as the package kioskd is.
    static var isOptimized: Bool { !_isDebugAssertConfiguration() }

    /// 50 ms per document in optimized code; ten times that unoptimized.
    static var timeBoundMilliseconds: Double { isOptimized ? 50 : 500 }

    /// nil when `error` is a located refusal (every diagnostic has a line and column), else what is wrong with it.
    private static func locatedProblem(_ error: Error) -> String? {
        guard let validation = error as? SceneValidationError else { return "not a validation error: \(error)" }
        if validation.diagnostics.isEmpty { return "a refusal with no diagnostic" }
        for d in validation.diagnostics where d.location.line < 1 || d.location.column < 1 {
            return "an unlocated diagnostic: \(d)"
        }
        return nil
    }
}
