import Foundation
import KioskScene
import XCTest

/// `data_sources`: topics bound to data keys, validated like the rest of the scene, and the value a payload
/// gives a key.
final class DataSourceTests: XCTestCase {
    private func scene(_ sources: [String], _ test: String = #function) throws -> (path: String, lines: [String]) {
        let dir = try SceneFixtures.directory(test.replacingOccurrences(of: "()", with: ""))
        let text = (["data_sources:"] + sources.map { "  " + $0 }).joined(separator: "\n") + "\n" + SceneFixtures.onePage(["- {type: text, text: x}"])
        return try SceneFixtures.check(text, in: dir)
    }

    func testValidSourcesAreKeptInTheScene() throws {
        let (path, lines) = try scene(["- {mqtt: home/livingroom/temperature, key: temperature, field: value}",
                                       "- {mqtt: 'sensors/+/humidity', key: humidity}", "- {mqtt: 'alerts/#', key: alert}"])
        XCTAssertEqual(lines, ["ok"])
        let loaded = try SceneLoader.load(path: path)
        XCTAssertEqual(loaded.scene.dataSources.map(\.topic), ["home/livingroom/temperature", "sensors/+/humidity", "alerts/#"])
        XCTAssertEqual(loaded.scene.dataSources.map(\.key), ["temperature", "humidity", "alert"])
        XCTAssertEqual(loaded.scene.dataSources.map(\.field), ["value", nil, nil])
        XCTAssertEqual(loaded.scene.dataSources[0].location.line, 2)
    }

    func testEachMistakeIsLocated() throws {
        let (path, lines) = try scene(["- {mqtt: a/b#, key: k}", "- {mqtt: x, key: '9bad'}", "- {key: k}", "- {mqtt: x, key: k, fields: v}",
                                       "- {mqtt: 'a/+b', key: k}", "- just a topic"])
        XCTAssertEqual(lines.count, 6, lines.joined(separator: "\n"))
        XCTAssertTrue(lines[0].hasPrefix("\(path):2:12: data_sources[0].mqtt: 'a/b#' is not a valid topic"), lines[0])
        XCTAssertTrue(lines[1].hasPrefix("\(path):3:20: data_sources[1].key: expected a binding key"), lines[1])
        XCTAssertTrue(lines[2].hasPrefix("\(path):4:5: data_sources[2]: missing 'mqtt'"), lines[2])
        XCTAssertTrue(lines[3].hasPrefix("\(path):5:23: data_sources[3].fields: unknown key 'fields'; did you mean 'field'?"), lines[3])
        XCTAssertTrue(lines[4].hasPrefix("\(path):6:12: data_sources[4].mqtt:"), lines[4])
        XCTAssertTrue(lines[5].hasPrefix("\(path):7:5: data_sources[5]: expected a mapping"), lines[5])
    }

    func testPayloadValues() {
        let location = SourceLocation(file: "s.yaml", line: 1, column: 1)
        let plain = DataSource(topic: "t", key: "k", location: location)
        XCTAssertEqual(try plain.value(of: Array("21.5 °C".utf8)).get(), "21.5 °C")
        XCTAssertThrowsError(try plain.value(of: [0xFF, 0xFE]).get())
        let field = DataSource(topic: "t", key: "k", field: "value", location: location)
        XCTAssertEqual(try field.value(of: Array(#"{"value": 23, "unit": "C"}"#.utf8)).get(), "23")
        XCTAssertEqual(try field.value(of: Array(#"{"value": "open"}"#.utf8)).get(), "open")
        for (payload, problem) in [("not json {", "not a JSON object"), (#"{"other": 1}"#, "has no 'value'"),
                                   (#"{"value": [1]}"#, "not a string or number"), ("[1]", "not a JSON object")] {
            XCTAssertThrowsError(try field.value(of: Array(payload.utf8)).get(), payload) { error in
                XCTAssertTrue("\(error)".contains(problem), "\(payload): \(error)")
            }
        }
    }
}
