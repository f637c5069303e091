import Foundation
@testable import KioskApp
import KioskTestSupport
import XCTest

/// The control protocol's strictness, end to end on a kiosk's control socket (in process, a client on the socket as
/// a script would be): every registered command refuses an argument it does not know, naming it, and a request line
/// with a duplicated key is refused whole.
final class ControlStrictnessTests: XCTestCase {
    private var harness: KioskHarness!
    private var client: HarnessClient!

    override func setUpWithError() throws {
        harness = try KioskHarness("control-strictness")
        client = try harness.connect()
    }

    override func tearDown() {
        client = nil
        harness = nil
    }

    /// The reply to `command` with `arguments` (JSON) over the socket.
    private func reply(_ command: String, _ arguments: String = "{}") throws -> [String: Any] {
        try client.request(#"{"id": 1, "cmd": "\#(command)", "args": \#(arguments)}"#)
    }

    private func error(_ command: String, _ arguments: String) throws -> (code: String?, message: String) {
        let error = try XCTUnwrap(try reply(command, arguments)["error"] as? [String: Any], "\(command) \(arguments)")
        return (error["code"] as? String, error["message"] as? String ?? "")
    }

    private func power() throws -> String? {
        (try reply("display.info")["result"] as? [String: Any])?["power"] as? String
    }

    /// Walks the commands `version` lists: an unknown argument is refused before the command runs, so even the
    /// scene commands answer it, not a missing argument.
    func testEveryRegisteredCommandRefusesAnUnknownArgumentNamingIt() throws {
        let commands = try XCTUnwrap((try reply("version")["result"] as? [String: Any])?["commands"] as? [String])
        XCTAssertGreaterThanOrEqual(commands.count, 17, "\(commands)")
        for command in commands {
            let error = try error(command, #"{"zz_unknown": 1}"#)
            XCTAssertEqual(error.code, "invalid_argument", command)
            XCTAssertTrue(error.message.hasPrefix("\(command): unknown argument 'zz_unknown'; "), error.message)
        }
        XCTAssertEqual(try power(), "on", "a refused display.power changed nothing")
    }

    func testAMisspeltArgumentSuggestsTheNearestKnownOne() throws {
        let power = try error("display.power", #"{"onn": false}"#)
        XCTAssertEqual(power.message, "display.power: unknown argument 'onn'; did you mean 'on'?")
        let load = try error("scene.load", #"{"path": "/tmp/x.yaml", "base_dir": "/tmp"}"#)
        XCTAssertEqual(load.message, "scene.load: unknown argument 'base_dir'; known: 'base_directory', 'output', 'path', 'url', 'yaml'")
        let transition = try error("page.show", #"{"name": "main", "transition": {"kind": "fade", "easeing": "linear"}}"#)
        XCTAssertEqual(transition.code, "invalid_argument")
        XCTAssertEqual(transition.message, "page.show: unknown argument 'transition.easeing'; did you mean 'transition.easing'?")
        XCTAssertEqual(try self.power(), "on")
    }

    func testADuplicatedKeyAtAnyLevelIsInvalidRequestAndTheConnectionStays() throws {
        let cases: [(line: String, message: String)] = [
            (#"{"id":1,"cmd":"ping","cmd":"stats"}"#, "duplicate key 'cmd' in the request"),
            (#"{"id":1,"cmd":"display.power","args":{"on":true,"on":false}}"#, "duplicate key 'on' in 'args'"),
            (#"{"id":1,"cmd":"data.set","args":{"values":{"a":"1","a":"2"}}}"#, "duplicate key 'a' in 'args.values'"),
        ]
        for (line, message) in cases {
            let reply = try client.request(line)
            XCTAssertEqual(reply["id"] as? Int, 1, line)
            let error = try XCTUnwrap(reply["error"] as? [String: Any], line)
            XCTAssertEqual(error["code"] as? String, "invalid_request", line)
            XCTAssertEqual(error["message"] as? String, message, line)
        }
        XCTAssertEqual(try client.request(#"{"id": 2, "cmd": "ping"}"#)["ok"] as? Bool, true)
    }
}
