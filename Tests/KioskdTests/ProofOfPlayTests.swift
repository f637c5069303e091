import Foundation
import KioskPlays
import KioskTestSupport
import XCTest

/// Proof of play as an auditor reads it: `plays` gives what was shown with the hash of the composed frame, which
/// is the hash of a screenshot of that page; and `kill -9` at any moment loses no record of a page change that a
/// `flip` event had already followed.
final class ProofOfPlayTests: XCTestCase {
    private func scene(_ dir: URL, _ yaml: String) throws -> String {
        let file = dir.appendingPathComponent("scene.yaml")
        try Data(yaml.utf8).write(to: file)
        return file.path
    }

    /// FNV-1a 64 over the RGB of each pixel, row by row: `FrameHash`, written again here from its definition.
    private func hash(_ png: PNGFile) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for i in stride(from: 0, to: png.width * png.height * 4, by: 4) {
            for byte in [png.pixels[i + 2], png.pixels[i + 1], png.pixels[i]] { h = (h ^ UInt64(byte)) &* 0x100_0000_01b3 }
        }
        let text = String(h, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    private func plays(_ daemon: ControlledKioskd) throws -> [[String: Any]] {
        try XCTUnwrap(try daemon.result("plays")["plays"] as? [[String: Any]])
    }

    /// `plays` against a store of 12,000 records with long names: a reply holds at most 1 MiB of records and says
    /// where to go on (`more`, `next_after`), and paging through gives every record once, in order. Then slow
    /// clients pipeline large `plays` requests and never read, another pipelines 300 small ones and reads: the loop
    /// answers `ping` throughout, the reader gets every reply in order, and kioskd's memory stays bounded.
    func testPlaysRepliesAreBoundedAndAFloodOfThemLeavesTheLoopAnswering() throws {
        let dir = try KioskdProcess.scratchDirectory("plays-flood")
        let db = dir.appendingPathComponent("plays.db").path
        let stored = 12_000
        do {
            let store = try PlayStore(path: db)
            let long = String(repeating: "x", count: 300)
            try store.transaction {
                for i in 0..<stored {
                    let sequence = try store.begin(kind: .page, item: "item-\(i)-\(long)", scene: "/srv/scene.yaml", output: "HDMI-A-1",
                                                   wallStart: 1_700_000_000_000_000_000 + Int64(i) * 1_000_000_000, monotonicStart: Int64(i))
                    try store.end(sequence, wallEnd: 1_700_000_000_500_000_000 + Int64(i) * 1_000_000_000, monotonicEnd: Int64(i) + 1, ranToEnd: true)
                }
            }
        }
        let path = try scene(dir, "widgets: [{type: clock, format: \"%H:%M:%S\"}]\n")
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "64x48@60", "--scene", path, "--plays-db", db])
        defer { daemon.stop() }

