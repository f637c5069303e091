import Foundation
import KioskTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Fifty headless kioskd processes on one broker, all in group `lobby`: one group `data.set` reaches every one
/// within a second, seen in their `data` events. Prints the fan-out latency (p50/p99) and the fleet's total RSS.
final class FleetFanOutTests: XCTestCase {
    func testOneGroupDataSetReachesFiftyKiosksWithinASecond() throws {
        let count = 50
        let broker = try MosquittoBroker()
        let scene = broker.directory + "/scene.yaml"
        // A still scene: idle kiosks flip nothing, so fifty of them leave the machine's cores to the fan-out.
        try "widgets: [{type: text, text: \"{label}\", x: 0, y: 0, width: 100%, height: 100%, foreground: white}]\n"
            .write(toFile: scene, atomically: true, encoding: .utf8)
        let status = try broker.subscribe(["kioskd/+/status", "kioskd/+/event/data", "kioskd/+/reply"])
        var kiosks: [RunningProcess] = []
        defer {
            for kiosk in kiosks { kiosk.signal(SIGTERM) }
            for kiosk in kiosks { _ = kiosk.finish(timeout: 20) }
        }
        for i in 0..<count {
            let config = broker.directory + "/mqtt-\(i).yaml"
            try broker.writeKioskdConfig("client_id: lobby-\(i)\ntopic_prefix: kioskd/lobby-\(i)\ngroup: [lobby]\nevents: [data]\nallow: [data.set]\n", to: config)
            kiosks.append(try KioskdProcess.start(["run", "--backend", "headless", "--mode", "160x120@60", "--scene", scene,
                                                   "--socket", broker.directory + "/k\(i).sock", "--config", config]))
        }
        var online = Set<String>()
        try status.waitForAny(count, timeout: 120) { topic, payload in
            guard topic.hasSuffix("/status"), payload == "online" else { return false }
            return online.insert(topic).inserted
        }
        XCTAssertEqual(online.count, count)

        // A publisher that is connected already (its ping reached all fifty), so the time measured is the fan-out.
        let publisher = try broker.linePublisher("kioskd/group/lobby/cmd")
        try publisher.send(#"{"id": "warm-up", "cmd": "ping"}"#)
        var pinged = Set<String>()
        try status.waitForAny(count, timeout: 30) { topic, payload in
            topic.hasSuffix("/reply") && payload.contains(#""id":"warm-up""#) && pinged.insert(topic).inserted
        }
        let sent = Date()
        try publisher.send(#"{"id": "fan", "cmd": "data.set", "args": {"values": {"label": "fan-out"}}}"#)
        var latencies: [String: Double] = [:]
        try status.waitForAny(count, timeout: 30) { topic, payload in
            guard topic.hasSuffix("/event/data"), payload.contains(#""label":"fan-out""#), latencies[topic] == nil else { return false }
            latencies[topic] = Date().timeIntervalSince(sent)
            return true
        }
        let sorted = latencies.values.sorted()
        XCTAssertEqual(sorted.count, count)
        let p50 = sorted[sorted.count / 2], p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
        XCTAssertLessThan(sorted.last ?? .infinity, 1.0, "every kiosk showed the value within 1 s")
        let rssKiB = kiosks.reduce(0) { $0 + Self.residentKiB(pid: $1.process.processIdentifier) }
        print(String(format: "fleet fan-out: %d kiosks, data.set on kioskd/group/lobby/cmd to data event: p50 %.1f ms, p99 %.1f ms, max %.1f ms; total RSS %.1f MiB",
                     count, p50 * 1000, p99 * 1000, (sorted.last ?? 0) * 1000, Double(rssKiB) / 1024))
        XCTAssertGreaterThan(rssKiB, 0)
    }

    /// VmRSS of a process, in KiB (0 when it is gone).
    private static func residentKiB(pid: Int32) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }
}
