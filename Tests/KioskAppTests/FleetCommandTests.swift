import Foundation
@testable import KioskApp
import KioskCore
import KioskTestSupport
import XCTest

/// The control commands over MQTT on a kiosk in process, against a real Mosquitto broker on loopback: `mqtt.allow`,
/// replies with their ids (or to an MQTT 5 response topic), group topics and events, screenshots on request, and a
/// broker that wants a password. The same registry answers the control socket, so argument errors match it.
final class FleetCommandTests: FleetTestCase {
    /// The read-only and display commands a fleet broker commonly gets, listed in `allow`.
    private let fleetAllow = "allow: [ping, version, stats, display.info, scene.get, widget.get, data.set, data.get, page.show]\n"

    func testEachAllowedCommandRoundTripsWithItsIdEchoed() throws {
        let kiosk = try start(fleetAllow)
        let replies = try kiosk.subscribe(["\(prefix)/reply"])
        try kiosk.waitOnline()
        let requests: [(String, String, ([String: Any]) -> Bool)] = [
            ("ping", "{}", { $0["pong"] as? Bool == true }),
            ("version", "{}", { $0["version"] as? String == "0.1.0" }),
            ("stats", "{}", { $0["frames_flipped"] is Int }),
            ("display.info", "{}", { $0["connector"] as? String == "Headless-1" }),
            ("scene.get", "{}", { ($0["pages"] as? [String]) == ["main", "second"] }),
            ("widget.get", #"{"id": "reading"}"#, { $0["type"] as? String == "text" }),
            ("data.set", #"{"values": {"temperature": "19"}}"#, { $0["set"] as? Int == 1 }),
            ("data.get", #"{"keys": ["temperature"]}"#, { ($0["values"] as? [String: String]) == ["temperature": "19"] }),
            ("page.show", #"{"name": "second"}"#, { _ in true }),
        ]
        for (index, (command, args, check)) in requests.enumerated() {
            try broker.publish("\(prefix)/cmd", #"{"id": "r\#(index)", "cmd": "\#(command)", "args": \#(args)}"#)
            let reply = try replies.waitForJSON(on: "\(prefix)/reply")[0]
            XCTAssertEqual(reply["id"] as? String, "r\(index)", command)
            XCTAssertEqual(reply["ok"] as? Bool, true, "\(command): \(reply)")
            XCTAssertTrue(check(reply["result"] as? [String: Any] ?? [:]), "\(command): \(reply)")
        }
        XCTAssertEqual(try kiosk.result("scene.get")["current_page"] as? String, "second", "page.show over MQTT changed the page")

        // Not in the allow-list: refused before anything runs.
        for (command, args) in [("scene.load", #"{"path": "/etc/passwd"}"#), ("screenshot", #"{"path": "/tmp/x.png"}"#),
                                ("display.power", #"{"on": false}"#), ("log.level", #"{"level": "trace"}"#), ("subscribe", #"{"events": ["data"]}"#)] {
            try broker.publish("\(prefix)/cmd", #"{"id": 7, "cmd": "\#(command)", "args": \#(args)}"#)
            let reply = try replies.waitForJSON(on: "\(prefix)/reply")[0]
            XCTAssertEqual(reply["id"] as? Int, 7)
            XCTAssertEqual((reply["error"] as? [String: Any])?["code"] as? String, "permission_denied", "\(command): \(reply)")
        }
        XCTAssertEqual(try kiosk.result("display.info")["power"] as? String, "on", "the refused display.power changed nothing")
        try broker.publish("\(prefix)/cmd", #"{"id": 8, "cmd": "reboot"}"#)
        let unknown = try replies.waitForJSON(on: "\(prefix)/reply")[0]
        XCTAssertEqual((unknown["error"] as? [String: Any])?["code"] as? String, "unknown_command", "\(unknown)")
    }

    func testWithNoAllowListOnlyPingAndStatsAreAnswered() throws {
        let kiosk = try start()
        let replies = try kiosk.subscribe(["\(prefix)/reply"])
        try kiosk.waitOnline()
        for (index, command) in ["ping", "stats"].enumerated() {
            try broker.publish("\(prefix)/cmd", #"{"id": \#(index), "cmd": "\#(command)"}"#)
            XCTAssertEqual(try replies.waitForJSON(on: "\(prefix)/reply")[0]["ok"] as? Bool, true, command)
        }
        for (command, args) in [("data.set", #"{"values": {"label": "owned"}}"#), ("page.show", #"{"name": "second"}"#),
                                ("data.get", "{}"), ("scene.get", "{}"), ("widget.get", #"{"id": "reading"}"#), ("version", "{}"),
                                ("display.info", "{}"), ("screenshot", "{}"), ("cache.clear", "{}"), ("cache.refresh", "{}")] {
            try broker.publish("\(prefix)/cmd", #"{"id": "deny", "cmd": "\#(command)", "args": \#(args)}"#)
            let error = try XCTUnwrap(try replies.waitForJSON(on: "\(prefix)/reply")[0]["error"] as? [String: Any], command)
            XCTAssertEqual(error["code"] as? String, "permission_denied", command)
            XCTAssertTrue((error["message"] as? String)?.contains("mqtt.allow") == true, "\(command): \(error)")
        }
        XCTAssertEqual(try kiosk.data("label"), "none")
        XCTAssertEqual(try kiosk.result("scene.get")["current_page"] as? String, "main")
    }

    func testAllowListsMoreCommandsAndArgumentErrorsMatchTheSocket() throws {
        let kiosk = try start("allow: [display.power, data.set, cache.clear, cache.refresh]\n")
        let replies = try kiosk.subscribe(["\(prefix)/reply"])
        try kiosk.waitOnline()
        try broker.publish("\(prefix)/cmd", #"{"id": 1, "cmd": "display.power", "args": {"on": false}}"#)
        XCTAssertEqual(try replies.waitForJSON(on: "\(prefix)/reply")[0]["ok"] as? Bool, true)
        XCTAssertEqual(try kiosk.result("display.info")["power"] as? String, "off")
        try broker.publish("\(prefix)/cmd", #"{"id": 2, "cmd": "ping"}"#)
        XCTAssertEqual(((try replies.waitForJSON(on: "\(prefix)/reply")[0])["error"] as? [String: Any])?["code"] as? String, "permission_denied",
                       "ping is not in this allow-list")
        // The same argument checks as the socket, with the same errors.
        let viaSocket = try kiosk.error("data.set", #"{"values": 3}"#)
        try broker.publish("\(prefix)/cmd", #"{"id": 3, "cmd": "data.set", "args": {"values": 3}}"#)
        let error = try XCTUnwrap((try replies.waitForJSON(on: "\(prefix)/reply")[0])["error"] as? [String: Any])
        XCTAssertEqual(error["code"] as? String, viaSocket.code)
        XCTAssertEqual(error["message"] as? String, viaSocket.message)
        // The cache's commands, once allowed, answer as on the socket, hostile arguments included.
        try broker.publish("\(prefix)/cmd", #"{"id": 4, "cmd": "cache.clear"}"#)
        let cleared = try XCTUnwrap((try replies.waitForJSON(on: "\(prefix)/reply")[0])["result"] as? [String: Any])
        XCTAssertEqual(cleared["entries_freed"] as? Int, 0, "\(cleared)")
        try broker.publish("\(prefix)/cmd", #"{"id": 5, "cmd": "cache.refresh", "args": {"url": ["a"]}}"#)
        let refused = try XCTUnwrap((try replies.waitForJSON(on: "\(prefix)/reply")[0])["error"] as? [String: Any])
        XCTAssertEqual(refused["message"] as? String, "cache.refresh: 'url' must be a string, got array")
    }

    /// Three kiosks in one process, each with its own loop, which every wait here turns.
    func testGroupCommandsReachEveryKioskOfTheGroupAndEventsArePublished() throws {
        let a = try start("group: [lobby]\nevents: [data]\nallow: [data.set]\n", prefix: "kioskd/a")
        let b = try start("group: [lobby, floor2]\nallow: [data.set]\n", prefix: "kioskd/b")
        let c = try start("group: [office]\nallow: [data.set]\n", prefix: "kioskd/c")
        let messages = try a.subscribe(["kioskd/+/reply", "kioskd/a/event/#", "kioskd/b/event/#"], turning: [b, c])
        let status = try a.subscribe(["kioskd/a/status", "kioskd/b/status", "kioskd/c/status"], turning: [b, c])
        for kiosk in ["a", "b", "c"] { try status.waitFor(on: "kioskd/\(kiosk)/status") { $0 == "online" } }
        try broker.publish("kioskd/group/lobby/cmd", #"{"id": "g1", "cmd": "data.set", "args": {"values": {"label": "lobby"}}}"#)
        for kiosk in ["a", "b"] {
            let reply = try messages.waitForJSON(on: "kioskd/\(kiosk)/reply", timeout: 20)[0]
            XCTAssertEqual(reply["id"] as? String, "g1")
            XCTAssertEqual(reply["ok"] as? Bool, true)
        }
        for kiosk in [a, b] {
            XCTAssertEqual(try kiosk.data("label"), "lobby")
        }
        XCTAssertEqual(try c.data("label"), "none", "not in the group")
        let event = try a.subscribe(["kioskd/a/event/data"])
        try broker.publish("kioskd/a/cmd", #"{"id": 1, "cmd": "data.set", "args": {"values": {"label": "x"}}}"#)
        let data = try event.waitForJSON(on: "kioskd/a/event/data")[0]
        XCTAssertEqual(data["event"] as? String, "data")
        XCTAssertEqual((data["data"] as? [String: Any]).flatMap { $0["values"] as? [String: String] }, ["label": "x"])
    }

    func testAnMQTT5ResponseTopicGetsTheReplyWithItsCorrelationData() throws {
        let kiosk = try start(fleetAllow)
        try kiosk.waitOnline()
        let replies = try kiosk.subscribe(["\(prefix)/reply"])
        // A topic outside the kiosk's prefix: kioskd would publish there with its own credentials. Refused.
        try broker.publish("\(prefix)/cmd", #"{"id": "away", "cmd": "ping"}"#, responseTopic: "clients/other/response", correlationData: "x")
        let refused = try replies.waitForJSON(on: "\(prefix)/reply")[0]
        XCTAssertEqual(refused["id"] as? String, "away")
        let error = try XCTUnwrap(refused["error"] as? [String: Any], "\(refused)")
        XCTAssertEqual(error["code"] as? String, "permission_denied")
        XCTAssertEqual(error["message"] as? String,
                       "response topic 'clients/other/response' is not under '\(prefix)/': replies go only to the kiosk's own topics")
        let responseTopic = "\(prefix)/responses/\(UUID().uuidString)"
        let responses = try kiosk.subscribe([responseTopic], showCorrelationData: true)
        try broker.publish("\(prefix)/cmd", #"{"id": "rr", "cmd": "data.get", "args": {"keys": ["label"]}}"#,
                           responseTopic: responseTopic, correlationData: "req-42")
        let line = try responses.waitFor(on: responseTopic)[0]
        XCTAssertTrue(line.hasPrefix("req-42 "), "the correlation data comes back: \(line)")
        let reply = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.dropFirst(7).utf8)) as? [String: Any], line)
        XCTAssertEqual(reply["id"] as? String, "rr")
        XCTAssertEqual((reply["result"] as? [String: Any])?["values"] as? [String: String], ["label": "none"])
        // Not also on <prefix>/reply: a later plain request's reply is the next one there.
        try broker.publish("\(prefix)/cmd", #"{"id": "plain", "cmd": "ping"}"#)
        XCTAssertEqual(try replies.waitForJSON(on: "\(prefix)/reply")[0]["id"] as? String, "plain")
    }

    func testAScreenshotRequestPublishesPNGBytes() throws {
        let kiosk = try start("allow: [screenshot]\nscreenshot_retain: true\n")
        try kiosk.waitOnline()
        try broker.publish("\(prefix)/screenshot/request", "")
        let png = try kiosk.firstMessage(on: "\(prefix)/screenshot")
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "PNG signature")
        // The IHDR chunk holds the mode's size.
        XCTAssertEqual(Array(png[16..<24]), [0, 0, 0x01, 0x40, 0, 0, 0, 0xF0], "320x240")
    }

    func testScreenshotsNeedTheAllowListAndAFloodIsCoalescedAndRateLimited() throws {
        // Without `screenshot` in the allow-list: refused on the reply topic, nothing taken.
        let denying = try start()
        let replies = try denying.subscribe(["\(prefix)/reply"])
        try denying.waitOnline()
        try broker.publish("\(prefix)/screenshot/request", "")
        let denied = try XCTUnwrap(try replies.waitForJSON(on: "\(prefix)/reply")[0]["error"] as? [String: Any])
        XCTAssertEqual(denied["code"] as? String, "permission_denied")
        XCTAssertTrue((denied["message"] as? String)?.contains("mqtt.allow") == true, "\(denied)")
        XCTAssertEqual(try denying.fleet.screenshotsRefused, 1)

        // Allowed, two a minute: 2,000 requests at once are one capture at a time, the rest answered by it (or
        // refused past the limit), and the kiosk's memory stays where it was (each request had copied a frame into
        // the encoder's queue: 2.5 GB at 800x480).
        let flooded = "kioskd/flooded"
        let kiosk = try start("allow: [screenshot, ping]\nscreenshots_per_minute: 2\n", prefix: flooded, mode: ModeRequest(width: 800, height: 480, refreshHz: 60))
        let answers = try kiosk.subscribe(["\(flooded)/reply", "\(flooded)/screenshot"])
        try kiosk.waitOnline()
        let before = try XCTUnwrap(HeldMemory.now())
        try broker.publish("\(flooded)/screenshot/request", lines: Array(repeating: "shot", count: 2_000), qos: 0)
        var pictures = 0, limited = [String]()
        /// The next answer: a picture (counted) or a reply (kept).
        func nextAnswer() throws {
            try answers.waitForAny(1, timeout: 60) { topic, payload in
                if topic == "\(flooded)/screenshot" { pictures += 1; return true }
                guard topic == "\(flooded)/reply" else { return false }
                limited.append(payload)
                return true
            }
        }
        try nextAnswer()
        // However the flood fell (all during the first capture, or some after it), single requests reach the limit
        // within two more: the minute allows two pictures.
        for _ in 0..<3 where limited.isEmpty {
            try broker.publish("\(flooded)/screenshot/request", "one more")
            try nextAnswer()
        }
        XCTAssertLessThanOrEqual(pictures, 2, "at most two pictures in the minute")
        XCTAssertTrue(limited.first?.contains("rate_limited") == true, "\(limited)")
        XCTAssertTrue(limited.first?.contains("mqtt.screenshots_per_minute") == true, "\(limited)")
        let fleet = try kiosk.fleet
        XCTAssertGreaterThan(fleet.screenshotsCoalesced + fleet.screenshotsRefused, 0, "the flood was coalesced or refused")
        XCTAssertEqual(try kiosk.request(#"{"id": 1, "cmd": "ping"}"#)["ok"] as? Bool, true, "the control socket still answers")
        let after = try XCTUnwrap(HeldMemory.now())
        after.assertGrowth(from: before, below: 16 * 1024, "2,000 screenshot requests")
        // Not retained by default: a subscriber that comes later gets no picture.
        XCTAssertThrowsError(try kiosk.firstMessage(on: "\(flooded)/screenshot", timeout: 2), "the picture was retained")
    }

    func testABrokerWithAPasswordFile() throws {
        let secured = try MosquittoBroker(credentials: ("kiosk", "s3cret pass"))
        let passwordFile = secured.directory + "/kiosk.password"
        try "s3cret pass\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let kiosk = try start("username: kiosk\npassword_file: \(passwordFile)\n", broker: secured)
        XCTAssertEqual(try kiosk.fleet.connection.endpoint.password, "s3cret pass", "the file's first line, without its newline")
        try kiosk.waitOnline()
        let replies = try kiosk.subscribe(["\(prefix)/reply"])
        try secured.publish("\(prefix)/cmd", #"{"id": "pw", "cmd": "ping"}"#)
        XCTAssertEqual(try replies.waitForJSON(on: "\(prefix)/reply")[0]["id"] as? String, "pw")
    }
}
