import Foundation
import Glibc
import KioskPlays
import KioskTestSupport
import XCTest

/// Proof of play across a power cut, on a real disk (ext4 on virtio-blk) in the vkms VM, in two boots that
/// scripts/power-cut-vm runs with the same disk image (KIOSKD_VM_DISK):
/// 1. `testRecordingUntilThePowerIsCut`: kioskd records page changes on the DRM device; once 10 are reported the
///    records are written down on the host and `sync` puts them on the disk; once 10 more are reported (these only
///    in the page cache) the power is cut (`sysrq b`: an immediate reset, nothing written back).
/// 2. `testTheStoreIsConsistentAfterThePowerCut`: after the next boot the store passes SQLite's integrity check,
///    holds every record synced before the cut as it was, numbered in order, and kioskd records into it again
///    (it is not moved aside as broken).
/// Each runs only in its step (KIOSKD_POWER_CUT_PHASE): anywhere else it fails, never skips.
final class PowerCutVMTests: XCTestCase {
    private static let mountPoint = "/run/kioskd-power-cut"
    private var db: String { Self.mountPoint + "/plays.db" }

    private func requirePhase(_ phase: String) throws -> URL {
        let env = ProcessInfo.processInfo.environment
        guard env["KIOSKD_POWER_CUT_PHASE"] == phase, let dir = env["KIOSKD_POWER_CUT_DIR"] else {
            XCTFail("runs in scripts/power-cut-vm's \(phase) step (KIOSKD_POWER_CUT_PHASE=\(phase), KIOSKD_POWER_CUT_DIR)")
            throw XCTSkip("not in its step")
        }
        try FileManager.default.createDirectory(atPath: Self.mountPoint, withIntermediateDirectories: true)
        let mounted = try runTool("/bin/mount", ["-t", "ext4", "/dev/vda", Self.mountPoint])
        XCTAssertEqual(mounted.status, 0, "mount /dev/vda: \(mounted.text)")
        return URL(fileURLWithPath: dir)
    }

    private func scene(_ dir: URL) throws -> String {
        let file = dir.appendingPathComponent("power-cut-scene.yaml")
        try Data("""
            pages:
              - {name: a, duration: 0.1, widgets: [{type: rect, background: "#ff0000"}]}
              - {name: b, duration: 0.1, widgets: [{type: rect, background: "#00ff00"}]}
              - {name: c, duration: 0.1, widgets: [{type: rect, background: "#0000ff"}]}
            """.utf8).write(to: file)
        return file.path
    }

    private func plays(_ daemon: ControlledKioskd) throws -> [[String: Any]] {
        try XCTUnwrap(try daemon.result("plays", #"{"limit": 10000}"#)["plays"] as? [[String: Any]])
    }

    func testRecordingUntilThePowerIsCut() throws {
        let dir = try requirePhase("record")
        let daemon = try ControlledKioskd(["run", "--scene", try scene(dir), "--plays-db", db])
        var records: [[String: Any]] = []
        try Poll.until("10 records", timeout: 60) { records = try plays(daemon); return records.count >= 10 }
        let synced = records.map { ["sequence": $0["sequence"] ?? 0, "item": $0["item"] ?? "", "start": $0["start"] ?? ""] }
        try JSONSerialization.data(withJSONObject: synced).write(to: dir.appendingPathComponent("synced.json"))
        sync()
        try Poll.until("10 more records", timeout: 60) { try plays(daemon).count >= records.count + 10 }
        // Unbuffered: the lines must be out before the power goes.
        FileHandle.standardOutput.write(Data("power-cut: \(synced.count) records synced, \(try plays(daemon).count) reported; cutting the power\n@@kioskd-power-cut@@\n".utf8))
        let trigger = try FileHandle(forWritingTo: URL(fileURLWithPath: "/proc/sysrq-trigger"))
        trigger.write(Data("b".utf8))
        try Poll.until("the power to go", timeout: 30) { false }
        XCTFail("the VM still runs after sysrq b")
    }

    func testTheStoreIsConsistentAfterThePowerCut() throws {
        let dir = try requirePhase("check")
        let synced = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: dir.appendingPathComponent("synced.json"))) as? [[String: Any]])
        XCTAssertGreaterThanOrEqual(synced.count, 10)
        var survived: [PlayRecord] = []
        do {
            let store = try PlayStore(path: db)
            XCTAssertEqual(try store.integrityCheck(), ["ok"], "SQLite's integrity check after the power cut")
            survived = try store.records(limit: 10_000)
        }
        let sequences = survived.map(\.sequence)
        XCTAssertEqual(sequences, sequences.sorted(), "numbered in order")
        for record in synced {
            let sequence = try XCTUnwrap(record["sequence"] as? Int)
            let found = survived.first { $0.sequence == Int64(sequence) }
            XCTAssertEqual(found?.item, record["item"] as? String, "record \(sequence), synced before the cut, is there as it was")
        }
        print("power-cut: \(synced.count) records synced before the cut, \(survived.count) in the store after the next boot")
        let last = survived.last?.sequence ?? 0
        // The headless backend: this boot is about the disk (it loads no vkms).
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "64x48@60", "--scene", try scene(dir), "--plays-db", db])
        try Poll.until("a record after the cut's", timeout: 60) { try plays(daemon).contains { ($0["sequence"] as? Int ?? 0) > Int(last) } }
        let stopped = daemon.stop()
        XCTAssertEqual(stopped.status, 0, stopped.stderr)
        let broken = try FileManager.default.contentsOfDirectory(atPath: Self.mountPoint).filter { $0.contains(".broken-") }
        XCTAssertEqual(broken, [], "the store was not moved aside")
    }
}
