import Foundation
import KioskCore
import KioskTestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Kiosks in one sync group on a real mosquitto (on loopback), each playing the same looping clip with its frame
/// number burned in (`TestClips`), the second started once the first shows video; both captured at the same group
/// times (`screenshot` with `group_time_ns`), and each capture's frame told by the nearest of the clip's decoded
/// frames. `SyncGroupVideoTests` runs it on headless outputs, `KioskdTwoOutputVMTests` on two DRM cards in the VM.
/// One test thread.
struct GroupVideoCaptures {
    /// One kiosk: its id in the group and the `kioskd run` options that choose its output.
    struct Member {
        let id: String
        let output: [String]
    }

    /// One capture time: what each member showed.
    struct Capture {
        let groupTime: Int64
        /// The clip's frame at that group time: the group clock's zero is the clip's start (GroupPageLoop's anchor).
        let expected: Int
        /// Per member: the clip's frame nearest the capture, its distance, the second nearest's distance, and the
        /// group time of the flip that put the frame on screen (nil when none came near the time).
        var frames: [Int] = []
        var distances: [Double] = []
        var runnerUp: [Double] = []
        var vblanks: [Int64?] = []
    }

    static let width = 160, height = 120

    /// The clip: its frames and rate, and the frames at either end that captures keep away from, if any. A single
    /// looping clip loops with no gap, so on the host every other capture is taken across its seam (its last frame,
    /// or the next loop's first). 30 fps on the host; 5 fps in a VM without KVM, where QEMU's emulated CPUs play two
    /// debug kiosks' video at a few frames a second, and a decoder late at the seam is sought, which holds a frame.
    ///
    /// With `items` above one, the widget plays a playlist of that many clips of the same length, each over its own
    /// test pattern (so that a frame number of one is not taken for the other's); the group times them as one clip of
    /// their summed length, and every item's start is a seam: until the first frame of the next item, sought to the
    /// group's position and played, comes, the last item's last frame stays.
    struct Clip {
        let frames: Int
        let fps: Int
        let seamMargin: Int64
        var items = 1
        var frameNs: Int64 { 1_000_000_000 / Int64(fps) }
        static let fast = Clip(frames: 60, fps: 30, seamMargin: 0)
        static let slow = Clip(frames: 30, fps: 5, seamMargin: 4)
        static let playlist = Clip(frames: 60, fps: 30, seamMargin: 6, items: 2)
        static let patterns = ["smpte", "checkers-8", "colors"]
    }

