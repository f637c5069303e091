import KioskControl
import XCTest

final class ControlProtocolTests: XCTestCase {
    private func failure(_ text: String) -> RequestFailure? {
        if case .failure(let failure) = ControlRequest.decode(Array(text.utf8)) { return failure }
        return nil
    }

    func testWellFormedRequestDecodes() throws {
        let request = try ControlRequest.decode(Array(#"{"id": 7, "cmd": "log.level", "args": {"level": "debug"}}"#.utf8)).get()
        XCTAssertEqual(request.id, .int(7))
        XCTAssertEqual(request.command, "log.level")
        XCTAssertEqual(try request.arguments.string("level"), "debug")
    }

    func testAnyScalarIdOrNoneIsAccepted() throws {
        XCTAssertEqual(try ControlRequest.decode(Array(#"{"id":"abc","cmd":"ping"}"#.utf8)).get().id, .string("abc"))
        XCTAssertEqual(try ControlRequest.decode(Array(#"{"id":1.5,"cmd":"ping"}"#.utf8)).get().id, .double(1.5))
        XCTAssertEqual(try ControlRequest.decode(Array(#"{"id":true,"cmd":"ping"}"#.utf8)).get().id, .bool(true))
        XCTAssertEqual(try ControlRequest.decode(Array(#"{"cmd":"ping"}"#.utf8)).get().id, .null)
    }

    func testMalformedJSONIsInvalidJSON() {
        XCTAssertEqual(failure(#"{"cmd": "ping""#)?.error.code, "invalid_json")
        XCTAssertEqual(failure("not json at all")?.error.code, "invalid_json")
        XCTAssertEqual(failure("\u{FF}\u{FE}")?.error.code, "invalid_json")
    }

    func testNonObjectIsInvalidRequest() {
        XCTAssertEqual(failure("[1,2]")?.error.code, "invalid_request")
        XCTAssertEqual(failure("42")?.error.code, "invalid_request")
    }

    func testMissingOrNonStringCmdIsInvalidRequestAndKeepsTheId() {
        let missing = failure(#"{"id": 3}"#)
        XCTAssertEqual(missing?.error.code, "invalid_request")
        XCTAssertEqual(missing?.id, .int(3))
        let number = failure(#"{"id": "x", "cmd": 5}"#)
        XCTAssertEqual(number?.error.code, "invalid_request")
        XCTAssertEqual(number?.id, .string("x"))
    }

    func testNonScalarIdAndNonObjectArgsAreInvalidRequest() {
        XCTAssertEqual(failure(#"{"id": [1], "cmd": "ping"}"#)?.error.code, "invalid_request")
        XCTAssertEqual(failure(#"{"id": 1, "cmd": "ping", "args": [1]}"#)?.error.code, "invalid_request")
    }

    func testWrongArgumentTypesAreInvalidArgumentNamingTheKey() {
        let args = ControlArguments(["level": 3, "events": ["flip", 2]], command: "demo")
        XCTAssertThrowsError(try args.string("level")) { error in
            XCTAssertEqual((error as? ControlError)?.code, "invalid_argument")
            XCTAssertTrue("\(error)".contains("'level'"))
        }
        XCTAssertThrowsError(try args.stringArray("events")) { XCTAssertEqual(($0 as? ControlError)?.code, "invalid_argument") }
        XCTAssertThrowsError(try args.bool("missing")) { XCTAssertEqual(($0 as? ControlError)?.code, "invalid_argument") }
    }

    /// Deep nesting is refused before the JSON parser sees it (Foundation's scanner crashes on 513 open `[`).
    func testDeeplyNestedLinesAreInvalidJSONWithoutReachingTheParser() {
        for line in [String(repeating: "[", count: 513), String(repeating: "[", count: 100_000),
                     #"{"id": 1, "cmd": "ping", "args": "# + String(repeating: #"{"a": "#, count: 600)] {
            guard case .failure(let failure) = ControlRequest.decode(Array(line.utf8)) else { return XCTFail("decoded \(line.prefix(20))") }
            XCTAssertEqual(failure.error.code, "invalid_json")
            XCTAssertTrue(failure.error.message.contains("deeper than 64"), failure.error.message)
        }
        let sixtyFour = #"{"id": 1, "cmd": "ping", "args": {"x": "# + String(repeating: "[", count: 62) + String(repeating: "]", count: 62) + "}}"
        guard case .success = ControlRequest.decode(Array(sixtyFour.utf8)) else { return XCTFail("64 levels are allowed") }
        let bracketsInAString = #"{"id": 1, "cmd": "ping", "args": {"x": ""# + String(repeating: "[", count: 1000) + #""}}"#
        guard case .success = ControlRequest.decode(Array(bracketsInAString.utf8)) else { return XCTFail("brackets in strings do not count") }
    }

    func testNumberObjectAndNestedArgumentsNameTheirPath() throws {
        let args = ControlArguments(["d": 0.5, "i": 3, "s": "x", "list": [1, 2.5], "empty": [], "o": ["kind": 4], "inf": .double(.infinity)],
                                    command: "animate")
        XCTAssertEqual(try args.number("d"), 0.5)
        XCTAssertEqual(try args.number("i"), 3)
        XCTAssertEqual(try args.numbers("i"), [3])
        XCTAssertEqual(try args.numbers("list"), [1, 2.5])
        XCTAssertTrue(args.has("s"))
        XCTAssertFalse(args.has("absent"))
        XCTAssertThrowsError(try args.number("s")) { XCTAssertEqual(($0 as? ControlError)?.message, "animate: 's' must be a number, got string") }
        XCTAssertThrowsError(try args.number("inf")) { XCTAssertEqual(($0 as? ControlError)?.code, "invalid_argument") }
        XCTAssertThrowsError(try args.numbers("empty")) { XCTAssertTrue(($0 as? ControlError)?.message.contains("'empty'") == true) }
        XCTAssertThrowsError(try args.object("s")) { XCTAssertEqual(($0 as? ControlError)?.message, "animate: 's' must be an object, got string") }
        let nested = try args.nested("o", known: ["kind", "easing", "duration"])
        XCTAssertThrowsError(try nested.string("kind")) {
            XCTAssertEqual(($0 as? ControlError)?.message, "animate: 'o.kind' must be a string, got number")
        }
        XCTAssertThrowsError(try nested.string("easing")) { XCTAssertEqual(($0 as? ControlError)?.message, "animate: missing 'o.easing'") }
        XCTAssertEqual(nested.invalid("duration", "must not be negative").message, "animate: 'o.duration' must not be negative")
    }

    /// Foundation keeps one of two equal keys silently; the request is refused instead, wherever the pair sits.
    func testADuplicatedKeyAtAnyLevelIsInvalidRequestNamingIt() {
        let cases: [(line: String, message: String, id: JSONValue)] = [
            (#"{"id":1,"cmd":"ping","cmd":"stats"}"#, "duplicate key 'cmd' in the request", 1),
            (#"{"id":1,"cmd":"ping","id":2}"#, "duplicate key 'id' in the request", .null),
            (#"{"id":"a","cmd":"data.set","args":{"values":{"k":1,"k":2}}}"#, "duplicate key 'k' in 'args.values'", "a"),
            (#"{"id":3,"cmd":"x","args":{"list":[{"a":1},{"b":1,"b":2}]}}"#, "duplicate key 'b' in 'args.list[1]'", 3),
            (#"{"id":4,"cmd":"ping","cmd":"stats"}"#, "duplicate key 'cmd' in the request", 4),
        ]
        for (line, message, id) in cases {
            let refused = failure(line)
            XCTAssertEqual(refused?.error.code, "invalid_request", line)
            XCTAssertEqual(refused?.error.message, message, line)
            XCTAssertEqual(refused?.id, id, line)
        }
    }

    func testEqualKeysInDifferentObjectsOrInsideStringsAreNotDuplicates() throws {
        for line in [#"{"id":1,"cmd":"x","args":{"id":2,"cmd":{"cmd":3},"a":[{"k":1},{"k":2}]}}"#,
                     #"{"id":1,"cmd":"x","args":{"text":"\"a\":1,\"a\":2","a":"{\"b\":1,\"b\":2}"}}"#,
                     #"{"id":1,"cmd":"x","args":{"a\"":1,"a":2}}"#] {
            XCTAssertNil(JSONValue.firstDuplicateKey(in: Array(line.utf8)), line)
            XCTAssertNoThrow(try ControlRequest.decode(Array(line.utf8)).get(), line)
        }
    }

    func testAnUnknownArgumentIsRefusedWithTheNearestKnownName() {
        func message(_ values: [String: JSONValue], known: Set<String>, command: String = "scene.load") -> String? {
            do {
                try ControlArguments(values, command: command).refuseUnknown(known: known)
                return nil
            } catch {
                XCTAssertEqual(error.code, "invalid_argument")
                return error.message
            }
        }
        XCTAssertNil(message(["path": "/a"], known: ["path", "yaml"]))
        XCTAssertEqual(message(["pth": "/a"], known: ["path", "yaml", "base_directory"]),
                       "scene.load: unknown argument 'pth'; did you mean 'path'?")
        XCTAssertEqual(message(["colour": 1], known: ["path", "yaml"]), "scene.load: unknown argument 'colour'; known: 'path', 'yaml'")
        XCTAssertEqual(message(["x": 1], known: [], command: "ping"), "ping: unknown argument 'x'; ping takes no arguments")
        let transition = ControlArguments(["transition": ["kind": "fade", "durration": 1]], command: "page.show")
        XCTAssertThrowsError(try transition.nested("transition", known: ["kind", "duration", "easing"])) {
            XCTAssertEqual(($0 as? ControlError)?.message, "page.show: unknown argument 'transition.durration'; did you mean 'transition.duration'?")
        }
    }

    func testRepliesAndEventsAreSingleLinesOfTheDocumentedShape() throws {
        let ok = ControlMessage.line(ControlMessage.success(id: 1, result: ["text": "a\nb"]))
        XCTAssertEqual(ok.last, 0x0A)
        XCTAssertEqual(ok.filter { $0 == 0x0A }.count, 1, "newlines inside strings are escaped")
        let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(ok))
        XCTAssertEqual(decoded, ["id": 1, "ok": true, "result": ["text": "a\nb"]])

        let error = try JSONDecoder().decode(JSONValue.self, from: Data(ControlMessage.line(
            ControlMessage.failure(id: .null, error: .invalidJSON("bad")))))
        XCTAssertEqual(error, ["id": nil, "ok": false, "error": ["code": "invalid_json", "message": "bad"]])

        let event = try JSONDecoder().decode(JSONValue.self, from: Data(ControlMessage.line(ControlMessage.event("flip", data: ["sequence": 9]))))
        XCTAssertEqual(event, ["event": "flip", "data": ["sequence": 9]])
    }

    func testUnencodableResultBecomesAnInternalErrorReply() throws {
        let line = ControlMessage.line(ControlMessage.success(id: 4, result: ["x": .double(.nan)]))
        let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(line))
        XCTAssertEqual(decoded["ok"], false)
        XCTAssertEqual(decoded["id"], 4)
        XCTAssertEqual(decoded["error"]?["code"], "internal_error")
    }

    func testIntegersSurviveARoundTripExactly() throws {
        let big: JSONValue = ["timestamp_ns": .int(1_763_776_123_456_789_012)]
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: big.jsonLine()), big)
    }

    func testPeerPolicyAllowsRootOwnUserAndListedIdsOnly() {
        let policy = PeerPolicy(allowedUIDs: [1001], allowedGIDs: [2002], serverUID: 500)
        XCTAssertTrue(policy.allows(PeerCredentials(pid: 1, uid: 0, gid: 0)), "root is always allowed")
        XCTAssertTrue(policy.allows(PeerCredentials(pid: 1, uid: 500, gid: 9)), "the daemon's own user")
        XCTAssertTrue(policy.allows(PeerCredentials(pid: 1, uid: 1001, gid: 9)))
        XCTAssertTrue(policy.allows(PeerCredentials(pid: 1, uid: 77, gid: 2002)))
        XCTAssertFalse(policy.allows(PeerCredentials(pid: 1, uid: 77, gid: 9)))
        XCTAssertTrue(policy.allows(PeerCredentials(pid: 1, uid: 77, gid: 9, groups: [5, 2002])), "a supplementary group in the list")
        XCTAssertFalse(policy.allows(PeerCredentials(pid: 1, uid: 77, gid: 9, groups: [5, 6])))
    }
}
