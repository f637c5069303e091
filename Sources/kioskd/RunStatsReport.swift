import Foundation
import KioskCore

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
    var buffers: Int
    var loopIterations: Int
    var loopWakeups: Int
    /// Output rotation in degrees clockwise.
    var rotation: Int
    /// "on" or "off": the output's power at exit.
    var power: String

    init(flips: FlipStatistics, info: OutputInfo, loop: MainLoop, rotation: OutputRotation = .degrees0, poweredOn: Bool = true) {
        framesFlipped = flips.framesFlipped
        missedVblanks = flips.missedVblanks
        flipIntervalMs = flips.intervals.summary
        averageFps = (flips.averageFPS * 100).rounded() / 100
        mode = info.mode.description
        connector = info.connector
        device = info.device
        driver = info.driver
        commitApi = info.commitAPI.rawValue
        buffers = info.bufferCount
        loopIterations = loop.iterations
        loopWakeups = loop.wakeups
        self.rotation = rotation.degrees
        power = poweredOn ? "on" : "off"
    }

    /// Writes the report; with a layer engine its counters (renders, drops, compositions, bytes copied, render
    /// times per kind, fps) are merged in at the top level, the output's own figures taking precedence.
    func write(to path: String, engine: EngineStats? = nil) throws {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        var data = try encoder.encode(self)
        if let engine,
           var merged = try JSONSerialization.jsonObject(with: encoder.encode(engine)) as? [String: Any],
           let mine = try JSONSerialization.jsonObject(with: data) as? [String: Any] {
            merged.merge(mine) { _, ours in ours }
            data = try JSONSerialization.data(withJSONObject: merged, options: [.prettyPrinted, .sortedKeys])
        }
        data.append(0x0A)
        do { try data.write(to: URL(fileURLWithPath: path)) } catch {
            throw DisplayError("stats file \(path): cannot write: \(error.localizedDescription)")
        }
    }
}
