import Foundation

/// Video clips made at test time by `scripts/make-test-clip`: a test pattern with the frame number burned in at the
/// top left (HH:MM:SS:FF, FF the frame within the second), at 30 fps unless asked otherwise. Each clip is made once and
/// cached in a folder: `KIOSKD_TEST_CLIPS` when set (scripts/test-all makes the largest clip there ahead of its test,
/// while other tests run), else a temporary folder of this test process. Broken files for the failure tests are made
/// from a good one.
public enum TestClips {
    public enum Codec: String, Sendable {
        /// H.264 (x264) in MP4.
        case h264 = "mp4"
        /// VP9 in WebM.
        case vp9 = "webm"
    }

    private static let folder: URL = {
        let url = ProcessInfo.processInfo.environment["KIOSKD_TEST_CLIPS"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-clips-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()
    private static let lock = NSLock()
    private static let maker = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/make-test-clip").path

    /// The path of a clip of `frames` frames at `fps` (30 unless given) over videotestsrc's `pattern` (smpte unless
    /// given: another makes a clip that differs from the default one where their frame numbers match); made on first use. One that another process
    /// is making (its `.making` file is there) is waited for, for up to 150 s, then made here if it did not appear
    /// (within the test stall guard's 5 minutes a case, with the encoding and the test after it).
    public static func clip(_ codec: Codec, width: Int, height: Int, frames: Int, fps: Int = 30, pattern: String = "smpte") throws -> String {
        lock.lock()
        defer { lock.unlock() }
        let rate = fps == 30 ? "" : "-\(fps)fps"
        let look = pattern == "smpte" ? "" : "-\(pattern)"
        let path = folder.appendingPathComponent("clip-\(width)x\(height)-\(frames)\(rate)\(look).\(codec.rawValue)").path
        if FileManager.default.fileExists(atPath: path + ".making") {
            do {
                try Poll.until("\(path), being made by another process", timeout: 150, interval: 0.2) {
                    FileManager.default.fileExists(atPath: path) || !FileManager.default.fileExists(atPath: path + ".making")
                }
            } catch is Poll.Timeout {
                print("TestClips: \(path) was still being made after 150 s; making it here")
            }
        }
        if FileManager.default.fileExists(atPath: path) { return path }
        try run(maker, [codec.rawValue, "\(width)", "\(height)", "\(frames)", path, "\(fps)", pattern])
        return path
    }

    /// A copy of `clip` cut to its first `keeping` bytes.
    public static func truncated(_ clip: String, keeping: Int) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: clip))
        let path = folder.appendingPathComponent("truncated-\(keeping)-" + (clip as NSString).lastPathComponent).path
        try data.prefix(keeping).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A file with a video name that holds no video.
    public static func corrupt() throws -> String {
        let path = folder.appendingPathComponent("corrupt.mp4").path
        var bytes = [UInt8](repeating: 0, count: 64 * 1024)
        for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: i &* 2654435761 >> 13) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The frame of a clip at `frame`, decoded by GStreamer alone and scaled to `width`x`height`, as BGRA rows: what
    /// a golden comparison holds the screen against.
    public static func decodedFrame(_ clip: String, frame: Int, width: Int, height: Int) throws -> [UInt8] {
        let out = folder.appendingPathComponent("frame-\(frame)-\(width)x\(height)-" + (clip as NSString).lastPathComponent + ".raw").path
        if !FileManager.default.fileExists(atPath: out) {
            let pipeline = "filesrc location=\(clip) ! decodebin3 ! videoscale add-borders=true ! videoconvert "
                + "! video/x-raw,format=BGRA,width=\(width),height=\(height),pixel-aspect-ratio=1/1 "
                + "! multifilesink location=\(out).%d"
            // Only the wanted frame is kept: decode everything up to it (the clips are short) into numbered files.
            try run("/usr/bin/gst-launch-1.0", ["-q"] + splitPipeline(pipeline))
            try FileManager.default.moveItem(atPath: "\(out).\(frame)", toPath: out)
            let siblings = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            for name in siblings where name.hasPrefix((out as NSString).lastPathComponent + ".") {
                try? FileManager.default.removeItem(at: folder.appendingPathComponent(name))
            }
        }
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    /// Every frame of a clip, decoded by GStreamer alone (one decode) and scaled to `width`x`height`, as BGRA rows,
    /// in order: what a capture is matched against to tell which frame it shows.
    public static func decodedFrames(_ clip: String, width: Int, height: Int) throws -> [[UInt8]] {
        let prefix = "all-\(width)x\(height)-" + (clip as NSString).lastPathComponent + ".raw."
        let out = folder.appendingPathComponent(prefix).path
        if !FileManager.default.fileExists(atPath: out + "0") {
            let pipeline = "filesrc location=\(clip) ! decodebin3 ! videoscale add-borders=true ! videoconvert "
                + "! video/x-raw,format=BGRA,width=\(width),height=\(height),pixel-aspect-ratio=1/1 "
                + "! multifilesink location=\(out)%d"
            try run("/usr/bin/gst-launch-1.0", ["-q"] + splitPipeline(pipeline))
        }
        var frames: [[UInt8]] = []
        while let data = FileManager.default.contents(atPath: out + "\(frames.count)") { frames.append([UInt8](data)) }
        return frames
    }

    private static func splitPipeline(_ text: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var quoted = false
        for ch in text {
            if ch == "\"" { quoted.toggle(); continue }
            if ch == " " && !quoted {
                if !current.isEmpty { parts.append(current); current = "" }
            } else {
                current.append(ch)
            }
        }
        if !current.isEmpty { parts.append(current) }
        return parts
    }

    private static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        // Encoding a test clip takes seconds; reading its errors to the end waits for it, within the deadline.
        let deadline = ProcessDeadline(process, seconds: 120)
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let command = ((executable as NSString).lastPathComponent + " " + arguments.joined(separator: " "))
        try deadline.finish(command)
        guard process.terminationStatus == 0 else {
            throw ClipError("\(command) failed (\(process.terminationStatus)): "
                            + (String(data: message, encoding: .utf8) ?? ""))
        }
    }

    public struct ClipError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
