import ArgumentParser
import Foundation
import KioskCore
import KioskScene

/// `kioskd schedule SCENE --from … --to …`: which page the scene's timed loop shows when, over a range of time,
/// with no display: what an operator checks before sending a scene to a fleet. The same `PageSchedule` functions
/// drive the stage, so the preview is what the screen shows with the clock synchronized (a `duration: video` page
/// is taken to leave when its window closes: how long its video runs is not known here). Runs on the main thread
/// of a short-lived process.
struct ScheduleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schedule",
        abstract: "Preview which page a scene shows when, over a range of time, without a display.")

    @Argument(help: "The scene file.")
    var scene: String

    @Option(help: "Where the preview starts: \(ScheduleTimeText.accepted). Default: now.")
    var from: String?

    @Option(help: "Where the preview ends (not included), in the same forms. Default: a day after --from.")
    var to: String?

    @Option(help: "The time zone the scene's rules and these times are read in, when the scene names none (default: the system's).")
    var timezone: String?

    @Flag(help: "Print JSON Lines, one object per change: {\"start\": ISO 8601, \"unix\": seconds, \"page\": name}.")
    var json = false

    /// The most changes printed: a scene that changes page every second shows a day in 86,400 lines.
    static let maximumChanges = 1_000_000

    func run() throws {
        let loaded: LoadedScene
        do {
            loaded = try SceneLoader.load(path: scene, limits: SceneLimits())
        } catch {
            for diagnostic in error.diagnostics { FileHandle.standardError.write(Data("\(diagnostic)\n".utf8)) }
            throw ExitCode(1)
        }
        var systemZone = TimeZone.current
        if let timezone {
            guard let zone = TimeZone(identifier: timezone) else {
                throw ValidationError("--timezone: unknown time zone '\(timezone)' (expected an IANA name such as Europe/Paris)")
            }
            systemZone = zone
        }
        let schedule = loaded.scene.pageSchedule(systemZone: systemZone)
        let zone = schedule.timeZone
        func instant(_ text: String, _ option: String) throws -> Date {
            guard let date = ScheduleTimeText.parse(text, in: zone) else {
                throw ValidationError("\(option): '\(text)' is not a time; expected \(ScheduleTimeText.accepted)")
            }
            return date
        }
        let start = try from.map { try instant($0, "--from") } ?? Date(timeIntervalSince1970: Double(Int(Date().timeIntervalSince1970)))
        let end = try to.map { try instant($0, "--to") } ?? start.addingTimeInterval(86_400)
        guard end > start else {
            throw ValidationError("--to (\(ScheduleTimeText.format(end, in: zone))) must come after --from (\(ScheduleTimeText.format(start, in: zone)))")
        }
        let shown = schedule.preview(from: start, to: end, firstPage: loaded.scene.pages.first?.name ?? "", limit: Self.maximumChanges)
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = zone
        for showing in shown {
            if json {
                let line = try JSONSerialization.data(withJSONObject: [
                    "start": formatter.string(from: showing.start), "unix": showing.start.timeIntervalSince1970, "page": showing.page,
                ], options: [.sortedKeys])
                print(String(decoding: line, as: UTF8.self))
            } else {
                print("\(ScheduleTimeText.format(showing.start, in: zone))  \(showing.page)")
            }
        }
        if shown.count == Self.maximumChanges {
            FileHandle.standardError.write(Data("kioskd schedule: stopped after \(Self.maximumChanges) changes; give a shorter range\n".utf8))
        }
    }
}
