import Foundation
import KioskCore
import KioskRuntime

/// The `--stats-out` file. Keys are snake_case and stable: scripts and CI read them.
struct RunStatsReport: Codable {
    var framesFlipped: Int
    var missedVblanks: UInt64
    var flipIntervalMs: LatencySummary
    var averageFps: Double
    var mode: String
    var connector: String
    var device: String
    var driver: String
    var commitApi: String
    /// "vblank", or "timer" where the driver has no vblank (`FlipPacer`).
    var flipPacing: String
    var buffers: Int
    var loopIterations: Int
    var loopWakeups: Int
    /// Output rotation in degrees clockwise.
    var rotation: Int
    /// "on" or "off": the output's power at exit.
    var power: String
    /// Milliseconds from process start to the first flip of a frame with every layer rendered; null when none
    /// flipped.
    var firstFrameMs: Double?
    /// The process's resident memory when the report is made: peak, private and file-backed.
    var memory = ProcessMemory.current()

    /// With no `info` (no display connected) the output's fields say `none`.
    init(flips: FlipStatistics, info: OutputInfo?, loop: MainLoop, rotation: OutputRotation = .degrees0, poweredOn: Bool = true,
         firstFrameMs: Double? = nil, pacing: FlipPacing = .vblank) {
        framesFlipped = flips.framesFlipped
        missedVblanks = flips.missedVblanks
        flipIntervalMs = flips.intervals.summary
        averageFps = (flips.averageFPS * 100).rounded() / 100
        mode = info?.mode.description ?? "none"
        connector = info?.connector ?? "none"
        device = info?.device ?? "none"
        driver = info?.driver ?? "none"
        commitApi = info?.commitAPI.rawValue ?? "none"
        flipPacing = info == nil ? "none" : (pacing.isTimer ? "timer" : "vblank")
        buffers = info?.bufferCount ?? 0
        loopIterations = loop.iterations
        loopWakeups = loop.wakeups
        self.rotation = rotation.degrees
        power = poweredOn ? "on" : "off"
        self.firstFrameMs = firstFrameMs
    }

    /// The video widgets' frame counters over `stage`, as `stats` gives them.
    static func videoFigures(_ stage: SceneStage) -> [String: Int] {
        let totals = stage.videoFrameTotals
        return ["video_frames_decoded": totals.decoded, "video_frames_shown": totals.shown, "video_frames_dropped": totals.dropped]
    }

    /// Writes the report; with a layer engine its counters (renders, drops, compositions, bytes copied, render
    /// times per kind, fps) are merged in at the top level, the output's own figures taking precedence.
    private enum CodingKeys: String, CodingKey {
        case framesFlipped, missedVblanks, flipIntervalMs, averageFps, mode, connector, device, driver, commitApi, flipPacing, buffers
        case loopIterations, loopWakeups, rotation, power, firstFrameMs, memory
    }

    /// `first_frame_ms` is written as null when unmeasured rather than left out, so readers see it was not measured.
    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(framesFlipped, forKey: .framesFlipped)
        try c.encode(missedVblanks, forKey: .missedVblanks)
        try c.encode(flipIntervalMs, forKey: .flipIntervalMs)
        try c.encode(averageFps, forKey: .averageFps)
        try c.encode(mode, forKey: .mode)
        try c.encode(connector, forKey: .connector)
        try c.encode(device, forKey: .device)
        try c.encode(driver, forKey: .driver)
        try c.encode(commitApi, forKey: .commitApi)
        try c.encode(flipPacing, forKey: .flipPacing)
        try c.encode(buffers, forKey: .buffers)
        try c.encode(loopIterations, forKey: .loopIterations)
        try c.encode(loopWakeups, forKey: .loopWakeups)
        try c.encode(rotation, forKey: .rotation)
        try c.encode(power, forKey: .power)
        try c.encode(firstFrameMs, forKey: .firstFrameMs)
        try c.encode(memory, forKey: .memory)
    }

    /// `extra`: further figures merged in (the video widgets' frame counters).
    func write(to path: String, engine: EngineStats? = nil, extra: [String: Int] = [:]) throws {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        var data = try encoder.encode(self)
        if let engine,
           var merged = try JSONSerialization.jsonObject(with: encoder.encode(engine)) as? [String: Any],
           let mine = try JSONSerialization.jsonObject(with: data) as? [String: Any] {
            merged.merge(mine) { _, ours in ours }
            merged.merge(extra) { ours, _ in ours }
            data = try JSONSerialization.data(withJSONObject: merged, options: [.prettyPrinted, .sortedKeys])
        }
        data.append(0x0A)
        do { try data.write(to: URL(fileURLWithPath: path)) } catch {
            throw OutputError("stats file \(path): cannot write: \(error.localizedDescription)")
        }
    }
}
