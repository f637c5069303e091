import KioskCore
import KioskScene

/// A scene's page loop on a group's clock: the pages, each for its `duration`, one after another from the group
/// clock's zero, so that at any group time every member of a sync group is on the same page, the same way into
/// it. Only a loop every page of which is timed in seconds, with no dayparting (`when:`), runs this way; a page
/// that waits for its video, or a schedule, keeps the stage's own turns. A plain value.
struct GroupPageLoop: Sendable, Equatable {
    /// Each page's name and where it starts in the loop, in nanoseconds; `length` is the whole loop's.
    let starts: [(page: String, at: Int64)]
    let length: Int64

    init?(scene: Scene, schedule: PageSchedule) {
        guard scene.pages.count > 1, !schedule.isActive else { return nil }
        var starts: [(String, Int64)] = []
        var at: Int64 = 0
        for page in scene.pages {
            guard let seconds = page.duration, seconds > 0, !page.advancesAfterVideo else { return nil }
            starts.append((page.name, at))
            at += Int64((seconds * 1e9).rounded())
        }
        self.starts = starts
        length = at
    }

    static func == (a: GroupPageLoop, b: GroupPageLoop) -> Bool {
        a.length == b.length && a.starts.elementsEqual(b.starts) { $0.page == $1.page && $0.at == $1.at }
    }

    /// The group time of `page`'s most recent turn at or before `time`; nil for a page not in the loop.
    func lastStart(of page: String, atOrBefore time: Int64) -> Int64? {
        guard let start = starts.first(where: { $0.page == page })?.at else { return nil }
        let loopStart = time - ((time % length) + length) % length
        return loopStart + start <= time ? loopStart + start : loopStart + start - length
    }

    /// The page at group time `time`, and the nanoseconds until the next page's turn.
    func position(at time: Int64) -> (page: String, untilNext: Int64) {
        let inLoop = ((time % length) + length) % length
        let index = starts.lastIndex { $0.at <= inLoop } ?? 0
        let end = index + 1 < starts.count ? starts[index + 1].at : length
        return (starts[index].page, end - inLoop)
    }
}
