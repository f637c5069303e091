import Foundation
import KioskTestSupport
import XCTest

/// The control protocol's strictness, end to end against a headless `kioskd run`: every registered command refuses
/// an argument it does not know, naming it, and a request line with a duplicated key is refused whole.
final class ControlStrictnessTests: XCTestCase {
    private var daemon: ControlledKioskd!

    override func setUpWithError() throws {
        daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60"])
    }

    override func tearDownWithError() throws {
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
        daemon = nil
    }

    /// Walks the commands `version` lists: an unknown argument is refused before the command runs, so even the
    /// scene commands answer it, not a missing argument.
    func testEveryRegisteredCommandRefusesAnUnknownArgumentNamingIt() throws {
        let commands = try XCTUnwrap(try daemon.result("version")["commands"] as? [String])
        XCTAssertGreaterThanOrEqual(commands.count, 17, "\(commands)")
        for command in commands {
            let error = try daemon.error(command, #"{"zz_unknown": 1}"#)
            XCTAssertEqual(error.code, "invalid_argument", command)
            XCTAssertTrue(error.message.hasPrefix("\(command): unknown argument 'zz_unknown'; "), error.message)
        }
        XCTAssertEqual(try daemon.result("display.info")["power"] as? String, "on", "a refused display.power changed nothing")
    }

    func testAMisspeltArgumentSuggestsTheNearestKnownOne() throws {
        let power = try daemon.error("display.power", #"{"onn": false}"#)
        XCTAssertEqual(power.message, "display.power: unknown argument 'onn'; did you mean 'on'?")
        let load = try daemon.error("scene.load", #"{"path": "/tmp/x.yaml", "base_dir": "/tmp"}"#)
        XCTAssertEqual(load.message, "scene.load: unknown argument 'base_dir'; known: 'base_directory', 'output', 'path', 'url', 'yaml'")
        let transition = try daemon.error("page.show", #"{"name": "main", "transition": {"kind": "fade", "easeing": "linear"}}"#)
        XCTAssertEqual(transition.code, "invalid_argument")
        XCTAssertEqual(transition.message, "page.show: unknown argument 'transition.easeing'; did you mean 'transition.easing'?")
        XCTAssertEqual(try daemon.result("display.info")["power"] as? String, "on")
    }

    func testADuplicatedKeyAtAnyLevelIsInvalidRequestAndTheConnectionStays() throws {
        let socket = try daemon.connect()
        let cases: [(line: String, message: String)] = [
            (#"{"id":1,"cmd":"ping","cmd":"stats"}"#, "duplicate key 'cmd' in the request"),
            (#"{"id":1,"cmd":"display.power","args":{"on":true,"on":false}}"#, "duplicate key 'on' in 'args'"),
            (#"{"id":1,"cmd":"data.set","args":{"values":{"a":"1","a":"2"}}}"#, "duplicate key 'a' in 'args.values'"),
        ]
        for (line, message) in cases {
            let reply = try XCTUnwrap(socket.request(line), line)
            XCTAssertEqual(reply["id"] as? Int, 1, line)
            let error = try XCTUnwrap(reply["error"] as? [String: Any], line)
            XCTAssertEqual(error["code"] as? String, "invalid_request", line)
            XCTAssertEqual(error["message"] as? String, message, line)
        }
        XCTAssertEqual(socket.request(#"{"id": 2, "cmd": "ping"}"#)?["ok"] as? Bool, true)
    }
}
