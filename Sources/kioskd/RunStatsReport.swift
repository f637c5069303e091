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

    init(flips: FlipStatistics, info: OutputInfo, loop: MainLoop) {
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
    }

    func write(to path: String) throws {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        var data = try encoder.encode(self)
        data.append(0x0A)
        do { try data.write(to: URL(fileURLWithPath: path)) } catch {
            throw DisplayError("stats file \(path): cannot write: \(error.localizedDescription)")
        }
    }
}
