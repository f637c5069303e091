import Foundation
import KioskTestSupport
import XCTest

/// Issue 14's host target: 60 s of 1080p30 through a headless `kioskd run` with no frame dropped, while the other
/// widgets keep updating all along. The clip is H.264 in MP4 (1800 frames, the frame number burned in), which
/// GStreamer's software decoder takes at about ten times real time on a 2-core host, where VP9 in WebM runs at
/// under three times: the margin a zero-drop assertion needs. It runs in the host tier, which runs the tests one at
/// a time; not under ThreadSanitizer, where a 1080p frame costs several times its period (that tier runs
/// `VideoWidgetTests`, whose shorter clips cross the same threads).
final class VideoMinuteTests: XCTestCase {
    /// What `stats` said at one moment of the run.
    private struct Sample {
        let time: Date
        let textRenders: Int
        let clockRenders: Int
        let shown: Int
        let dropped: Int
        let missedVblanks: Int
    }

    func testSixtySecondsOf1080p30DropNoFrameWhileOtherWidgetsKeepUpdating() throws {
        let frames = 1800
        let clip = try TestClips.clip(.h264, width: 1920, height: 1080, frames: frames)
        let daemon = try FullHDVideoKiosk.start(clip: clip, scratch: "video-minute", extraWidgets: [
            "{id: counter, type: text, text: \"{tick}\", x: 1300, y: 900, width: 560, height: 120, foreground: white, font: {size: 80}}",
        ])
        defer { daemon.stop() }
        let events = try ControlEventStream(socketPath: daemon.socketPath, events: ["video"])
        _ = try events.request(#"{"id": "show", "cmd": "page.show", "args": {"name": "main"}}"#)
        try events.waitFor("video started", timeout: 30) { $0.string("kind") == "started" }
        let cpuBefore = try Self.processCPUSeconds(daemon.pid)

        // The counter is set ten times a second (its own pace, not a wait), the clock ticks by itself each second,
        // and `stats` is read once a second, until the clip ends.
        var samples = [try Self.sample(events)]
        let started = samples[0].time
        var tick = 0, nextTick = started, ended: Date?
        while ended == nil {
            guard Date().timeIntervalSince(started) < 120 else {
                XCTFail("the 60-second clip had not ended after 120 s: \(samples.last.map { "\($0)" } ?? "")")
                return
            }
            if let event = try events.nextEvent(until: nextTick) {
                XCTAssertNotEqual(event.string("kind"), "error", "\(event)")
                if event.string("kind") == "ended" { ended = Date() }
                continue
            }
            tick += 1
            nextTick += 0.1
            let reply = try events.request(#"{"id": \#(tick), "cmd": "data.set", "args": {"values": {"tick": \#(tick)}}}"#)
            XCTAssertEqual(reply["ok"] as? Bool, true, "\(reply)")
            if tick % 10 == 0 { samples.append(try Self.sample(events)) }
        }
        samples.append(try Self.sample(events))
        let cpuAfter = try Self.processCPUSeconds(daemon.pid)

        // The `ended` event can come before the last frame's present: wait until every decoded frame is accounted for.
        var stats: [String: Any] = [:]
        try Poll.until("every decoded frame shown or dropped", timeout: 10, interval: 0.05) {
            stats = try events.stats()
            let decoded = stats["video_frames_decoded"] as? Int ?? 0
            return (stats["video_frames_shown"] as? Int ?? 0) + (stats["video_frames_dropped"] as? Int ?? 0) >= decoded
        }
        let decoded = try XCTUnwrap(stats["video_frames_decoded"] as? Int)
        let shown = try XCTUnwrap(stats["video_frames_shown"] as? Int)
        let dropped = try XCTUnwrap(stats["video_frames_dropped"] as? Int)
        let seconds = try XCTUnwrap(ended).timeIntervalSince(started)
        print("video-minute: \(seconds) s played, decoded \(decoded), shown \(shown), dropped \(dropped), kioskd CPU "
              + "\(((cpuAfter - cpuBefore) * 1000 / Double(max(shown, 1))).rounded()) ms per shown frame, "
              + "\(samples.count) samples, \(tick) data updates, vblanks missed \(samples.last!.missedVblanks - samples[0].missedVblanks), "
              + "flip interval \(stats["flip_interval_ms"] ?? "none")")
        let drops = zip(samples, samples.dropFirst()).filter { $1.dropped > $0.dropped }
            .map { "\($1.dropped - $0.dropped) by \(Int($1.time.timeIntervalSince(started))) s (vblanks missed then: \($1.missedVblanks - $0.missedVblanks))" }
        XCTAssertEqual(dropped, 0, "no frame of the 60-second clip was dropped (dropped: \(drops))")
        XCTAssertEqual(decoded, frames, "every frame of the clip was decoded")
        XCTAssertEqual(shown, frames, "every frame of the clip was shown")
        XCTAssertGreaterThan(seconds, 59, "the clip played in real time")

        // The other widgets kept updating through the whole run, second by second, not only by its end.
        for (before, after) in zip(samples, samples.dropFirst()) {
            let span = after.time.timeIntervalSince(before.time)
            let at = before.time.timeIntervalSince(started)
            guard span > 0.5 else { continue }
            XCTAssertGreaterThanOrEqual(Double(after.textRenders - before.textRenders) / span, 5,
                                        "the counter, set ten times a second, rendered at least five times a second from \(Int(at)) s on")
        }
        for (before, after) in zip(samples, samples.dropFirst(2)) where after.time.timeIntervalSince(before.time) >= 1.8 {
            XCTAssertGreaterThan(after.clockRenders, before.clockRenders,
                                 "the seconds clock rendered within the two seconds from \(Int(before.time.timeIntervalSince(started))) s on")
        }
        let clockRenders = samples.last!.clockRenders - samples[0].clockRenders
        XCTAssertGreaterThanOrEqual(clockRenders, Int(seconds) - 2, "the seconds clock rendered once a second")
    }

    private static func sample(_ events: ControlEventStream) throws -> Sample {
        let stats = try events.stats()
        let renders = stats["render_ms"] as? [String: Any] ?? [:]
        func count(_ kind: String) -> Int { (renders[kind] as? [String: Any])?["count"] as? Int ?? 0 }
        return Sample(time: Date(), textRenders: count("text"), clockRenders: count("clock"),
                      shown: stats["video_frames_shown"] as? Int ?? 0, dropped: stats["video_frames_dropped"] as? Int ?? 0,
                      missedVblanks: stats["missed_vblanks"] as? Int ?? 0)
    }

    /// User and system CPU time of process `pid` so far, from /proc/PID/stat.
    private static func processCPUSeconds(_ pid: Int32) throws -> Double {
        let text = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the command name, which is in parentheses and may hold spaces: utime and stime are 14 and 15.
        let fields = text[text.index(after: try XCTUnwrap(text.lastIndex(of: ")")))...].split(separator: " ")
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (Double(fields[11])! + Double(fields[12])!) / ticks
    }
}
