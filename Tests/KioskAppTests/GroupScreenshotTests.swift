import Foundation
@testable import KioskApp
import KioskControl
import KioskCore
import KioskRender
import KioskTestSupport
import XCTest

/// `screenshot` with `group_time_ns` on the manual clock: the frame on screen at the vblank nearest a time on the sync
/// group's clock (here a page loop on the group's clock, two pages of one colour each), waited for; and a clear error
/// where no such frame can be had.
final class GroupScreenshotTests: XCTestCase {
    static let scene = """
        size: display
        pages:
          - name: red
            duration: 1
            widgets: [{type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "#ff0000"}]
          - name: blue
            duration: 1
            widgets: [{type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "#0000ff"}]

        """
    static let offset: Int64 = 1_796_000_000_123_456_789

    private func code(_ reply: (result: JSONValue?, error: JSONValue?)) -> String? { reply.error?["code"]?.stringValue }

    func testATimeOutsideASyncGroupUnknownPastOrTooFarAheadIsRefusedWithAClearError() throws {
        let h = try KioskHarness("group-screenshot-errors", scene: Self.scene)
        let outside = try h.call("screenshot", ["group_time_ns": .int(Self.offset)])
        XCTAssertEqual(code(outside), "not_in_sync_group")
        XCTAssertTrue(outside.error?["message"]?.stringValue?.contains("sync:") == true, "\(String(describing: outside.error))")

        let timeline = OffsetGroupTimeline(offset: Self.offset)
        h.first.stage.timeline = timeline
        timeline.known = false
        XCTAssertEqual(code(try h.call("screenshot", ["group_time_ns": .int(Self.offset)])), "unavailable")
        timeline.known = true
        let now = try XCTUnwrap(timeline.groupTime(at: h.loop.now))
        let late = try h.call("screenshot", ["group_time_ns": .int(now - 20_000_000)])
        XCTAssertEqual(code(late), "too_late")
        XCTAssertTrue(late.error?["message"]?.stringValue?.contains("passed 20.0 ms ago") == true, "\(String(describing: late.error))")
        XCTAssertEqual(code(try h.call("screenshot", ["group_time_ns": .int(now + 61_000_000_000)])), "invalid_argument")
        XCTAssertEqual(code(try h.call("screenshot", ["group_time_ns": .string("soon")])), "invalid_argument")
    }

    /// Captures asked for at once for times in either page of the group's loop, each answered at its time with the
    /// page the group is on then and the group time of the flip that put it on screen.
    func testACaptureAtAGroupTimeIsTheFrameOnScreenAtTheVblankNearestIt() throws {
        let h = try KioskHarness("group-screenshot", scene: Self.scene)
        let timeline = OffsetGroupTimeline(offset: Self.offset)
        h.first.stage.timeline = timeline
        let control = try XCTUnwrap(h.kiosk.control)
        let now = try XCTUnwrap(timeline.groupTime(at: h.loop.now))
        // The group's loop is two seconds long from the group clock's zero: red in its first second, blue in its second.
        let loopStart = now - now % 2_000_000_000 + 2_000_000_000
        let times: [(time: Int64, colour: UInt32)] = [(loopStart + 400_000_000, 0xFF0000), (loopStart + 1_300_000_000, 0x0000FF),
                                                      (loopStart + 2_980_000_000, 0xFF0000), (loopStart + 3_020_000_000, 0x0000FF)]
        var replies: [JSONValue?] = Array(repeating: nil, count: times.count)
        for (i, target) in times.enumerated() {
            _ = control.server.commands.start(ControlRequest(command: "screenshot", arguments: ["group_time_ns": .int(target.time)]),
                                              from: .remote(number: -1)) { replies[i] = $0 }
        }
        var answeredAt: [Int64?] = Array(repeating: nil, count: times.count)
        try Poll.until("every capture to be answered", timeout: 30, interval: 0) {
            h.advance(by: .milliseconds(2))
            h.loop.runOnce(timeout: .zero)
            _ = h.pool.runQueued()
            for i in replies.indices where replies[i] != nil && answeredAt[i] == nil { answeredAt[i] = timeline.groupTime(at: h.loop.now) }
            return replies.allSatisfy { $0 != nil }
        }
        for (i, target) in times.enumerated() {
            let result = try XCTUnwrap(replies[i]?["result"], "\(String(describing: replies[i]))")
            let png = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(result["png_base64"]?.stringValue)))
            let file = h.directory.appendingPathComponent("capture-\(i).png").path
            try png.write(to: URL(fileURLWithPath: file))
            let image = try readPNG(path: file)
            let pixel = UInt32(image.pixels[2]) << 16 | UInt32(image.pixels[1]) << 8 | UInt32(image.pixels[0])
            XCTAssertEqual(pixel, target.colour, "capture \(i) at group time +\(target.time - loopStart) ns into the loop")
            // The flip that put the frame on screen, when one came from three refresh periods before the time (the
            // turn's, 20 ms before the last capture; a page standing still flips nothing): at or before the vblank
            // nearest the time.
            let shown = result["vblank_group_time_ns"]?.intValue
            if let shown {
                XCTAssertLessThanOrEqual(shown, target.time + 8_400_000, "capture \(i)")
                XCTAssertLessThanOrEqual(target.time - shown, 50_000_001, "capture \(i)")
            }
            if i == 3 {
                let turn = loopStart + 3_000_000_000
                XCTAssertEqual(Double(try XCTUnwrap(shown, "the turn's flip")), Double(turn), accuracy: 8_400_000, "the turn flipped at its nearest vblank")
            }
            // Answered once the time had come, not before.
            XCTAssertGreaterThanOrEqual(try XCTUnwrap(answeredAt[i]), target.time, "capture \(i) waited for its time")
        }
    }
}
