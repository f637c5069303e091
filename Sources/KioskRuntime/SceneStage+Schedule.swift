import Foundation
import KioskCore
import KioskScene

/// Dayparting on screen: the timed loop shows only the pages the scene's `PageSchedule` allows at the turn; a page
/// with no duration changes when its window closes (at once, or when the transition running ends: a page change is
/// never cut mid-transition); a timed page whose window closes leaves at its next turn. The same `PageSchedule`
/// functions make `kioskd schedule`'s preview, so the preview is what the screen shows.
///
/// The wall clock can step (NTP at boot on a board without an RTC); the loop's timers run on CLOCK_MONOTONIC. So the
/// timer to the next change is armed from the wall clock just read and re-armed at least once a minute: after a
/// step either way the schedule follows within a minute, and at once when the clock becomes synchronized
/// (`clockSynchronized`). Main thread, with the stage.
extension SceneStage {
    /// The longest the schedule's timer waits before reading the wall clock again.
    static let scheduleRecheck: Duration = .seconds(60)

    static func date(_ time: WallTime) -> Date { Date(timeIntervalSince1970: Double(time.nanoseconds) / 1e9) }

    /// The wall clock now, as the schedule reads it.
    var scheduleNow: Date { Self.date(builder.wallClock()) }

    var pageSchedule: PageSchedule { scene.pageSchedule() }

    /// The page the timed loop goes to from the current page now; nil to stay.
    func pageAtTurn() -> String? {
        let schedule = pageSchedule
        guard schedule.isActive else {
            guard let index = scene.pages.firstIndex(where: { $0.name == currentPage }) else { return nil }
            return scene.pages[(index + 1) % scene.pages.count].name
        }
        return schedule.turn(from: currentPage, at: scheduleNow, synchronized: clockSynchronized)
    }

    /// Whether the current page leaves by itself (a duration, or `duration: video`).
    private var currentPageIsTimed: Bool {
        scene.pages.first { $0.name == currentPage }.map { $0.duration != nil || $0.advancesAfterVideo } ?? false
    }

    /// Applies the schedule to what is shown: an untimed page no longer allowed changes (`now`: any page does,
    /// for a clock just synchronized), after the transition running if there is one. Then re-arms the timer.
    func applySchedule(now: Bool) {
        let schedule = pageSchedule
        if schedule.isActive, now || !currentPageIsTimed || scheduleChangePending,
           let next = schedule.settle(currentPage, at: scheduleNow, synchronized: clockSynchronized) {
            if isInTransition {
                scheduleChangePending = true
            } else {
                scheduleChangePending = false
                try? showPage(next, transition: nil)
            }
        } else if !isInTransition {
            scheduleChangePending = false
        }
        armScheduleTimer()
    }

    /// Arms the timer to the schedule's next change (or the re-check, if sooner).
    func armScheduleTimer() {
        scheduleTimer?.cancel()
        scheduleTimer = nil
        let schedule = pageSchedule
        guard schedule.isActive else { return }
        let now = scheduleNow
        var wait = Self.scheduleRecheck
        if let next = schedule.nextChange(after: now) {
            let nanoseconds = Int64((next.timeIntervalSince(now) * 1e9).rounded(.up))
            wait = min(wait, .nanoseconds(max(nanoseconds, 1_000_000)))
        }
        scheduleTimer = engine.loop.addTimer(after: wait) { [weak self] in self?.applySchedule(now: false) }
    }
}
