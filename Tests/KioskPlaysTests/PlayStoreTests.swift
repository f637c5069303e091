import Foundation
import KioskPlays
import XCTest

/// The proof-of-play store: records kept in order with their sequence numbers, read back since a time, marked
/// delivered, pruned oldest first past the size cap, and still there when the file is opened again.
final class PlayStoreTests: XCTestCase {
    private func path(_ test: String = #function) throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-plays-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent("plays.db").path
    }

    func testRecordsKeepTheirOrderAndFields() throws {
        let file = try path()
        let store = try PlayStore(path: file)
        let a = try store.begin(kind: .page, item: "menu", scene: "/s.yaml", output: "HDMI-A-1", wallStart: 1_000_000_000, monotonicStart: 5_000_000_000)
        try store.setFrameHash(a, "00112233aabbccdd")
        try store.end(a, wallEnd: 11_000_000_000, monotonicEnd: 15_000_000_000, ranToEnd: true)
        let b = try store.begin(kind: .video, item: "clip.mp4", scene: "/s.yaml", output: "HDMI-A-1", wallStart: 11_000_000_000, monotonicStart: 15_000_000_000)
        XCTAssertEqual(b, a + 1)
        let records = try store.records()
        XCTAssertEqual(records.map(\.sequence), [a, b])
        XCTAssertEqual(records[0].item, "menu")
        XCTAssertEqual(records[0].frameHash, "00112233aabbccdd")
        XCTAssertEqual(records[0].durationMilliseconds, 10_000)
        XCTAssertTrue(records[0].ranToEnd)
        XCTAssertEqual(records[1].kind, .video)
        XCTAssertNil(records[1].wallEnd, "still on screen")
        XCTAssertEqual(try store.records(since: 5_000_000_000).map(\.item), ["clip.mp4"])
        XCTAssertEqual(try store.undelivered().map(\.sequence), [a, b])
        try store.markDelivered(a)
        XCTAssertEqual(try store.undelivered().map(\.sequence), [b])
        XCTAssertEqual(try store.undelivered(after: b).map(\.sequence), [])
    }

    func testReopenedStoreHasEveryRecordAndGoesOnNumbering() throws {
        let file = try path()
        var last: Int64 = 0
        do {
            let store = try PlayStore(path: file)
            for i in 0..<50 { last = try store.begin(kind: .page, item: "p\(i)", scene: "s", output: "o", wallStart: Int64(i), monotonicStart: Int64(i)) }
        }
        let again = try PlayStore(path: file)
        XCTAssertEqual(try again.count(), 50)
        XCTAssertEqual(try again.begin(kind: .page, item: "next", scene: "s", output: "o", wallStart: 99, monotonicStart: 99), last + 1)
    }

    func testPruningDeletesTheOldestPastTheCap() throws {
        let file = try path()
        let store = try PlayStore(path: file, maximumBytes: 64 << 10)
        let long = String(repeating: "x", count: 400)
        for i in 0..<1000 {
            _ = try store.begin(kind: .page, item: "\(i)-\(long)", scene: "s", output: "o", wallStart: Int64(i), monotonicStart: Int64(i))
        }
        let deleted = try store.checkpointAndPrune()
        XCTAssertGreaterThan(deleted, 0)
        let kept = try store.records(limit: 2000)
        XCTAssertEqual(kept.count, 1000 - deleted)
        XCTAssertEqual(kept.last?.item.hasPrefix("999-"), true, "the newest stay")
        XCTAssertEqual(kept.first?.sequence, Int64(deleted + 1), "the oldest went first")
        // The file does not shrink (freed pages are reused), but it stops growing: another thousand records and a
        // prune leave it as it was, give or take a few pages.
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        for i in 1000..<2000 {
            _ = try store.begin(kind: .page, item: "\(i)-\(long)", scene: "s", output: "o", wallStart: Int64(i), monotonicStart: Int64(i))
            if i % 100 == 0 { try store.checkpointAndPrune() }
        }
        try store.checkpointAndPrune()
        let after = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: file)[.size] as? Int)
        XCTAssertLessThanOrEqual(after, size + 16 * 4096, "the cap bounds the file")
        XCTAssertEqual(try store.records(limit: 5000).last?.item.hasPrefix("1999-"), true)
    }

    func testAFileThatIsNotADatabaseIsAClearError() throws {
        let file = try path()
        try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: file))
        XCTAssertThrowsError(try PlayStore(path: file)) { error in
            XCTAssertTrue("\(error)".hasPrefix("proof of play store \(file): "), "\(error)")
        }
    }

    func testFrameHashLeavesOutTheXByteAndTheStridePadding() {
        // 2×1 pixels, stride 12: B G R X, B G R X, then 4 bytes of padding.
        let a: [UInt8] = [1, 2, 3, 0, 4, 5, 6, 0, 9, 9, 9, 9]
        let b: [UInt8] = [1, 2, 3, 255, 4, 5, 6, 255, 0, 0, 0, 0]
        XCTAssertEqual(FrameHash.of(xrgb: a, width: 2, height: 1, stride: 12), FrameHash.of(xrgb: b, width: 2, height: 1, stride: 12))
        XCTAssertNotEqual(FrameHash.of(xrgb: a, width: 2, height: 1, stride: 12), FrameHash.of(xrgb: [1, 2, 4, 0, 4, 5, 6, 0], width: 2, height: 1, stride: 8))
        XCTAssertEqual(FrameHash.of(xrgb: [], width: 0, height: 0, stride: 0).count, 16)
    }
}
