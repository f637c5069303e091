import ArgumentParser
import Foundation
import KioskCore
import KioskScene

/// `kioskd schedule SCENE --from … --to …`: which page the scene's timed loop shows when, over a range of time,
/// with no display: what an operator checks before sending a scene to a fleet. The same `PageSchedule` functions
/// drive the stage, so the preview is what the screen shows with the clock synchronized (a `duration: video` page
/// is taken to leave when its window closes: how long its video runs is not known here). For each video widget
/// whose playlist items have `when:` rules, it also lists which items may play when (`PlaylistSchedule`, the
/// functions the widget plays by): a line each time that set changes, between the page lines, whether or not the
/// page is on screen then. Scenes without item rules print what they always did. Runs on the main thread of a
/// short-lived process.
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

    @Flag(help: "Print JSON Lines, one object per change: {\"start\": ISO 8601, \"unix\": seconds, \"page\": name}; for playlist items with rules, also {\"start\", \"unix\", \"page\", \"video\": widget id or #n, \"items\": [sources], \"item_indices\": [0-based]}.")
    var json = false

    /// One video widget's items over the range.
    struct ItemPreview {
        var page: String
        /// The widget's id, or `#n`: the n-th video widget of the page.
        var video: String
        var sources: [String]
        var changes: [PlaylistSchedule.Eligibility]
    }

    enum Line {
        case page(PageSchedule.Showing)
        case items(ItemPreview, PlaylistSchedule.Eligibility)

        var start: Date {
            switch self {
            case .page(let showing): showing.start
            case .items(_, let eligibility): eligibility.start
            }
        }
    }

    /// The video widgets of `scene` whose playlist items have rules or priorities, with which may play when.
    static func itemPreviews(_ scene: Scene, zone: TimeZone, from start: Date, to end: Date) -> [ItemPreview] {
        scene.pages.flatMap { page in
            page.widgets.flatMap(\.flattened).filter { $0.type == .video }.enumerated().compactMap { offset, widget -> ItemPreview? in
                guard case .video(let properties) = widget.content, properties.isScheduled else { return nil }
                let schedule = properties.playlistSchedule(timeZone: zone, unsynchronized: scene.unsynchronized)
                return ItemPreview(page: page.name, video: widget.id ?? "#\(offset + 1)", sources: properties.sources,
                                   changes: schedule.preview(from: start, to: end, limit: maximumChanges))
            }
        }
    }

    /// The page lines and the item lines by time; at the same instant, the page first.
    static func lines(pages: [PageSchedule.Showing], items: [ItemPreview]) -> [Line] {
        let all = pages.map(Line.page) + items.flatMap { preview in preview.changes.map { Line.items(preview, $0) } }
        return all.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
    }

    /// A file by its name; a URI as written.
    static func shortName(_ source: String) -> String {
        source.hasPrefix("/") ? URL(fileURLWithPath: source).lastPathComponent : source
    }

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
        for line in Self.lines(pages: shown, items: Self.itemPreviews(loaded.scene, zone: zone, from: start, to: end)) {
            switch line {
            case .page(let showing):
                if json {
                    let object: [String: Any] = ["start": formatter.string(from: showing.start), "unix": showing.start.timeIntervalSince1970, "page": showing.page]
                    print(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
                } else {
                    print("\(ScheduleTimeText.format(showing.start, in: zone))  \(showing.page)")
                }
            case .items(let preview, let eligibility):
                let sources = eligibility.items.map { preview.sources[$0] }
                if json {
                    let object: [String: Any] = [
                        "start": formatter.string(from: eligibility.start), "unix": eligibility.start.timeIntervalSince1970,
                        "page": preview.page, "video": preview.video, "items": sources, "item_indices": eligibility.items,
                    ]
                    print(String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
                } else {
                    let names = sources.isEmpty ? "no item (placeholder)" : sources.map(Self.shortName).joined(separator: ", ")
                    print("\(ScheduleTimeText.format(eligibility.start, in: zone))  \(preview.page) video \(preview.video): \(names)")
                }
            }
        }
        if shown.count == Self.maximumChanges {
            FileHandle.standardError.write(Data("kioskd schedule: stopped after \(Self.maximumChanges) changes; give a shorter range\n".utf8))
        }
    }
}
