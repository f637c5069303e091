import Foundation
@testable import KioskApp
import KioskTestSupport
import XCTest

/// Hostile MQTT traffic at a kiosk in process, through a real Mosquitto broker on loopback: malformed requests,
/// a message larger than the packet limit and ten thousand hostile data-source payloads. Each is answered or
/// dropped while frames flip and the control socket answers, and memory stays bounded (`HeldMemory`: the heap the
/// process holds and its resident memory, which both count the kiosk's).
final class FleetFloodTests: FleetTestCase {
    func testAThousandMalformedPayloadsGetErrorRepliesWhileFramesFlip() throws {
        let kiosk = try start()
        let replies = try kiosk.subscribe(["\(prefix)/reply"])
        try kiosk.waitOnline()
        let before = try kiosk.framesFlipped()
        let answered = try kiosk.fleet.requestsAnswered
        let shapes = ["not json", "{", "[1, 2]", #"{"id": 1}"#, #"{"cmd": 5}"#, #"{"cmd": "ping", "args": [1]}"#,
                      #"{"id": {"a": 1}, "cmd": "ping"}"#, #"{"cmd": "ping", "cmd": "ping"}"#, "\"text\"", "null"]
        let payloads = (0..<1000).map { shapes[$0 % shapes.count] }
        try broker.publish("\(prefix)/cmd", lines: payloads)
        let errors = try replies.waitForJSON(1000, on: "\(prefix)/reply", timeout: 60) { $0["ok"] as? Bool == false }
        XCTAssertEqual(errors.count, 1000)
        XCTAssertEqual(try kiosk.fleet.requestsAnswered - answered, 1000, "each payload answered once")
        let codes = Set(errors.compactMap { ($0["error"] as? [String: Any])?["code"] as? String })
        XCTAssertEqual(codes, ["invalid_json", "invalid_request"])
        // The ticker flips a frame per vblank: the storm did not stop it, during or after.
        let during = try kiosk.framesFlipped()
        XCTAssertGreaterThan(during, before, "frames flipped while the requests were answered")
        try kiosk.waitUntil("frames to keep flipping", timeout: 10) { try kiosk.framesFlipped() > during }
        XCTAssertEqual(try kiosk.request(#"{"id": 1, "cmd": "ping"}"#)["ok"] as? Bool, true, "the control socket still answers")
    }

    func testAnOversizedMessageNeverReachesTheKioskAndTheNextOneDoes() throws {
        let kiosk = try start("max_packet_size: 65536\n")
        try kiosk.waitOnline()
        let before = try XCTUnwrap(HeldMemory.now())
        let big = broker.directory + "/big.bin"
        XCTAssertTrue(FileManager.default.createFile(atPath: big, contents: Data(repeating: 0x41, count: 64 << 20)))
        // mosquitto_pub waits for the broker only, not for the kiosk: the loop need not turn meanwhile.
        try broker.publish("home/label", file: big)
        try FileManager.default.removeItem(atPath: big)
        try broker.publish("home/label", "after the big one")
        try kiosk.waitUntil("the next message's value") { try kiosk.data("label") == "after the big one" }
        let after = try XCTUnwrap(HeldMemory.now())
        after.assertGrowth(from: before, below: 16 * 1024, "a 64 MB message")
    }

    func testTenThousandHostilePayloadsOnADataSourceLeaveTheLoopAnsweringAndMemoryBounded() throws {
        let kiosk = try start()
        try kiosk.waitOnline()
        let socket = try kiosk.harness.connect()
        let before = try XCTUnwrap(HeldMemory.now())
        let publisher = try RawMQTTPublisher(port: broker.port)
        var pings: [Double] = []
        for (n, (_, payload)) in HostileDocuments(count: 10_000, seed: 0x6D717474).enumerated() {
            try publisher.publish(n % 2 == 0 ? "home/livingroom/temperature" : "home/label", Array(payload.prefix(200_000)))
            // The kiosk runs on this thread: a turn of its loop, without waiting, after each payload, as kioskd reads
            // them while they come.
            kiosk.harness.loop.runOnce(timeout: .zero)
            if n % 100 == 0 {
                // The kiosk runs on this thread: it reads what came meanwhile as the ping's reply is awaited.
                let start = Date()
                let reply = try socket.request(#"{"id": \#(n), "cmd": "ping"}"#)
                pings.append(Date().timeIntervalSince(start))
                XCTAssertEqual(reply["ok"] as? Bool, true, "ping after \(n) payloads")
            }
        }
        // On the storm's own connection: MQTT keeps the order of one client's messages, not across two clients, so a
        // message sent on another connection could reach the kiosk before the storm's last ones and be overwritten.
        try publisher.publish("home/label", Array("after the storm".utf8))
        try kiosk.waitUntil("the last value", timeout: 60) { try kiosk.data("label") == "after the storm" }
        let after = try XCTUnwrap(HeldMemory.now())
        // A loop that waited on the payloads would slow most pings. The 95th percentile of the 100 is held to 100 ms;
        // the slowest also carries the host's scheduling (the publisher, the broker and the kiosk's payload worker
        // share two cores), so it is held to five times that.
        let sorted = pings.sorted(), p95 = sorted[sorted.count * 95 / 100], slowest = sorted.last ?? 0
        XCTAssertLessThan(p95, 0.1 * Instrumentation.slowdown, "the 95th percentile ping took \(p95) s")
        XCTAssertLessThan(slowest, 0.5 * Instrumentation.slowdown, "the slowest ping took \(slowest) s")
        let fleet = try kiosk.fleet
        XCTAssertGreaterThan(fleet.payloadsReplaced + fleet.payloadsDropped, 0, "\(fleet.payloadsReplaced) replaced, \(fleet.payloadsDropped) dropped")
        // 16 MiB, as the issue's bound, with glibc's allocator (tier 1). ThreadSanitizer's allocator keeps what the
        // payload worker frees in its own caches and quarantine, and maps shadow memory beside it: 20 MiB was seen
        // there for the same run, so its tier is held to four times the bound.
        after.assertGrowth(from: before, below: Instrumentation.isInstrumented ? 64 * 1024 : 16 * 1024, "10,000 hostile payloads")
    }
}
