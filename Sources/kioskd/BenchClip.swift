import Foundation
import KioskBench

/// The `video` bench scenario's default clip: a test pattern with a frame counter, H.264 in MP4 at 30 fps, made
/// once with gst-launch-1.0 (gstreamer1.0-tools, x264enc from gstreamer1.0-plugins-ugly) and kept in the temporary
/// folder for later runs.
enum BenchClip {
    static func make(width: Int, height: Int, frames: Int) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-bench-\(width)x\(height)-\(frames).mp4").path
        if FileManager.default.fileExists(atPath: path) { return path }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gst-launch-1.0")
        process.arguments = ["-q", "videotestsrc", "num-buffers=\(frames)", "pattern=smpte", "!",
                             "video/x-raw,width=\(width),height=\(height),framerate=30/1", "!", "timecodestamper", "!",
                             "timeoverlay", "time-mode=time-code", "font-desc=Sans Bold \(height / 9)", "!", "videoconvert", "!",
                             "x264enc", "speed-preset=ultrafast", "key-int-max=30", "!", "mp4mux", "!", "filesink", "location=\(path).part"]
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        do { try process.run() } catch {
            throw BenchError("bench video: cannot run gst-launch-1.0 to make the clip (\(error)); install gstreamer1.0-tools or pass --clip FILE")
        }
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError("bench video: gst-launch-1.0 could not make the clip: \(message); pass --clip FILE")
        }
        try FileManager.default.moveItem(atPath: path + ".part", toPath: path)
        return path
    }
}