        // Paging: bounded replies, every record once, in order.
        let reader = try daemon.connect(timeoutSeconds: 60)
        var after = 0, seen: [Int] = [], pages = 0
        while true {
            XCTAssertTrue(reader.write(Array(#"{"id": 1, "cmd": "plays", "args": {"limit": 10000, "after": \#(after)}}"#.utf8 + [0x0A])))
            let line = try XCTUnwrap(reader.readLine(deadline: Date() + 60), "a reply to plays after \(after)")
            XCTAssertLessThanOrEqual(line.count, (1 << 20) + 4096, "a reply of \(line.count) bytes")
            let result = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])?["result"] as? [String: Any])
            let records = try XCTUnwrap(result["plays"] as? [[String: Any]])
            seen += records.compactMap { $0["sequence"] as? Int }
            pages += 1
            guard result["more"] as? Bool == true else { break }
            after = try XCTUnwrap(result["next_after"] as? Int)
            XCTAssertEqual(after, seen.last)
            XCTAssertLessThan(pages, 100, "paging ends")
        }
        XCTAssertGreaterThanOrEqual(seen.count, stored, "every stored record, and those of this run")
        XCTAssertEqual(seen, seen.sorted(), "oldest first")
        XCTAssertEqual(Set(seen).count, seen.count, "each record once")
        XCTAssertGreaterThan(pages, 4, "12,000 records of over 300 bytes take several replies of 1 MiB")
        XCTAssertEqual(try daemon.error("plays", #"{"after": -1}"#).code, "invalid_argument")
        XCTAssertEqual(try daemon.error("plays", #"{"after": 1.5}"#).code, "invalid_argument")

        // The flood.
        let rssBefore = try XCTUnwrap(residentKiB(of: daemon.pid))
        let large = String(repeating: #"{"id": 0, "cmd": "plays", "args": {"limit": 10000}}"# + "\n", count: 50)
        let slow = try (0..<8).map { _ in try daemon.connect(timeoutSeconds: 60) }
        for client in slow { client.write(Array(large.utf8)) }
        nonisolated(unsafe) let small = try daemon.connect(timeoutSeconds: 60)
        let count = 300
        let requests = (0..<count).map { #"{"id": \#($0), "cmd": "plays", "args": {"limit": 5}}"# + "\n" }.joined()
        XCTAssertTrue(small.write(Array(requests.utf8)))
        let pinger = try daemon.connect()
        var inOrder = 0, pings: [Double] = []
        for expected in 0..<count {
            guard let reply = small.readObject(deadline: Date() + 60) else { break }
            if reply["id"] as? Int == expected, reply["ok"] as? Bool == true { inOrder += 1 }
            if expected % 20 == 0 {
                let start = Date()
                XCTAssertEqual(pinger.request(#"{"id": "p", "cmd": "ping"}"#)?["ok"] as? Bool, true)
                pings.append(Date().timeIntervalSince(start))
            }
        }
        XCTAssertEqual(inOrder, count, "every small request answered, in order")
        let slowest = pings.max() ?? .infinity
        XCTAssertLessThan(slowest, 2, "the slowest ping during the flood took \(Int(slowest * 1000)) ms")
        let rssAfter = try XCTUnwrap(residentKiB(of: daemon.pid))
        print("plays flood: \(pages) pages for \(seen.count) records; \(pings.count) pings, slowest \(Int(slowest * 1000)) ms; RSS \(rssBefore) KiB -> \(rssAfter) KiB")
        // Each slow client holds at most its queue bound (4 MiB) and one reply (1 MiB).
        XCTAssertLessThanOrEqual(rssAfter - rssBefore, 8 * 5 * 1024 + 16 * 1024, "RSS grew from \(rssBefore) KiB to \(rssAfter) KiB")
        XCTAssertEqual(try daemon.result("ping")["pong"] as? Bool, true)
        withExtendedLifetime(slow) {}
    }

    func testFrameHashIsTheScreenshotsHash() throws {
        let dir = try KioskdProcess.scratchDirectory("plays-hash")
        let path = try scene(dir, """
            pages:
              - name: first
                widgets:
                  - {type: rect, background: {gradient: ["#ff0000", "#0000ff"], angle: 30}}
                  - {type: text, text: "Proof", foreground: white, x: 10, y: 10, width: 200, height: 60}
              - name: second
                transition: {type: fade, duration: 0.2}
                widgets: [{type: rect, background: {gradient: ["#00ff00", "#202020"]}}]
            """)
        let db = dir.appendingPathComponent("plays.db").path
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--scene", path, "--plays-db", db,
                                           "--screenshot-dir", dir.path])
        for (index, page) in ["first", "second"].enumerated() {
            if index > 0 { _ = try daemon.result("page.show", #"{"name": "\#(page)"}"#) }
            var record: [String: Any] = [:]
            try Poll.until("the record of \(page) to have its frame hash", timeout: 10) {
                record = (try? plays(daemon))?.last ?? [:]
                return record["item"] as? String == page && record["frame_hash"] is String
            }
            let shot = dir.appendingPathComponent("\(page).png")
            _ = try daemon.result("screenshot", #"{"path": "\#(shot.path)"}"#)
            XCTAssertEqual(record["frame_hash"] as? String, hash(try PNGFile(contentsOf: shot)), page)
            XCTAssertEqual(record["output"] as? String, "Headless-1")
            XCTAssertEqual(record["scene"] as? String, path)
        }
        let records = try plays(daemon)
        XCTAssertNotEqual(records[0]["frame_hash"] as? String, records[1]["frame_hash"] as? String)
        let listed = try daemon.kioskctl(["plays", "--since", "2020-01-01T00:00:00Z"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let lines = String(decoding: listed.stdout, as: UTF8.self).split(separator: "\n")
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines.first?.contains("Headless-1  page  first  ran to end  \(records[0]["frame_hash"] as? String ?? "?")") == true, "\(lines)")
        let json = try daemon.kioskctl(["plays", "--json", "--limit", "1"])
        let reply = try XCTUnwrap(try JSONSerialization.jsonObject(with: json.stdout) as? [String: Any])
        XCTAssertEqual(((reply["result"] as? [String: Any])?["plays"] as? [[String: Any]])?.count, 1)
        let future = try daemon.kioskctl(["plays", "--since", "\(Int(Date().timeIntervalSince1970) + 3600)"])
        XCTAssertEqual(future.stdout, Data(), "nothing since an hour from now")
        XCTAssertEqual(records[0]["ran_to_end"] as? Bool, true, "an untimed page left for another")
        XCTAssertNotNil(records[0]["duration_ms"] as? Int)
        XCTAssertEqual(try daemon.error("plays", #"{"since": "yesterday"}"#).code, "invalid_argument")
        XCTAssertEqual(try daemon.error("plays", #"{"limit": 0}"#).code, "invalid_argument")
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    func testEachVideoItemPlayedIsARecord() throws {
        let dir = try KioskdProcess.scratchDirectory("plays-video")
        let first = try TestClips.clip(.h264, width: 160, height: 120, frames: 15)
        let second = try TestClips.clip(.vp9, width: 160, height: 120, frames: 15)
        let path = try scene(dir, """
            pages:
              - {name: still, widgets: [{type: rect, background: "#202020"}]}
              - name: film
                widgets: [{id: clip, type: video, playlist: ["\(first)", "\(second)"], loop: false, width: 100%, height: 100%}]
            """)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "160x120@60", "--scene", path,
                                           "--plays-db", dir.appendingPathComponent("plays.db").path])
        let events = try ControlEventStream(daemon, events: ["video"])
        _ = try daemon.result("page.show", #"{"name": "film"}"#)
        _ = try events.waitFor("the playlist to end", timeout: 30) { $0.name == "video" && $0.string("kind") == "ended" }
        let records = try plays(daemon)
        let videos = records.filter { $0["kind"] as? String == "video" }
        XCTAssertEqual(videos.map { $0["item"] as? String }, [first, second], "\(records)")
        XCTAssertEqual(videos.map { $0["ran_to_end"] as? Bool }, [true, true])
        for video in videos { XCTAssertGreaterThan(video["duration_ms"] as? Int ?? 0, 0, "\(video)") }
        XCTAssertEqual(records.filter { $0["kind"] as? String == "page" }.map { $0["item"] as? String }, ["still", "film"])
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    /// Items whose `when:` rules do not hold are skipped and leave no record; those that play are recorded as any.
    func testOnlyTheVideoItemsScheduledAreRecorded() throws {
        let dir = try KioskdProcess.scratchDirectory("plays-video-rules")
        let first = try TestClips.clip(.h264, width: 160, height: 120, frames: 15)
        let second = try TestClips.clip(.vp9, width: 160, height: 120, frames: 15)
        let path = try scene(dir, """
            pages:
              - name: film
                widgets:
                  - id: clip
                    type: video
                    loop: false
                    width: 100%
                    height: 100%
                    playlist:
                      - {source: "\(first)", when: {dates: ["2001-01-01"]}}
                      - "\(second)"
                      - {source: "\(first)", when: {days: [mon, tue, wed, thu, fri, sat, sun]}}
            """)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "160x120@60", "--scene", path,
                                           "--plays-db", dir.appendingPathComponent("plays.db").path,
                                           // The flag file exists (a folder will do): the clock is trusted, whatever the host's NTP.
                                           "--clock-synchronized-file", dir.path])
        let events = try ControlEventStream(daemon, events: ["video"])
        _ = try events.waitFor("the playlist to end", timeout: 30) { $0.name == "video" && $0.string("kind") == "ended" }
        let videos = try plays(daemon).filter { $0["kind"] as? String == "video" }
        XCTAssertEqual(videos.map { $0["item"] as? String }, [second, first], "the item of 2001 is skipped")
        XCTAssertEqual(videos.map { $0["ran_to_end"] as? Bool }, [true, true])
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    func testKillNineLosesNoReportedPageChange() throws {
        let dir = try KioskdProcess.scratchDirectory("plays-kill")
        let path = try scene(dir, """
            pages:
              - {name: a, duration: 0.1, widgets: [{type: rect, background: "#ff0000"}]}
              - {name: b, duration: 0.1, widgets: [{type: rect, background: "#00ff00"}]}
              - {name: c, duration: 0.1, widgets: [{type: rect, background: "#0000ff"}]}
            """)
        let db = dir.appendingPathComponent("plays.db").path
        let arguments = ["run", "--backend", "headless", "--mode", "64x48@60", "--scene", path, "--plays-db", db]
        var generator = SystemRandomNumberGenerator()
        // Each round's kioskd is the check of the round before: it opens the store the kill -9 left.
        var daemon = try ControlledKioskd(arguments)
        var firstOfRound = 1
        for round in 0..<20 {
            let events = try ControlEventStream(daemon, events: ["scene", "flip"])
            // A page change counts as reported once a flip event has followed it.
            var changes: [String] = [], reported = 0
            let target = Int.random(in: 1...8, using: &generator)
            let deadline = Date().addingTimeInterval(20)
            while reported < target, let event = try events.nextEvent(until: deadline) {
                if event.name == "scene", event.string("kind") == "page_shown", let page = event.string("page") { changes.append(page) }
                if event.name == "flip" { reported = changes.count }
            }
            XCTAssertGreaterThanOrEqual(reported, target, "round \(round): page changes seen")
            kill(daemon.pid, SIGKILL)
            _ = daemon.waitForExit(timeout: 10)
            let killedAt = Date().timeIntervalSince1970

            daemon = try ControlledKioskd(arguments)
            // The new kioskd's records began after the kill; the round's are those before.
            let newRun = try XCTUnwrap(try daemon.result("plays", #"{"since": \#(killedAt)}"#)["plays"] as? [[String: Any]])
            let nextFirst = try XCTUnwrap(newRun.first?["sequence"] as? Int, "round \(round): the new kioskd records")
            let records = try plays(daemon).filter { (firstOfRound..<nextFirst).contains($0["sequence"] as? Int ?? 0) }
            let sequences = records.compactMap { $0["sequence"] as? Int }
            XCTAssertEqual(sequences, Array(firstOfRound..<nextFirst), "round \(round): numbered without a gap")
            // The round's records: its first page (at start), then each change. Changes may come before the
            // subscription does: the reported ones are a run of the records after the first.
            let items = Array(records.dropFirst().map { $0["item"] as? String ?? "" })
            let wanted = Array(changes.prefix(reported))
            let found = items.count >= wanted.count && (0...(items.count - wanted.count)).contains { Array(items[$0..<($0 + wanted.count)]) == wanted }
            XCTAssertTrue(found, "round \(round): every reported change \(wanted) in the records \(items)")
            XCTAssertNil(records.last?["end"] as? String, "round \(round): the page on screen at the kill has no end")
            XCTAssertEqual(records.dropLast().filter { $0["end"] is String }.count, records.count - 1, "round \(round): every other record ended")
            XCTAssertTrue(records.dropLast().allSatisfy { $0["ran_to_end"] as? Bool == true }, "round \(round): timed pages left at their turn")
            firstOfRound = nextFirst
        }
        let result = daemon.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
    }
}

/// A store kioskd cannot use never stops the kiosk: a damaged file is moved aside and a new one made; a folder that
/// does not exist means no recording, said once, and `plays` says so.
final class ProofOfPlayStoreFaultTests: XCTestCase {
    func testDamagedStoreIsMovedAsideAndMissingFolderRecordsNothing() throws {
        let dir = try KioskdProcess.scratchDirectory("plays-faults")
        let scene = dir.appendingPathComponent("scene.yaml")
        try Data("pages:\n  - {name: a, widgets: [{type: rect}]}\n".utf8).write(to: scene)
        let db = dir.appendingPathComponent("plays.db").path
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: db))
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "64x48@60", "--scene", scene.path, "--plays-db", db])
        let records = try XCTUnwrap(try daemon.result("plays")["plays"] as? [[String: Any]])
        XCTAssertEqual(records.map { $0["item"] as? String }, ["a"])
        let stopped = daemon.stop()
        XCTAssertTrue(stopped.stderr.contains("moved to \(db).broken-"), stopped.stderr)
        let aside = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("plays.db.broken-") }
        XCTAssertEqual(aside.count, 1, "\(aside)")

        let nowhere = try ControlledKioskd(["run", "--backend", "headless", "--mode", "64x48@60", "--scene", scene.path,
                                            "--plays-db", dir.appendingPathComponent("missing/plays.db").path])
        XCTAssertEqual(try nowhere.error("plays").code, "not_recording")
        let result = nowhere.stop()
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stderr.contains("proof of play is not recorded"), result.stderr)
    }
}
