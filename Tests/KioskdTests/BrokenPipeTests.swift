import Foundation
import KioskTestSupport
import XCTest

/// kioskd ignores SIGPIPE: a peer that hangs up makes a write fail, and kioskd runs on. Here the reader of its
/// stderr goes away, as the journal's stream does while journald restarts, and kioskd goes on logging.
final class BrokenPipeTests: XCTestCase {
    func testKioskdOutlivesTheReaderOfItsStderr() throws {
        var template = Array("/tmp/kioskd-pipe-XXXXXX".utf8CString)
        let directory = String(cString: try XCTUnwrap(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socket = directory + "/control.sock"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: KioskdProcess.kioskdPath)
        process.arguments = ["run", "--backend", "headless", "--mode", "320x240@60", "--scene", "default", "--socket", socket]
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        // Nobody reads kioskd's stderr from here on: its first log line's write fails with EPIPE.
        try stderr.fileHandleForReading.close()
        func ping() -> Bool {
            (try? ControlTestSocket(path: socket, timeoutSeconds: 5))?.request(#"{"id": 0, "cmd": "ping"}"#)?["ok"] as? Bool == true
        }
        try Poll.until("kioskd to answer ping", timeout: 60, interval: 0.05) {
            XCTAssertTrue(process.isRunning, "kioskd ended: status \(process.terminationStatus), reason \(process.terminationReason.rawValue)")
            return !process.isRunning || ping()
        }
        // SIGHUP logs a line (and reloads the scene): another write to the broken pipe.
        kill(process.processIdentifier, SIGHUP)
        try Poll.until("kioskd to answer ping after SIGHUP", timeout: 30, interval: 0.05) { !process.isRunning || ping() }
        XCTAssertTrue(process.isRunning, "kioskd ended: status \(process.terminationStatus), reason \(process.terminationReason.rawValue)")
    }
}
