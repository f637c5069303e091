import Foundation
import Glibc
import KioskTestSupport
import XCTest

/// Under systemd, kioskd's stderr is the journal's stream and `JOURNAL_STREAM` names it: each log line then starts
/// with its syslog priority, so `journalctl -p err` shows kioskd's errors. Anywhere else the lines stay plain.
final class JournalLoggingTests: XCTestCase {
    /// A run that logs an error (a scene that does not exist, shown as the diagnostic page) and a notice-level
    /// info line, with stderr going to a file that JOURNAL_STREAM does or does not name.
    private func run(journalStream: (String) -> String?) throws -> String {
        let dir = try KioskdProcess.scratchDirectory("journal-logging")
        let errPath = dir.appendingPathComponent("stderr").path
        XCTAssertTrue(FileManager.default.createFile(atPath: errPath, contents: nil))
        var st = stat()
        XCTAssertEqual(stat(errPath, &st), 0)
        // An empty configuration, so that the host's is not read (a device node such as /dev/null is refused).
        let config = dir.appendingPathComponent("empty.yaml").path
        XCTAssertTrue(FileManager.default.createFile(atPath: config, contents: nil))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: KioskdProcess.kioskdPath)
        process.arguments = ["run", "--backend", "headless", "--mode", "320x240@60", "--frames", "2", "--socket", "none",
                             "--config", config, "--keep-going", "--scene", dir.appendingPathComponent("missing.yaml").path]
        var environment = ProcessInfo.processInfo.environment
        environment["JOURNAL_STREAM"] = journalStream("\(st.st_dev):\(st.st_ino)")
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
        try process.run()
        let deadline = ProcessDeadline(process, seconds: 60)
        process.waitUntilExit()
        try deadline.finish("kioskd --frames 2")
        XCTAssertEqual(process.terminationStatus, 0)
        return try String(contentsOfFile: errPath, encoding: .utf8)
    }

    func testLinesCarryTheirPriorityWhenStderrIsTheJournal() throws {
        let text = try run { $0 }
        let lines = text.split(separator: "\n").map(String.init)
        XCTAssertFalse(lines.isEmpty)
        let error = try XCTUnwrap(lines.first { $0.contains("cannot be shown") }, text)
        XCTAssertTrue(error.hasPrefix("<3>kioskd: scene "), error)
        let priorities = Set(["<2>", "<3>", "<4>", "<5>", "<6>", "<7>"])
        XCTAssertTrue(lines.allSatisfy { priorities.contains(String($0.prefix(3))) && $0.dropFirst(3).hasPrefix("kioskd") }, "every line has a priority: \(text)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("<6>") }, "info lines are <6>: \(text)")
    }

    func testLinesStayPlainElsewhere() throws {
        for stream in [nil, "1:2", "garbage"] as [String?] {
            let text = try run { _ in stream }
            XCTAssertTrue(text.contains("cannot be shown"), text)
            XCTAssertFalse(text.contains("<3>"), "JOURNAL_STREAM=\(stream ?? "unset") does not name stderr: \(text)")
        }
    }
}
