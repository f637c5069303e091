import Foundation
import KioskRenderTestSupport
import KioskTestSupport
import KioskCore
import KioskScene
import XCTest

/// A headless `kioskd run --config FILE` with an `mqtt:` section against a real Mosquitto broker on a loopback port: status and
/// last will, commands and replies with `mqtt.allow`, malformed requests, data sources, group topics, events,
/// a broker restart, and a broker that wants a password.
final class FleetMQTTTests: XCTestCase {
    private var broker: MosquittoBroker!
    private var daemons: [ControlledKioskd] = []
    private let prefix = "kioskd/test-kiosk"

    override func setUpWithError() throws {
        broker = try MosquittoBroker()
    }

    override func tearDownWithError() throws {
        for daemon in daemons { daemon.stop() }
        daemons = []
        broker = nil
    }

    /// A scene whose `reading` text shows `temperature`, fed from `home/livingroom/temperature`'s `value`, with a
    /// ticker that animates, so frames flip all the time.
    private func writeScene(in directory: String) throws -> String {
        let path = directory + "/scene.yaml"
        try """
            size: display
            background: black
            font: {family: Sans, size: 40}
            data: {temperature: "--", label: none}
            data_sources:
              - {mqtt: home/livingroom/temperature, key: temperature, field: value}
              - {mqtt: home/label, key: label}
            pages:
              - name: main
                widgets:
                  - {id: reading, type: text, text: "{temperature} C", x: 0, y: 0, width: 100%, height: 50%, foreground: white}
                  - {id: news, type: ticker, text: "a ticker keeps frames flipping", speed: 80, x: 0, y: 60%, width: 100%, height: 20%, foreground: white}
              - name: second
                widgets:
                  - {id: other, type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "#203040"}
            """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Starts kioskd with a config file whose `mqtt:` section holds `extra` lines besides the url and prefix.
    private func startKiosk(_ extra: String = "", prefix: String? = nil, broker: MosquittoBroker? = nil, mode: String = "320x240@60") throws -> ControlledKioskd {
        let broker = broker ?? self.broker!
        let config = broker.directory + "/mqtt-\(daemons.count).yaml"
        try broker.writeKioskdConfig("topic_prefix: \(prefix ?? self.prefix)\nclient_id: kiosk-\(daemons.count)\n\(extra)", to: config)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", mode, "--scene", try writeScene(in: broker.directory),
                                           "--config", config])
        daemons.append(daemon)
        return daemon
    }

    func testStatusIsOnlineRetainedAndOfflineAfterACleanStop() throws {
        let daemon = try startKiosk()
        // A subscriber that comes later still sees `online`: it is retained.
        let status = try broker.subscribe(["\(prefix)/status"])
        try status.waitFor(on: "\(prefix)/status") { $0 == "online" }
        let state = try broker.subscribe(["\(prefix)/state"]).waitForJSON(on: "\(prefix)/state")[0]
        XCTAssertEqual(state["version"] as? String, "0.1.0")
        XCTAssertEqual(state["page"] as? String, "main")
        XCTAssertEqual(state["power"] as? String, "on")
        XCTAssertEqual(state["mode"] as? String, "320x240@60")
        let outputs = try XCTUnwrap(state["outputs"] as? [[String: Any]], "\(state)")
        XCTAssertEqual(outputs.count, 1)
        XCTAssertEqual(outputs.first?["connector"] as? String, "Headless-1")
        XCTAssertEqual(outputs.first?["mode"] as? String, "320x240@60")
        XCTAssertEqual(outputs.first?["modes"] as? [String], ["320x240@60"])
        XCTAssertEqual(outputs.first?["power"] as? String, "on")
        XCTAssertNotNil(state["missed_vblanks"] as? Int)
        XCTAssertNotNil(state["fps"] as? Double ?? (state["fps"] as? Int).map(Double.init))
        XCTAssertNotNil(state["uptime_s"] as? Int)
        XCTAssertNotNil(state["clock_synchronized"] as? Bool, "the kernel's or timesyncd's word, whichever it is here: \(state)")
        let health = try XCTUnwrap(state["health"] as? [String: Any], "\(state)")
        XCTAssertEqual(health["healthy"] as? Bool, true, "\(state)")
        XCTAssertEqual(health["reason"] as? String, "ok", "\(state)")
        XCTAssertTrue((state["scene"] as? String)?.hasSuffix("scene.yaml") == true, "\(state)")
        // The asset cache, as `stats` gives it: not opened, since the scene names no URL.
        let cache = try XCTUnwrap(state["cache"] as? [String: Any], "\(state)")
        XCTAssertEqual(cache["open"] as? Bool, false, "\(cache)")
        XCTAssertEqual(cache["max_bytes"] as? Int, 1024 << 20, "\(cache)")

        XCTAssertEqual(daemon.stop().status, 0)
        try status.waitFor(on: "\(prefix)/status") { $0 == "offline" }
        try broker.subscribe(["\(prefix)/status"]).waitFor(on: "\(prefix)/status") { $0 == "offline" }
    }

    /// With an `outputs:` section the state lists each output under its connector, with its own mode, page, power
    /// and figures; the top level is the first output's.
    func testTheStateListsEachOutputWithItsOwnFigures() throws {
        let scene = try writeScene(in: broker.directory)
        let config = broker.directory + "/mqtt-outputs.yaml"
        try broker.writeKioskdConfig("topic_prefix: \(prefix)\nclient_id: kiosk-outputs\nevents: [scene]", to: config)
        try ("\(try String(contentsOfFile: config, encoding: .utf8))outputs:\n  - {connector: HDMI-A-1, mode: 320x240@60}\n"
            + "  - {connector: DP-1, mode: 200x100@50}\n").write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--scene", scene, "--config", config])
        daemons.append(daemon)
        let states = try broker.subscribe(["\(prefix)/state"])
        _ = try states.waitForJSON(on: "\(prefix)/state") { ($0["outputs"] as? [[String: Any]])?.count == 2 }
        _ = try daemon.result("page.show", #"{"name": "second", "output": "dp-1", "transition": {"kind": "cut"}}"#)
        let state = try states.waitForJSON(on: "\(prefix)/state") { state in
            (state["outputs"] as? [[String: Any]])?.last?["page"] as? String == "second"
        }[0]
        XCTAssertEqual(state["mode"] as? String, "320x240@60", "the top level is the first output's: \(state)")
        XCTAssertEqual(state["page"] as? String, "main", "\(state)")
        let outputs = try XCTUnwrap(state["outputs"] as? [[String: Any]], "\(state)")
        XCTAssertEqual(outputs.map { $0["connector"] as? String }, ["HDMI-A-1", "DP-1"])
        XCTAssertEqual(outputs.map { $0["mode"] as? String }, ["320x240@60", "200x100@50"])
        XCTAssertEqual(outputs.map { $0["page"] as? String }, ["main", "second"])
        XCTAssertEqual(outputs.map { $0["power"] as? String }, ["on", "on"])
        for output in outputs {
            XCTAssertGreaterThan(output["frames_flipped"] as? Int ?? 0, 0, "\(output)")
            XCTAssertEqual((output["health"] as? [String: Any])?["reason"] as? String, "ok", "\(output)")
        }
        // Scene events name the output they come from.
        let events = try broker.subscribe(["\(prefix)/event/scene"])
        _ = try daemon.result("page.show", #"{"name": "main", "output": "DP-1", "transition": {"kind": "cut"}}"#)
        let shown = try events.waitForJSON(on: "\(prefix)/event/scene") { ($0["data"] as? [String: Any])?["kind"] as? String == "page_shown" }[0]
        XCTAssertEqual((shown["data"] as? [String: Any])?["output"] as? String, "DP-1", "\(shown)")
    }

    /// The health signal is part of the state: handing the display over (SIGUSR1) and taking it back (SIGUSR2)
    /// changes its reason, and each change is published without waiting for the 60 s refresh.
    func testAHealthChangeIsPublishedInTheState() throws {
        let daemon = try startKiosk()
        let states = try broker.subscribe(["\(prefix)/state"])
        func reason(_ state: [String: Any]) -> String? { (state["health"] as? [String: Any])?["reason"] as? String }
        try states.waitForJSON(on: "\(prefix)/state") { reason($0) == "ok" }
        daemon.process.signal(SIGUSR1)
        let handedOver = try states.waitForJSON(on: "\(prefix)/state", timeout: 10) { reason($0) == "waiting for DRM master" }[0]
        XCTAssertEqual((handedOver["health"] as? [String: Any])?["healthy"] as? Bool, true, "waiting for master is healthy: \(handedOver)")
        daemon.process.signal(SIGUSR2)
        try states.waitForJSON(on: "\(prefix)/state", timeout: 10) { reason($0) == "ok" }
    }

    func testKillNineTurnsStatusOfflineThroughTheLastWill() throws {
        let daemon = try startKiosk()
        let status = try broker.subscribe(["\(prefix)/status"])
        try status.waitFor(on: "\(prefix)/status") { $0 == "online" }
        daemon.process.signal(SIGKILL)
        try status.waitFor(on: "\(prefix)/status") { $0 == "offline" }
    }

    /// The read-only and display commands a fleet broker commonly gets, listed in `allow`.
    private let fleetAllow = "allow: [ping, version, stats, display.info, scene.get, widget.get, data.set, data.get, page.show]\n"

    func testEachAllowedCommandRoundTripsWithItsIdEchoed() throws {
        let daemon = try startKiosk(fleetAllow)
        let replies = try broker.subscribe(["\(prefix)/reply"])
        try broker.subscribe(["\(prefix)/status"]).waitFor(on: "\(prefix)/status") { $0 == "online" }
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
        XCTAssertEqual(try daemon.result("scene.get")["current_page"] as? String, "second", "page.show over MQTT changed the page")

        // Not in the allow-list: refused before anything runs.
        for (command, args) in [("scene.load", #"{"path": "/etc/passwd"}"#), ("screenshot", #"{"path": "/tmp/x.png"}"#),
                                ("display.power", #"{"on": false}"#), ("log.level", #"{"level": "trace"}"#), ("subscribe", #"{"events": ["data"]}"#)] {
            try broker.publish("\(prefix)/cmd", #"{"id": 7, "cmd": "\#(command)", "args": \#(args)}"#)
            let reply = try replies.waitForJSON(on: "\(prefix)/reply")[0]
            XCTAssertEqual(reply["id"] as? Int, 7)
            XCTAssertEqual((reply["error"] as? [String: Any])?["code"] as? String, "permission_denied", "\(command): \(reply)")
        }
        XCTAssertEqual(try daemon.result("display.info")["power"] as? String, "on", "the refused display.power changed nothing")
        try broker.publish("\(prefix)/cmd", #"{"id": 8, "cmd": "reboot"}"#)
        let unknown = try replies.waitForJSON(on: "\(prefix)/reply")[0]
        XCTAssertEqual((unknown["error"] as? [String: Any])?["code"] as? String, "unknown_command", "\(unknown)")
    }

    func testWithNoAllowListOnlyPingAndStatsAreAnswered() throws {
        let daemon = try startKiosk()
        let replies = try broker.subscribe(["\(prefix)/reply"])
        try broker.subscribe(["\(prefix)/status"]).waitFor(on: "\(prefix)/status") { $0 == "online" }
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
        XCTAssertEqual(try daemon.result("data.get", #"{"keys": ["label"]}"#)["values"] as? [String: String], ["label": "none"])
        XCTAssertEqual(try daemon.result("scene.get")["current_page"] as? String, "main")
    }

    func testAllowListsMoreCommandsAndArgumentErrorsMatchTheSocket() throws {
        let daemon = try startKiosk("allow: [display.power, data.set, cache.clear, cache.refresh]\n")
        let replies = try broker.subscribe(["\(prefix)/reply"])
        try broker.subscribe(["\(prefix)/status"]).waitFor(on: "\(prefix)/status") { $0 == "online" }
        try broker.publish("\(prefix)/cmd", #"{"id": 1, "cmd": "display.power", "args": {"on": false}}"#)
        XCTAssertEqual(try replies.waitForJSON(on: "\(prefix)/reply")[0]["ok"] as? Bool, true)
        XCTAssertEqual(try daemon.result("display.info")["power"] as? String, "off")
        try broker.publish("\(prefix)/cmd", #"{"id": 2, "cmd": "ping"}"#)
        XCTAssertEqual(((try replies.waitForJSON(on: "\(prefix)/reply")[0])["error"] as? [String: Any])?["code"] as? String, "permission_denied",
                       "ping is not in this allow-list")
        // The same argument checks as the socket, with the same errors.
        let viaSocket = try daemon.error("data.set", #"{"values": 3}"#)
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

    func testAThousandMalformedPayloadsGetErrorRepliesWhileFramesFlip() throws {
        let daemon = try startKiosk()
        let replies = try broker.subscribe(["\(prefix)/reply"])
        try broker.subscribe(["\(prefix)/status"]).waitFor(on: "\(prefix)/status") { $0 == "online" }
        let before = try daemon.result("stats")
        let shapes = ["not json", "{", "[1, 2]", #"{"id": 1}"#, #"{"cmd": 5}"#, #"{"cmd": "ping", "args": [1]}"#,
                      #"{"id": {"a": 1}, "cmd": "ping"}"#, #"{"cmd": "ping", "cmd": "ping"}"#, "\"text\"", "null"]
        let payloads = (0..<1000).map { shapes[$0 % shapes.count] }
        try broker.publish("\(prefix)/cmd", lines: payloads)
        let errors = try replies.waitForJSON(1000, on: "\(prefix)/reply", timeout: 60) { $0["ok"] as? Bool == false }
        XCTAssertEqual(errors.count, 1000)
        let codes = Set(errors.compactMap { ($0["error"] as? [String: Any])?["code"] as? String })
        XCTAssertEqual(codes, ["invalid_json", "invalid_request"])
        // The ticker flips a frame per vblank: the storm did not stop it, during or after.
        let during = try daemon.framesFlipped()
        XCTAssertGreaterThan(during, before["frames_flipped"] as? Int ?? 0, "frames flipped while the requests were answered")
        try Poll.until("frames to keep flipping", timeout: 10) { try daemon.framesFlipped() > during }
        XCTAssertEqual(try daemon.request(#"{"id": 1, "cmd": "ping"}"#)["ok"] as? Bool, true, "the control socket still answers")
    }

    func testADataSourceTakesTheRetainedValueAtStartThenEachUpdate() throws {
        try broker.publish("home/livingroom/temperature", #"{"value": 21.5, "unit": "C"}"#, retain: true)
        let daemon = try startKiosk()
        try Poll.until("the retained temperature to arrive", timeout: 20) {
            (try daemon.result("data.get")["values"] as? [String: String])?["temperature"] == "21.5"
        }
        let shown = try screenshot(daemon)
        try broker.publish("home/livingroom/temperature", #"{"value": 23}"#)
        try broker.publish("home/label", "kitchen")
        try Poll.until("the new temperature and label", timeout: 20) {
            try daemon.result("data.get")["values"] as? [String: String] == ["temperature": "23", "label": "kitchen"]
        }
        try Poll.until("the screen to show the new value", timeout: 20) { try screenshot(daemon) != shown }
        // Payloads that give no value leave the key as it is.
        try broker.publish("home/livingroom/temperature", "not json")
        try broker.publish("home/livingroom/temperature", #"{"other": 1}"#)
        try broker.publish("home/label", "dining")
        try Poll.until("the label after the bad payloads", timeout: 20) {
            (try daemon.result("data.get")["values"] as? [String: String])?["label"] == "dining"
        }
        XCTAssertEqual((try daemon.result("data.get")["values"] as? [String: String])?["temperature"], "23")
    }

    func testGroupCommandsReachEveryKioskOfTheGroupAndEventsArePublished() throws {
        _ = try startKiosk("group: [lobby]\nevents: [data]\nallow: [data.set]\n", prefix: "kioskd/a")
        _ = try startKiosk("group: [lobby, floor2]\nallow: [data.set]\n", prefix: "kioskd/b")
        _ = try startKiosk("group: [office]\nallow: [data.set]\n", prefix: "kioskd/c")
        let messages = try broker.subscribe(["kioskd/+/reply", "kioskd/a/event/#", "kioskd/b/event/#"])
        try waitOnline(["a", "b", "c"])
        try broker.publish("kioskd/group/lobby/cmd", #"{"id": "g1", "cmd": "data.set", "args": {"values": {"label": "lobby"}}}"#)
        for kiosk in ["a", "b"] {
            let reply = try messages.waitForJSON(on: "kioskd/\(kiosk)/reply", timeout: 20)[0]
            XCTAssertEqual(reply["id"] as? String, "g1")
            XCTAssertEqual(reply["ok"] as? Bool, true)
        }
        for daemon in daemons.prefix(2) {
            XCTAssertEqual((try daemon.result("data.get")["values"] as? [String: String])?["label"], "lobby")
        }
        XCTAssertEqual((try daemons[2].result("data.get")["values"] as? [String: String])?["label"], "none", "not in the group")
        let event = try broker.subscribe(["kioskd/a/event/data"])
        try broker.publish("kioskd/a/cmd", #"{"id": 1, "cmd": "data.set", "args": {"values": {"label": "x"}}}"#)
        let data = try event.waitForJSON(on: "kioskd/a/event/data")[0]
        XCTAssertEqual(data["event"] as? String, "data")
        XCTAssertEqual((data["data"] as? [String: Any]).flatMap { $0["values"] as? [String: String] }, ["label": "x"])
    }

    private func waitOnline(_ kiosks: [String]) throws {
        let status = try broker.subscribe(kiosks.map { "kioskd/\($0)/status" })
        for kiosk in kiosks { try status.waitFor(on: "kioskd/\(kiosk)/status") { $0 == "online" } }
    }

    /// The broker gone for 4 s and back (the reconnect backoff, 250 ms doubling, has failed four or five times by
    /// then and waits seconds for its next try): kioskd reconnects, resubscribes, republishes `status` and `state`, and
    /// no frame is late meanwhile. The headless backend's vblank clock runs on wall time, so a kioskd that a
    /// loaded machine keeps waiting for a CPU misses vblanks whatever MQTT does. The test therefore measures
    /// that wait (the kernel's run-queue time of kioskd's threads, /proc/PID/task/*/schedstat) over the same
    /// window: a late frame needs the slack a present has of delay (a frame, 50 ms at 20 Hz, with the window off, kioskd's
    /// default; the window's lead, at least 12.5 ms, were it on: the bound uses the lead), so the missed vblanks must be
    /// no more than the run-queue wait covers. On a quiet machine that wait is near zero and the missed vblanks
    /// must stay unchanged; MQTT sleeping or spinning on the loop is never excused by it.
    func testABrokerRestartReconnectsResubscribesAndRepublishes() throws {
        let daemon = try startKiosk(mode: "320x240@20")
        try broker.subscribe(["\(prefix)/status"]).waitFor(on: "\(prefix)/status") { $0 == "online" }
        try Poll.until("the first frames", timeout: 20) { try daemon.framesFlipped() > 5 }
        let pid = daemon.process.process.processIdentifier
        let waitBefore = Self.runQueueWait(pid: pid)
        let missedBefore = try XCTUnwrap(try daemon.result("stats")["missed_vblanks"] as? Int)
        broker.stop()
        let stopped = Date()
        let flipped = try daemon.framesFlipped()
        // Four seconds without a broker, frames flipping all along (the ticker animates every vblank).
        try Poll.until("4 s with the broker gone", timeout: 30, interval: 0.25) { Date().timeIntervalSince(stopped) >= 4 }
        XCTAssertGreaterThanOrEqual(try daemon.framesFlipped() - flipped, 60, "about 20 frames a second for 4 s")
        try broker.start()
        // The broker keeps nothing (persistence false): a retained `online` and state mean kioskd published them again.
        let status = try broker.subscribe(["\(prefix)/status", "\(prefix)/state", "\(prefix)/reply"])
        try status.waitFor(on: "\(prefix)/status", timeout: 30) { $0 == "online" }
        let state = try status.waitForJSON(on: "\(prefix)/state")[0]
        // Resubscribed: commands and data sources work again.
        try broker.publish("\(prefix)/cmd", #"{"id": "back", "cmd": "ping"}"#)
        XCTAssertEqual(try status.waitForJSON(on: "\(prefix)/reply")[0]["id"] as? String, "back")
        try broker.publish("home/label", "after restart")
        try Poll.until("the data source after the restart", timeout: 20) {
            (try daemon.result("data.get")["values"] as? [String: String])?["label"] == "after restart"
        }
        let missedAfter = try XCTUnwrap(try daemon.result("stats")["missed_vblanks"] as? Int)
        let waited = Self.runQueueWait(pid: pid) - waitBefore
        // The least slack a present had: the auto lead at 20 Hz (a quarter frame) while the window is open.
        let slack = RepaintWindow.lead(for: .milliseconds(50))
        let excused = Int(waited / (Double(slack.nanosecondsClamped) / 1e9))
        XCTAssertLessThanOrEqual(missedAfter - missedBefore, excused,
                                 "late frames through the outage and the reconnect beyond what \(Int(waited * 1000)) ms of waiting for a CPU explains")
        // No call into the MQTT client blocked the loop for a 60 Hz frame (16.7 ms) through the outage and the
        // reconnect: no read, write, connect or sleep waited on it. The wall time a call held the loop also counts
        // its CPU time (requests answered, which a debug or ThreadSanitizer build makes many times slower) and any
        // wait for a CPU; that stays within a frame of this 20 Hz output, which the missed vblanks above also show.
        let block = try XCTUnwrap(state["mqtt_longest_loop_block_ms"] as? Double, "\(state)")
        let hold = try XCTUnwrap(state["mqtt_longest_loop_hold_ms"] as? Double, "\(state)")
        XCTAssertLessThan(block, 16, "the longest MQTT call blocked the loop \(block) ms")
        XCTAssertLessThan(hold, 50, "the longest MQTT call held the loop \(hold) ms")
        print("broker restart: missed vblanks \(missedBefore) before, \(missedAfter) after; kioskd waited \(Int(waited * 1000)) ms for a CPU meanwhile; longest MQTT call \(hold) ms, \(block) ms of it blocked")
    }

    /// Seconds the threads of process `pid` have spent runnable but waiting for a CPU (the second field of each
    /// thread's schedstat).
    private static func runQueueWait(pid: Int32) -> Double {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let nanoseconds = tasks.reduce(0) { sum, tid in
            let fields = ((try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/schedstat", encoding: .utf8)) ?? "").split(separator: " ")
            return sum + (fields.count > 1 ? Int(fields[1]) ?? 0 : 0)
        }
        return Double(nanoseconds) / 1e9
    }

    func testABrokerWithAPasswordFile() throws {
        let secured = try MosquittoBroker(credentials: ("kiosk", "s3cret pass"))
        let passwordFile = secured.directory + "/kiosk.password"
        try "s3cret pass\n".write(toFile: passwordFile, atomically: true, encoding: .utf8)
        let daemon = try startKiosk("username: kiosk\npassword_file: \(passwordFile)\n", broker: secured)
        try secured.subscribe(["\(prefix)/status"]).waitFor(on: "\(prefix)/status") { $0 == "online" }
        let replies = try secured.subscribe(["\(prefix)/reply"])
        try secured.publish("\(prefix)/cmd", #"{"id": "pw", "cmd": "ping"}"#)
        XCTAssertEqual(try replies.waitForJSON(on: "\(prefix)/reply")[0]["id"] as? String, "pw")
        XCTAssertEqual(daemon.stop().status, 0)
    }

    func testTLSWithATestCAAndAClientCertificate() throws {
        let secured = try MosquittoBroker(tls: true)
        let files = try XCTUnwrap(secured.certificates)
        let daemon = try startKiosk("ca_file: \(files.caFile)\ncert_file: \(files.clientCertFile)\nkey_file: \(files.clientKeyFile)\n",
                                    broker: secured)
        let topics = try secured.subscribe(["\(prefix)/status", "\(prefix)/reply"])
        try topics.waitFor(on: "\(prefix)/status") { $0 == "online" }
        try secured.publish("\(prefix)/cmd", #"{"id": "tls", "cmd": "version"}"#)
        XCTAssertEqual(try topics.waitForJSON(on: "\(prefix)/reply")[0]["id"] as? String, "tls")
        XCTAssertEqual(daemon.stop().status, 0)
        try topics.waitFor(on: "\(prefix)/status") { $0 == "offline" }
    }

    func testAnInvalidMQTTConfigStopsKioskdWithLocatedErrors() throws {
        let config = broker.directory + "/bad.yaml"
        try "mqtt:\n  url: tcp://127.0.0.1:1\n  allow: [ping, nonsense]\n".write(toFile: config, atomically: true, encoding: .utf8)
        let result = try KioskdProcess.run(["run", "--backend", "headless", "--socket", broker.directory + "/c.sock", "--config", config], timeout: 60)
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("\(config):2:8: mqtt.url: 'tcp://127.0.0.1:1' must start with mqtt:// or mqtts://"), result.stderr)

        try "mqtt:\n  url: mqtt://127.0.0.1:1\n  allow: [ping, nonsense]\n".write(toFile: config, atomically: true, encoding: .utf8)
        let unknown = try KioskdProcess.run(["run", "--backend", "headless", "--socket", broker.directory + "/c.sock", "--config", config], timeout: 60)
        XCTAssertNotEqual(unknown.status, 0)
        XCTAssertTrue(unknown.stderr.contains("\(config):3:10: mqtt.allow: unknown command 'nonsense'; known: animate, "), unknown.stderr)
        // check-config names it too, with the nearest command when there is one.
        try "mqtt:\n  url: mqtt://127.0.0.1:1\n  allow: [ping, page.shw]\n".write(toFile: config, atomically: true, encoding: .utf8)
        let misspelt = try KioskdProcess.run(["check-config", config])
        XCTAssertEqual(misspelt.status, 1)
        XCTAssertEqual(misspelt.errorLines.count, 1, misspelt.stderr)
        XCTAssertTrue(misspelt.errorLines.first?.hasPrefix("\(config):3:10: mqtt.allow: unknown command 'page.shw'; did you mean 'page.show'?") == true,
                      misspelt.stderr)
        // Every command kioskd knows may be allowed: the list check-config uses is the registry's (a debug kioskd
        // also asserts it at start).
        let everything = MQTTSettings.knownCommands.filter { !MQTTSettings.neverAllowed.contains($0) }
        try "mqtt:\n  url: mqtt://127.0.0.1:1\n  allow: [\(everything.joined(separator: ", "))]\n".write(toFile: config, atomically: true, encoding: .utf8)
        XCTAssertEqual(try KioskdProcess.run(["check-config", config]).status, 0)
        let all = try KioskdProcess.run(["run", "--backend", "headless", "--socket", broker.directory + "/c.sock", "--config", config,
                                         "--frames", "3"], timeout: 60)
        XCTAssertEqual(all.status, 0, all.stderr)
        // check-config finds the same located errors without starting anything.
        try "mqtt:\n  url: mqtt://127.0.0.1:1\n  grop: [lobby]\n".write(toFile: config, atomically: true, encoding: .utf8)
        let checked = try KioskdProcess.run(["check-config", config])
        XCTAssertEqual(checked.status, 1)
        XCTAssertEqual(checked.errorLines, ["\(config):3:3: mqtt.grop: unknown key 'grop'; did you mean 'group'?"])
    }

    func testAnMQTT5ResponseTopicGetsTheReplyWithItsCorrelationData() throws {
        _ = try startKiosk(fleetAllow)
        try broker.subscribe(["\(prefix)/status"]).waitFor(on: "\(prefix)/status") { $0 == "online" }
        let replies = try broker.subscribe(["\(prefix)/reply"])
        // A topic outside the kiosk's prefix: kioskd would publish there with its own credentials. Refused.
        try broker.publish("\(prefix)/cmd", #"{"id": "away", "cmd": "ping"}"#, responseTopic: "clients/other/response", correlationData: "x")
        let refused = try replies.waitForJSON(on: "\(prefix)/reply")[0]
        XCTAssertEqual(refused["id"] as? String, "away")
        let error = try XCTUnwrap(refused["error"] as? [String: Any], "\(refused)")
        XCTAssertEqual(error["code"] as? String, "permission_denied")
        XCTAssertEqual(error["message"] as? String,
                       "response topic 'clients/other/response' is not under '\(prefix)/': replies go only to the kiosk's own topics")
        let responseTopic = "\(prefix)/responses/\(UUID().uuidString)"
        let responses = try broker.subscribe([responseTopic], showCorrelationData: true)
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
        _ = try startKiosk("allow: [screenshot]\nscreenshot_retain: true\n")
        try broker.subscribe(["\(prefix)/status"]).waitFor(on: "\(prefix)/status") { $0 == "online" }
        try broker.publish("\(prefix)/screenshot/request", "")
        let png = try broker.firstMessage(on: "\(prefix)/screenshot")
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], "PNG signature")
        // The IHDR chunk holds the mode's size.
        XCTAssertEqual(Array(png[16..<24]), [0, 0, 0x01, 0x40, 0, 0, 0, 0xF0], "320x240")
    }

    /// With `thumbnail_every`, a JPEG of the screen at `thumbnail_width`, retained on `<prefix>/thumbnail`: one at
    /// the connection, then one each period that shows what the screen shows then.
    func testThumbnailsShowTheScreenEachPeriod() throws {
        let daemon = try startKiosk("thumbnail_every: 5\nthumbnail_width: 64\n")
        let first = try broker.firstMessage(on: "\(prefix)/thumbnail")
        XCTAssertEqual(Array(first.prefix(2)), [0xFF, 0xD8], "a JPEG")
        let shown = try readJPEG(Array(first))
        XCTAssertEqual(shown.width, 64)
        XCTAssertEqual(shown.height, 48, "320x240 at 64 pixels wide")
        _ = try daemon.result("page.show", #"{"name": "second", "transition": {"kind": "cut"}}"#)
        // The second page is #203040 all over: the next period's thumbnail shows it (a retained message: the latest).
        var centre: [Int] = []
        try Poll.until("a thumbnail of the second page", timeout: 30, interval: 1) {
            let jpeg = try readJPEG(Array(try broker.firstMessage(on: "\(prefix)/thumbnail")))
            let word = jpeg.pixels[24 * jpeg.width + 32]
            centre = [Int((word >> 16) & 0xFF), Int((word >> 8) & 0xFF), Int(word & 0xFF)]
            return zip(centre, [0x20, 0x30, 0x40]).allSatisfy { abs($0 - $1) <= 8 }
        }
        XCTAssertTrue(daemon.isRunning)
    }

    func testScreenshotsNeedTheAllowListAndAFloodIsCoalescedAndRateLimited() throws {
        // Without `screenshot` in the allow-list: refused on the reply topic, nothing taken.
        _ = try startKiosk()
        let replies = try broker.subscribe(["\(prefix)/reply"])
        try broker.subscribe(["\(prefix)/status"]).waitFor(on: "\(prefix)/status") { $0 == "online" }
        try broker.publish("\(prefix)/screenshot/request", "")
        let denied = try XCTUnwrap(try replies.waitForJSON(on: "\(prefix)/reply")[0]["error"] as? [String: Any])
        XCTAssertEqual(denied["code"] as? String, "permission_denied")
        XCTAssertTrue((denied["message"] as? String)?.contains("mqtt.allow") == true, "\(denied)")

        // Allowed, two a minute: 2,000 requests at once are one capture at a time, the rest answered by it (or
        // refused past the limit), and the kiosk's memory stays where it was (each request had copied a frame into
        // the encoder's queue: 2.5 GB at 800x480).
        let flooded = "kioskd/flooded"
        let daemon = try startKiosk("allow: [screenshot, ping]\nscreenshots_per_minute: 2\n", prefix: flooded, mode: "800x480@60")
        let answers = try broker.subscribe(["\(flooded)/reply", "\(flooded)/screenshot"])
        try broker.subscribe(["\(flooded)/status"]).waitFor(on: "\(flooded)/status") { $0 == "online" }
        let before = try XCTUnwrap(residentKiB(of: daemon.pid))
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
        XCTAssertEqual(try daemon.request(#"{"id": 1, "cmd": "ping"}"#)["ok"] as? Bool, true, "the control socket still answers")
        let after = try XCTUnwrap(residentKiB(of: daemon.pid))
        XCTAssertLessThan(after - before, 16 * 1024, "resident memory grew from \(before) KiB to \(after) KiB")
        // Not retained by default: a subscriber that comes later gets no picture.
        XCTAssertThrowsError(try broker.firstMessage(on: "\(flooded)/screenshot", timeout: 2), "the picture was retained")
    }

    func testAnOversizedMessageNeverReachesTheKioskAndTheNextOneDoes() throws {
        let daemon = try startKiosk("max_packet_size: 65536\n")
        try broker.subscribe(["\(prefix)/status"]).waitFor(on: "\(prefix)/status") { $0 == "online" }
        let before = try XCTUnwrap(residentKiB(of: daemon.pid))
        let big = broker.directory + "/big.bin"
        XCTAssertTrue(FileManager.default.createFile(atPath: big, contents: Data(repeating: 0x41, count: 64 << 20)))
        try broker.publish("home/label", file: big)
        try broker.publish("home/label", "after the big one")
        try Poll.until("the next message's value", timeout: 20) {
            (try daemon.result("data.get", #"{"keys": ["label"]}"#)["values"] as? [String: String])?["label"] == "after the big one"
        }
        let after = try XCTUnwrap(residentKiB(of: daemon.pid))
        XCTAssertLessThan(after - before, 16 * 1024, "a 64 MB message grew the kiosk from \(before) KiB to \(after) KiB")
    }

    func testTenThousandHostilePayloadsOnADataSourceLeaveTheLoopAnsweringAndMemoryBounded() throws {
        let daemon = try startKiosk()
        try broker.subscribe(["\(prefix)/status"]).waitFor(on: "\(prefix)/status") { $0 == "online" }
        let socket = try daemon.connect()
        let before = try XCTUnwrap(residentKiB(of: daemon.pid))
        let publisher = try RawMQTTPublisher(port: broker.port)
        var pings: [Double] = []
        for (n, (_, payload)) in HostileDocuments(count: 10_000, seed: 0x6D717474).enumerated() {
            try publisher.publish(n % 2 == 0 ? "home/livingroom/temperature" : "home/label", Array(payload.prefix(200_000)))
            if n % 100 == 0 {
                let start = Date()
                let reply = socket.request(#"{"id": \#(n), "cmd": "ping"}"#)
                pings.append(Date().timeIntervalSince(start))
                XCTAssertEqual(reply?["ok"] as? Bool, true, "ping after \(n) payloads")
            }
        }
        // On the storm's own connection: MQTT keeps the order of one client's messages, not across two clients, so a
        // message sent on another connection could reach the kiosk before the storm's last ones and be overwritten.
        try publisher.publish("home/label", Array("after the storm".utf8))
        try Poll.until("the last value", timeout: 60) {
            (try daemon.result("data.get", #"{"keys": ["label"]}"#)["values"] as? [String: String])?["label"] == "after the storm"
        }
        let after = try XCTUnwrap(residentKiB(of: daemon.pid))
        XCTAssertTrue(daemon.isRunning)
        // A loop that waited on the payloads would slow most pings. The 95th percentile of the 100 is held to 100 ms;
        // the slowest also carries the host's scheduling (the publisher, the broker and kioskd share two cores), so
        // it is held to five times that.
        let sorted = pings.sorted(), p95 = sorted[sorted.count * 95 / 100], slowest = sorted.last ?? 0
        XCTAssertLessThan(p95, 0.1 * pingSlowdown, "the 95th percentile ping took \(p95) s")
        XCTAssertLessThan(slowest, 0.5 * pingSlowdown, "the slowest ping took \(slowest) s")
        XCTAssertLessThan(after - before, payloadMemoryBoundKiB, "resident memory grew from \(before) KiB to \(after) KiB")
    }

    /// A ThreadSanitizer build runs several times slower: its tier sets KIOSKD_TSAN_SLOWDOWN.
    private var pingSlowdown: Double { Instrumentation.slowdown }

    /// 16 MiB, as the issue's bound, with glibc's allocator (tier 1). ThreadSanitizer's allocator keeps what the
    /// payload worker frees in its own caches and quarantine, and maps shadow memory beside it: 20 MiB was seen
    /// there for the same run, so its tier is held to four times the bound.
    private var payloadMemoryBoundKiB: Int { Instrumentation.isInstrumented ? 64 * 1024 : 16 * 1024 }

    private func screenshot(_ daemon: ControlledKioskd) throws -> Data {
        try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(try daemon.result("screenshot")["png_base64"] as? String)))
    }
}
