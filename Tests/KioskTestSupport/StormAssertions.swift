import Foundation
import XCTest

/// The storm and its checks, shared with the same test in the vkms VM.
public func runStorm(against daemon: ControlledKioskd, expected: ControlStorm.Expected, rssBoundKiB: Int, messagesPerClient: Int = 1500,
                     replyTimeoutSeconds: Int = 20, flipGapLimit: Double = 2,
              file: StaticString = #filePath, line: UInt = #line) throws -> StormReport {
    // Warm up every path once (an oversized line, a screenshot, errors) so the allocator's steady state is
    // what "before" measures.
    _ = ControlStorm.run(socketPath: daemon.socketPath, clients: 2, messagesPerClient: 200, idleConnections: 2, expected: expected, seed: 99,
                        replyTimeoutSeconds: replyTimeoutSeconds)
    // "Before" is measured once the loop has flipped a few more frames after the warm-up.
    try ControlEventStream(daemon, events: ["flip"]).waitFor(10, events: "flip")
    let rssBefore = try XCTUnwrap(residentKiB(of: daemon.pid), file: file, line: line)
    let flipsBefore = try daemon.framesFlipped()

    let report = ControlStorm.run(socketPath: daemon.socketPath, clients: 8, messagesPerClient: messagesPerClient, idleConnections: 32,
                                  expected: expected, seed: 1, replyTimeoutSeconds: replyTimeoutSeconds, flipGapLimit: flipGapLimit)

    guard daemon.isRunning else {
        let result = daemon.stop()
        XCTFail("kioskd exited during the storm: status \(result.status), stderr: \(result.stderr.suffix(4000))", file: file, line: line)
        return report
    }
    XCTAssertEqual(report.problems, [], file: file, line: line)
    XCTAssertGreaterThan(report.wellFormedSent, 1000, file: file, line: line)
    XCTAssertEqual(report.wellFormedAnsweredCorrectly, report.wellFormedSent, "every well-formed request answered correctly",
                   file: file, line: line)
    XCTAssertEqual(report.oversizedSent, 8, file: file, line: line)
    XCTAssertEqual(report.oversizedRefused, report.oversizedSent, file: file, line: line)
    XCTAssertGreaterThanOrEqual(report.peakConnections, 32, "connected at once, as kioskd counted them", file: file, line: line)
    // Flips kept rising during the storm: every pair of samples a second or more apart differs.
    let samples = report.flipSamples
    XCTAssertGreaterThanOrEqual(samples.count, 3, "the monitor saw the storm", file: file, line: line)
    XCTAssertGreaterThanOrEqual(samples.first ?? 0, flipsBefore, file: file, line: line)
    // Five flip events came between two samples, so the counter rose between every pair.
    for i in samples.indices.dropFirst() {
        XCTAssertGreaterThan(samples[i], samples[i - 1], "flips rose between samples \(i - 1) and \(i): \(samples)", file: file, line: line)
    }
    // And after it: two flips after subscribing now, the counter is past the storm's last sample.
    try ControlEventStream(daemon, events: ["flip"]).waitFor(2, events: "flip")
    let flipsAfter = try daemon.framesFlipped()
    XCTAssertGreaterThan(flipsAfter, samples.last ?? 0, "and after it", file: file, line: line)

    let rssAfter = try XCTUnwrap(residentKiB(of: daemon.pid), file: file, line: line)
    print("control storm: \(report.totalMessages) messages (\(report.malformedSent) malformed, \(report.oversizedSent) oversized, \(report.wellFormedSent) well-formed), peak \(report.peakConnections) clients, flips \(flipsBefore) -> \(flipsAfter), RSS \(rssBefore) KiB -> \(rssAfter) KiB")
    XCTAssertLessThanOrEqual(rssAfter - rssBefore, rssBoundKiB, "RSS grew from \(rssBefore) KiB to \(rssAfter) KiB", file: file, line: line)
    return report
}
