import Foundation
import KioskTestSupport
import XCTest

/// Clients nobody here wrote, on the control socket of a headless `kioskd run`: Python's standard library and socat,
/// as an operator's script would talk to it. The commands' replies and error paths are tested in process
/// (KioskAppTests' `ControlCommandTests`).
final class ControlClientTests: XCTestCase {
    private var daemon: ControlledKioskd!

    override func setUpWithError() throws {
        daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--screenshot-dir", KioskdProcess.scratchRoot])
    }

    override func tearDownWithError() throws {
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
        daemon = nil
    }

    func testPythonStandardLibraryClient() throws {
        let script = """
        import json, socket, sys
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sys.argv[1])
        f = s.makefile("rw", encoding="utf-8", newline="\\n")
        def call(request):
            f.write(json.dumps(request) + "\\n")
            f.flush()
            return json.loads(f.readline())
        out = {
            "ping": call({"id": "p", "cmd": "ping"}),
            "info": call({"id": 2, "cmd": "display.info"}),
            "bad": call({"id": None, "cmd": "display.power", "args": {"on": "yes"}}),
            "unknown": call({"id": 3.5, "cmd": "frobnicate"}),
            "shot": call({"id": "s", "cmd": "screenshot"}),
        }
        out["shot"]["result"]["png_base64"] = out["shot"]["result"]["png_base64"][:8]
        print(json.dumps(out))
        """
        let output = try runTool("/usr/bin/python3", ["-c", script, daemon.socketPath])
        XCTAssertEqual(output.status, 0, output.text)
        let replies = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(output.text.utf8)) as? [String: [String: Any]], output.text)
        XCTAssertEqual(replies["ping"]?["id"] as? String, "p")
        XCTAssertEqual((replies["ping"]?["result"] as? [String: Any])?["pong"] as? Bool, true)
        XCTAssertEqual(((replies["info"]?["result"] as? [String: Any])?["mode"] as? [String: Any])?["width"] as? Int, 320)
        XCTAssertEqual(replies["info"]?["id"] as? Int, 2)
        XCTAssertTrue(replies["bad"]?["id"] is NSNull)
        XCTAssertEqual((replies["bad"]?["error"] as? [String: Any])?["code"] as? String, "invalid_argument")
        XCTAssertEqual(replies["unknown"]?["id"] as? Double, 3.5)
        XCTAssertEqual((replies["unknown"]?["error"] as? [String: Any])?["code"] as? String, "unknown_command")
        XCTAssertEqual((replies["shot"]?["result"] as? [String: Any])?["png_base64"] as? String, "iVBORw0K", "base64 of the PNG signature")
    }

    func testSocatClient() throws {
        let output = try runTool("/bin/sh", ["-c", #"printf '{"id":"s","cmd":"ping"}\r\n{"id":"i","cmd":"display.info"}\n{"id":"x","cmd":"nope"}\n' | socat -t 5 - UNIX-CONNECT:"$0""#,
                                             daemon.socketPath])
        XCTAssertEqual(output.status, 0, output.text)
        let lines = output.text.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 3, output.text)
        XCTAssertEqual(lines.first, #"{"id":"s","ok":true,"result":{"pong":true}}"#)
        let info = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        XCTAssertEqual(info["id"] as? String, "i")
        XCTAssertEqual(((info["result"] as? [String: Any])?["mode"] as? [String: Any])?["height"] as? Int, 240)
        XCTAssertTrue(lines[2].contains(#""code":"unknown_command""#), lines[2])
    }
}
