/// The time a group of kiosks shares (a sync group's clock), as a stage in the group reads it: nanoseconds on the
/// group clock at an instant of this kiosk's monotonic clock, or nil while the group's time is not known (a member
/// joining). A stage with a timeline runs its page loop and tickers on it, so every member shows the same page and
/// ticker position at the same group time. Main thread.
public protocol GroupTimeline: AnyObject {
    func groupTime(at local: MonotonicInstant) -> Int64?
}
