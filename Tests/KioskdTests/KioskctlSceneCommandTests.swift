import Foundation
import KioskTestSupport
import XCTest

/// A scene of two pages whose first shows a text widget, `title`, reading `title`.
private func writeScene(_ directory: URL, name: String = "scene.yaml", title: String = "Hello") throws -> URL {
    let yaml = """
    size: display
    pages:
      - name: main
        widgets:
          - {id: title, type: text, text: "\(title)", x: 0, y: 0, width: 100%, height: 20%}
      - name: second
        widgets: []

    """
    let url = directory.appendingPathComponent(name)
    try yaml.write(to: url, atomically: true, encoding: .utf8)
    return url
}

/// kioskctl's scene subcommands (`scene`, `widget`, `data`, `page`, `animate`) against a headless
/// `kioskd run --scene FILE`: what each prints, `--json`, and the exit status of an error reply. The commands' own
/// rules are tested in process by `KioskAppTests.SceneCommandTests`.
final class KioskctlSceneCommandTests: XCTestCase {
    private var daemon: ControlledKioskd!
    private var directory: URL!
    private var sceneFile: URL!

    override func setUpWithError() throws {
        directory = try KioskdProcess.scratchDirectory("kioskctl-scene-\(name.filter { $0.isLetter })")
        sceneFile = try writeScene(directory)
    }

    /// Started by each test rather than in setUp, so a daemon that does not come up fails the test instead of
    /// being reported as a skip.
    private func startDaemon() throws {
        daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", sceneFile.path])
    }

    override func tearDownWithError() throws {
        daemon?.stop()
        daemon = nil
    }

    /// kioskctl's scene subcommands, human-readable and raw.
    func testKioskctlSceneSubcommands() throws {
        try startDaemon()
        var r = try daemon.kioskctl(["scene", "get"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(String(decoding: r.stdout, as: UTF8.self).contains("current_page: main"))
        r = try daemon.kioskctl(["widget", "set", "title", "text=From kioskctl", "opacity=0.5"])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try daemon.kioskctl(["widget", "get", "title", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let widget = try XCTUnwrap(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
        XCTAssertEqual((widget["result"] as? [String: Any])?["text"] as? String, "From kioskctl")
        r = try daemon.kioskctl(["data", "set", "temperature=30", "level=0.75"])
        XCTAssertEqual(String(decoding: r.stdout, as: UTF8.self), "set 2 keys\n")
        r = try daemon.kioskctl(["data", "get", "temperature"])
        XCTAssertEqual(String(decoding: r.stdout, as: UTF8.self), "temperature: 30\n")
        r = try daemon.kioskctl(["page", "show", "second", "--transition", "fade", "--duration", "0.1", "--easing", "ease-in-out"])
        XCTAssertEqual(String(decoding: r.stdout, as: UTF8.self), "page: second\n", r.stderr)
        r = try daemon.kioskctl(["animate", "title", "position", "5", "-6", "--spring", "--stiffness", "150", "--velocity", "1,-2"])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try daemon.kioskctl(["animate", "title", "x", "--decay", "--velocity", "-200"])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try daemon.kioskctl(["animate", "title", "x", "-20"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let other = try writeScene(directory, name: "third.yaml", title: "Third")
        r = try daemon.kioskctl(["scene", "load", other.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(String(decoding: r.stdout, as: UTF8.self), "loaded \(other.path): pages main, second\n", "returns once shown")
        XCTAssertEqual(try daemon.result("widget.get", #"{"id": "title"}"#)["text"] as? String, "Third")
        r = try daemon.kioskctl(["scene", "load", "--yaml", "size: display\npages:\n  - name: x\n    widgets: []\n"])
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try daemon.kioskctl(["widget", "get", "nope"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("not_found"), r.stderr)
    }
}
