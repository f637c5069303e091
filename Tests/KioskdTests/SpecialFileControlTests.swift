import Foundation
import KioskTestSupport
import XCTest

/// `widget.set` with an image path and `scene.load` with a scene path that is a FIFO, end to end on a headless
/// kioskd: the reply is `invalid_argument` naming the FIFO, and the loop answers `ping` on another connection
/// meanwhile (a FIFO opened on the loop would block it until a writer came).
final class SpecialFileControlTests: XCTestCase {
    private var daemon: ControlledKioskd!
    private var special: SpecialFiles!

    /// What `ping` may take while a request with a FIFO path is being answered. A FIFO opened on the loop blocks
    /// it until a writer comes, which here is never, so any finite deadline tells the two apart; two seconds keeps
    /// a loaded machine (a daemon still drawing its first frames on two contended cores) from failing a loop that
    /// was never blocked. The socket's own latency is judged by ControlFairnessTests, not here.
    private static let pingDeadline: TimeInterval = 2
    /// What the request itself may take to be refused.
    private static let replyDeadline: TimeInterval = 5

    override func setUpWithError() throws {
        special = try SpecialFiles("control")
        let directory = try KioskdProcess.scratchDirectory("special-file-control")
        let logo = directory.appendingPathComponent("logo.svg")
        try #"<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="red"/></svg>"#
            .write(to: logo, atomically: true, encoding: .utf8)
        let scene = directory.appendingPathComponent("scene.yaml")
        try """
        pages:
          - name: main
            widgets:
              - {id: logo, type: image, path: logo.svg, x: 0, y: 0, width: 50%, height: 50%}

        """.write(to: scene, atomically: true, encoding: .utf8)
        daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", scene.path])
    }

    override func tearDown() {
        if let daemon { _ = daemon.stop() }
        daemon = nil
        special = nil
    }

    /// Sends `request` on a connection of its own, then pings on a second one: the ping's reply within
    /// `pingDeadline`, then the request's error within `replyDeadline`.
    private func refusedWhileLoopAnswers(_ request: String, file: StaticString = #filePath, line: UInt = #line) throws -> (code: String, message: String)? {
        let asking = try daemon.connect()
        XCTAssertTrue(asking.write(Array((request + "\n").utf8)), file: file, line: line)
        let pinging = try daemon.connect()
        let sent = Date()
        XCTAssertTrue(pinging.write(Array(#"{"id": "p", "cmd": "ping"}"#.utf8 + [0x0A])), file: file, line: line)
        let pong = pinging.readObject(deadline: sent.addingTimeInterval(Self.pingDeadline))
        XCTAssertEqual(pong?["ok"] as? Bool, true, "ping answered within \(Self.pingDeadline) s while \(request) is handled",
                       file: file, line: line)
        guard let reply = asking.readObject(deadline: Date().addingTimeInterval(Self.replyDeadline)) else {
            XCTFail("no reply to \(request) within \(Self.replyDeadline) s", file: file, line: line)
            return nil
        }
        guard reply["ok"] as? Bool == false, let error = reply["error"] as? [String: Any],
              let code = error["code"] as? String, let message = error["message"] as? String else {
            XCTFail("\(request) did not fail: \(reply)", file: file, line: line)
            return nil
        }
        return (code, message)
    }

    func testWidgetSetWithAFIFOPathIsRefusedAndPingIsAnswered() throws {
        let fifo = special.fifo
        let error = try XCTUnwrap(try refusedWhileLoopAnswers(#"{"id": 1, "cmd": "widget.set", "args": {"id": "logo", "props": {"path": "\#(fifo)"}}}"#))
        XCTAssertEqual(error.code, "invalid_argument")
        XCTAssertEqual(error.message, "widget.set: props.path: image '\(fifo)' is a FIFO, not a regular file")
        XCTAssertTrue((try daemon.result("widget.get", #"{"id": "logo"}"#)["path"] as? String)?.hasSuffix("/logo.svg") == true,
                      "the widget keeps its image")
    }

    func testSceneLoadOfAFIFOIsRefusedAndPingIsAnswered() throws {
        let fifo = special.fifo
        let error = try XCTUnwrap(try refusedWhileLoopAnswers(#"{"id": 2, "cmd": "scene.load", "args": {"path": "\#(fifo)"}}"#))
        XCTAssertEqual(error.code, "invalid_argument")
        XCTAssertEqual(error.message, "scene.load: scene file '\(fifo)' is a FIFO, not a regular file")
        // The load queue is free: a good scene still loads after it.
        XCTAssertEqual(try daemon.result("scene.load", #"{"yaml": "pages: [{name: after, widgets: []}]"}"#)["status"] as? String, "loading")
    }

    func testWidgetSetAndSceneLoadRefuseEveryKindByName() throws {
        for (path, kind) in special.all {
            let set = try daemon.error("widget.set", #"{"id": "logo", "props": {"path": "\#(path)"}}"#)
            XCTAssertEqual(set.code, "invalid_argument", path)
            XCTAssertTrue(set.message.contains("'\(path)' is \(kind), not a regular file"), set.message)
            let load = try daemon.error("scene.load", #"{"path": "\#(path)"}"#)
            XCTAssertEqual(load.code, "invalid_argument", path)
            XCTAssertTrue(load.message.contains("'\(path)' is \(kind), not a regular file"), load.message)
        }
    }
}