    /// Runs the kiosks (their files, sockets and captures in the broker's folder under /tmp) and takes `count`
    /// captures, each at a group time in the middle of a frame, half a second or more after the last reply, returning
    /// them with each member's `video.state`.
    static func run(_ members: [Member], clip shape: Clip = .fast, count: Int) throws -> (captures: [Capture], states: [[String: Any]]) {
        let began = Date()
        let broker = try MosquittoBroker()
        // Under /tmp, with the broker's files: a VM's 9p share takes no sockets.
        let directory = broker.directory
        let clips = try (0..<shape.items).map {
            try TestClips.clip(.h264, width: width, height: height, frames: shape.frames, fps: shape.fps, pattern: Clip.patterns[$0])
        }
        let frameNs = shape.frameNs, seamMargin = shape.seamMargin, clipFrames = shape.frames
        // The clips' frames are decoded for the comparison while the kiosks start (seconds in an emulated VM): the
        // items' frames one after the other, as the group times them.
        let decoding = Lock<Result<[[UInt8]], Error>?>(nil)
        let decoded = DispatchGroup()
        DispatchQueue.global().async(group: decoded) {
            let result = Result { try clips.flatMap { try TestClips.decodedFrames($0, width: width, height: height) } }
            decoding.withLock { $0 = result }
        }
        print(String(format: "group video captures: clip made after %.1f s", Date().timeIntervalSince(began)))
        let scene = directory + "/group-video.yaml"
        try """
            size: display
            background: "#000000"
            widgets:
              - {id: v, type: video, \(clips.count == 1 ? "source: \(clips[0])" : "playlist: [\(clips.joined(separator: ", "))]"), loop: true, muted: true, fit: fill, x: 0, y: 0, width: \(width), height: \(height)}

            """.write(toFile: scene, atomically: true, encoding: .utf8)
        var kiosks: [RunningProcess] = []
        defer {
            for kiosk in kiosks { kiosk.signal(SIGTERM) }
            for kiosk in kiosks { _ = kiosk.finish(timeout: 20) }
        }
        var sockets: [ControlTestSocket] = []
        func videoState(_ i: Int) -> [String: Any]? {
            sockets[i].request(#"{"id": 1, "cmd": "video.state"}"#)?["result"] as? [String: Any]
        }
        func sync(_ i: Int) -> [String: Any]? {
            (sockets[i].request(#"{"id": 1, "cmd": "stats"}"#)?["result"] as? [String: Any])?["sync"] as? [String: Any]
        }
        for member in members {
            let config = directory + "/\(member.id).yaml"
            try broker.writeKioskdConfig("client_id: \(member.id)\ntopic_prefix: kioskd/\(member.id)\n", to: config)
            let handle = try XCTUnwrap(FileHandle(forWritingAtPath: config))
            handle.seekToEndOfFile()
            handle.write(Data("sync: {group: video}\n".utf8))
            try handle.close()
            let socket = directory + "/\(member.id).sock"
            kiosks.append(try KioskdProcess.start(["run"] + member.output + ["--seat", "none", "--scene", scene, "--socket", socket,
                                                                            "--config", config, "--screenshot-dir", directory]))
            sockets.append(try XCTUnwrap(Poll.until("\(member.id)'s control socket", timeout: 30, reading: { try? ControlTestSocket(path: socket) },
                                                    satisfies: { $0 != nil })))
            // The next member starts once this one plays: they start at different times, and in different places
            // of the clip.
            let i = sockets.count - 1
            try Poll.until("\(member.id) to show video", timeout: 60, interval: 0.1) { (videoState(i)?["frames_shown"] as? Int ?? 0) > 2 }
            print(String(format: "group video captures: %@ shows video after %.1f s", member.id, Date().timeIntervalSince(began)))
        }
        // Every member knows the group's time and plays on it.
        try Poll.until("every member to play on the group's clock", timeout: 60, interval: 0.2) {
            (0..<members.count).allSatisfy { i in
                guard let s = sync(i), s["offset_ms"] is Double, s["leader"] as? String != nil else { return false }
                let group = videoState(i)?["group"] as? [String: Any]
                return ((group?["phase_error_ms"] as? [String: Any])?["count"] as? Int ?? 0) >= 5
                    && (s["role"] as? String == "leader" || s["exchanges"] as? Int ?? 0 >= 8)
            }
        }
        print(String(format: "group video captures: kiosks playing on the group's clock after %.1f s", Date().timeIntervalSince(began)))
        XCTAssertEqual(decoded.wait(timeout: .now() + 120), .success, "the clip's frames decoded within 120 s")
        let frames = try XCTUnwrap(decoding.withLock { $0 }).get()
        XCTAssertEqual(frames.count, clipFrames * shape.items, "the clips decode to their frames")
        var captures: [Capture] = []
        var random = SystemRandomNumberGenerator()
        let clipNs = Int64(((try XCTUnwrap(videoState(0)?["duration"] as? Double)) * 1e9).rounded())
        let cycleNs = clipNs * Int64(shape.items)
        for n in 0..<count {
            let offset = try XCTUnwrap(sync(0)?["offset_ms"] as? Double)
            let realNow = Int64(Date().timeIntervalSince1970 * 1e9)
            // Each member shows the frame due at its own vblank nearest the time, and the members' vblanks are up to
            // a refresh period apart: a time within half a period of a frame change may fall between the change on
            // one member and on the other. So the times are in the middle of a frame. They keep `seamMargin` frames
            // away from the clip's ends: in a playlist the next item (opened ahead, paused) is sought and played at an
            // item's end, and until its first frame comes (50 to 60 ms here) the last frame stays on screen; in the VM a
            // late decoder is sought there.
            let soon = realNow + Int64(offset * 1e6) + 400_000_000 + Int64.random(in: 0..<200_000_000, using: &random)
            var frame = (soon % clipNs) / frameNs + 1
            var loopStart = soon - soon % clipNs
            if frame < seamMargin { frame = seamMargin }
            if frame >= Int64(clipFrames) - seamMargin {
                frame = seamMargin
                loopStart += clipNs
            }
            if seamMargin == 0, n % 2 == 1 {
                // Across the seam: the clip's last frame, or the next loop's first; in the future either way.
                frame = n % 4 == 1 ? Int64(clipFrames) - 1 : 0
                loopStart = soon - soon % clipNs + (frame == 0 ? clipNs : 0)
                if loopStart + frame * frameNs < soon { loopStart += clipNs }
            }
            let groupTime = loopStart + frame * frameNs + frameNs / 2
            // Which item the group is in then: the frames of item k follow those of the items before it.
            let item = Int((loopStart % cycleNs) / clipNs)
            var capture = Capture(groupTime: groupTime, expected: item * clipFrames + Int(frame))
            // Asked of every member at once; each answers at its vblank nearest the time.
            for (i, member) in members.enumerated() {
                let path = directory + "/capture-\(n)-\(member.id).png"
                XCTAssertTrue(sockets[i].write(Array(#"{"id": 7, "cmd": "screenshot", "args": {"path": "\#(path)", "group_time_ns": \#(groupTime)}}"#.utf8) + [10]))
            }
            for (i, member) in members.enumerated() {
                var reply: [String: Any]?
                while reply == nil, let object = sockets[i].readObject(deadline: Date().addingTimeInterval(10)) {
                    if object["id"] as? Int == 7 { reply = object }
                }
                let result = try XCTUnwrap(reply?["result"] as? [String: Any], "\(member.id): \(String(describing: reply))")
                let shot = try PNGFile(contentsOf: URL(fileURLWithPath: directory + "/capture-\(n)-\(member.id).png"))
                let ranked = frames.indices.map { ($0, distance(shot, frames[$0])) }.sorted { $0.1 < $1.1 }
                capture.frames.append(ranked[0].0)
                capture.distances.append(ranked[0].1)
                capture.runnerUp.append(ranked[1].1)
                capture.vblanks.append((result["vblank_group_time_ns"] as? NSNumber)?.int64Value)
            }
            captures.append(capture)
        }
        return (captures, (0..<members.count).map { videoState($0) ?? [:] })
    }

    /// The mean difference per channel (0...255) between the capture's clip region and a decoded frame (BGRA rows),
    /// over the top third, where the frame number is.
    static func distance(_ shot: PNGFile, _ frame: [UInt8]) -> Double {
        var sum = 0, count = 0
        for y in 0..<height / 3 {
            for x in 0..<width {
                let rgb = shot.rgb(x: x, y: y), o = (y * width + x) * 4
                sum += abs(Int(rgb >> 16 & 0xFF) - Int(frame[o + 2])) + abs(Int(rgb >> 8 & 0xFF) - Int(frame[o + 1])) + abs(Int(rgb & 0xFF) - Int(frame[o]))
                count += 3
            }
        }
        return Double(sum) / Double(count)
    }

    /// Prints the captures and checks that every member showed the same frame at each, with a clear nearest match.
    static func check(_ captures: [Capture], states: [[String: Any]], members: [Member], clip: Clip = .fast, label: String,
                      file: StaticString = #filePath, line: UInt = #line) {
        var agreeing = 0
        for capture in captures {
            let vblankMs = capture.vblanks.map { $0.map { String(format: "%+.1f", Double($0 - capture.groupTime) / 1e6) } ?? "-" }
            print("\(label): group time \(capture.groupTime) (frame \(capture.expected)): frames \(capture.frames), distance \(capture.distances.map { String(format: "%.2f", $0) })"
                  + " (next nearest \(capture.runnerUp.map { String(format: "%.2f", $0) })), flip - time \(vblankMs) ms")
            if Set(capture.frames).count == 1 { agreeing += 1 }
            XCTAssertEqual(Set(capture.frames).count, 1, "\(label): at group time \(capture.groupTime) the members showed frames \(capture.frames)",
                           file: file, line: line)
            XCTAssertEqual(capture.frames.first, capture.expected, "\(label): at group time \(capture.groupTime) the clip is at frame \(capture.expected)",
                           file: file, line: line)
            for (distance, next) in zip(capture.distances, capture.runnerUp) {
                XCTAssertLessThan(distance, next, "\(label): a capture matches one frame best", file: file, line: line)
            }
            for vblank in capture.vblanks {
                // The flip that put the frame on screen: at or before the vblank nearest the time.
                if let vblank { XCTAssertLessThanOrEqual(vblank - capture.groupTime, 9_000_000, "\(label): no later than the vblank nearest the time", file: file, line: line) }
            }
        }
        for (member, state) in zip(members, states) {
            let group = state["group"] as? [String: Any] ?? [:]
            print("\(label): \(member.id): frame phase error \(group["phase_error_ms"] ?? "-") ms, decoder phase \(group["decoder_phase_ms"] ?? "-") ms, "
                  + "seeks \(group["seeks"] ?? "-") (times: seek \(group["seek_time_ms"] ?? "-"), open \(group["open_time_ms"] ?? "-"), resume \(group["resume_time_ms"] ?? "-") ms), shown \(state["frames_shown"] ?? "-"), dropped \(state["frames_dropped"] ?? "-")")
        }
        print("\(label): \(agreeing) of \(captures.count) captures show the same frame on every member")
    }
}
