import Foundation
import KioskTestSupport
import XCTest

private var repository: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

/// `scripts/test-stall-guard`, which every tier of scripts/test-all runs under: a test case that stops moving is
/// stopped with its threads printed, and anything else passes through untouched. The fake test runs print what
/// XCTest prints, with a class name no real test has.
final class TestStallGuardTests: XCTestCase {
    private var guardScript: String { repository.appendingPathComponent("scripts/test-stall-guard").path }

    /// The guard's output with XCTest's own line openings defused, for assertion messages: this test's output is
    /// itself watched by a guard, which must not take a fake case's lines for a real one.
    private func quoted(_ text: String) -> String {
        text.replacingOccurrences(of: "Test Case '", with: "[case] '").replacingOccurrences(of: "Test Suite '", with: "[suite] '")
    }

    func testACaseThatStopsMovingIsStoppedWithItsThreadsPrinted() throws {
        let fake = """
            echo "Test Suite 'StallFake' started at now"
            echo "Test Case 'StallFake.testQuick' started at now"
            echo "Test Case 'StallFake.testQuick' passed (0.001 seconds)"
            echo "Test Case 'StallFake.testBlocks' started at now"
            sleep 600 &
            wait
            echo "never printed"
            """
        let started = Date()
        let result = try runTool(guardScript, ["2", "bash", "-c", fake])
        let took = Date().timeIntervalSince(started)
        XCTAssertEqual(result.status, 124, quoted(result.text))
        XCTAssertTrue(result.text.contains("StallFake.testQuick' passed"), "the command's output passes through: \(quoted(result.text))")
        XCTAssertTrue(result.text.contains("test-stall-guard: StallFake.testBlocks has run for"), quoted(result.text))
        XCTAssertFalse(result.text.contains("testQuick has run"), quoted(result.text))
        // (Its command line, which the guard prints, holds the words; as a line of output they never come.)
        XCTAssertFalse(result.text.split(separator: "\n").contains("never printed"), quoted(result.text))
        // Both processes (bash and the sleep under it) are shown, each thread with its state and wait channel.
        XCTAssertTrue(result.text.contains("(bash)") && result.text.contains("(sleep)"), quoted(result.text))
        XCTAssertNotNil(result.text.range(of: #"thread \d+ \(sleep\) state S in"#, options: .regularExpression), quoted(result.text))
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") {
            XCTAssertTrue(result.text.contains("Thread 1 ("), "gdb's backtraces: \(quoted(result.text))")
        }
        XCTAssertTrue(result.text.contains("test-stall-guard: stopped StallFake.testBlocks after 2 s"), quoted(result.text))
        // Stopped at its limit (the guard looks every second), not at the sleep's end.
        XCTAssertLessThan(took, 60, quoted(result.text))
    }

    func testAClassWhoseSetUpNeverEndsIsStoppedToo() throws {
        let fake = """
            echo "Test Suite 'StallFakeSetUp' started at now"
            exec sleep 600
            """
        let result = try runTool(guardScript, ["2", "bash", "-c", fake])
        XCTAssertEqual(result.status, 124, quoted(result.text))
        XCTAssertTrue(result.text.contains("test-stall-guard: suite StallFakeSetUp has run for"), quoted(result.text))
    }

    func testARunThatEndsKeepsItsExitStatusAndOutput() throws {
        let fake = """
            echo "Test Case 'StallFake.testA' started at now"
            echo "Test Case 'StallFake.testA' failed (0.001 seconds)"
            echo "Test Case 'StallFake.testB' started at now"
            sleep 3
            echo "Test Case 'StallFake.testB' passed (3.0 seconds)"
            echo "last line"
            exit 3
            """
        // B takes longer than the limit's polling would notice if the limit counted from A: each case has its own.
        let result = try runTool(guardScript, ["6", "bash", "-c", fake])
        XCTAssertEqual(result.status, 3, quoted(result.text))
        XCTAssertTrue(result.text.hasSuffix("last line\n"), quoted(result.text))
        XCTAssertFalse(result.text.contains("test-stall-guard:"), quoted(result.text))
    }

    /// A daemon started by a test (udevd in the VM) keeps what it inherited open after the test run ends: the guard
    /// ends with the run all the same, with all of its output, the last line even without a newline.
    func testADaemonLeftRunningDoesNotHoldTheGuard() throws {
        let fake = """
            echo "Test Case 'StallFake.testStartsADaemon' started at now"
            (for fd in $(ls /proc/$BASHPID/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; exec setsid sleep 20) &
            echo "Test Case 'StallFake.testStartsADaemon' passed (0.001 seconds)"
            printf 'no newline at the end'
            exit 5
            """
        // Output to files, and the guard's own exit awaited. The daemon closes what it inherited past stderr as a
        // daemon does: Foundation's Process notices its child's end through a descriptor the child inherits, so one
        // kept open would hold this test, not the guard.
        let started = Date()
        let result = try RunningProcess(path: guardScript, arguments: ["60", "bash", "-c", fake]).finish(timeout: 60)
        XCTAssertEqual(result.status, 5, quoted(result.stdout + result.stderr))
        XCTAssertTrue(result.stdout.hasSuffix("no newline at the end\n"), quoted(result.stdout))
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "the guard waited for the daemon: \(quoted(result.stdout))")
    }

    func testALimitThatIsNotANumberIsRefused() throws {
        let result = try runTool(guardScript, ["soon", "true"])
        XCTAssertEqual(result.status, 2, result.text)
        XCTAssertTrue(result.text.contains("LIMIT must be a positive number of seconds, got 'soon'"), result.text)
    }
}
