// API CONTRACT — bodies to be implemented (see helper task). Signatures are fixed.

/// Readiness conditions of a file descriptor.
public struct IOEvents: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let readable = IOEvents(rawValue: 1 << 0)
    public static let writable = IOEvents(rawValue: 1 << 1)
    public static let hangup = IOEvents(rawValue: 1 << 2)
    public static let error = IOEvents(rawValue: 1 << 3)
}

/// When an observer runs (CFRunLoopActivity counterparts).
public struct LoopActivities: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Each iteration, just before the loop sleeps (kCFRunLoopBeforeWaiting).
    public static let beforeWaiting = LoopActivities(rawValue: 1 << 0)
    /// Once, when `run()` returns (kCFRunLoopExit).
    public static let exit = LoopActivities(rawValue: 1 << 1)
}

/// Observer orders; lower runs first. The commit observer is last, as YYTransaction's 0xFFFFFF is.
public enum ObserverOrder {
    public static let animations = 100
    public static let layout = 200
    public static let display = 300
    public static let commit = 0xFFFFFF
}

public final class SourceHandle { public func cancel() { fatalError() } }
public final class TimerHandle { public func cancel() { fatalError() } }
public final class ObserverHandle { public func cancel() { fatalError() } }
public final class Waker: Sendable { public func wake() { fatalError() } }

public final class MainLoop {
    public static func epoll() throws -> MainLoop { fatalError() }
    public var now: MonotonicInstant { fatalError() }
    @discardableResult
    public func addSource(fd: Int32, events: IOEvents, _ handler: @escaping (IOEvents) -> Void) throws -> SourceHandle { fatalError() }
    @discardableResult
    public func addTimer(after delay: Duration, repeating interval: Duration? = nil, _ handler: @escaping () -> Void) -> TimerHandle { fatalError() }
    @discardableResult
    public func addTimer(at deadline: MonotonicInstant, repeating interval: Duration? = nil, _ handler: @escaping () -> Void) -> TimerHandle { fatalError() }
    @discardableResult
    public func addObserver(order: Int, activities: LoopActivities, _ handler: @escaping (LoopActivities) -> Void) -> ObserverHandle { fatalError() }
    public func makeWaker(_ handler: @escaping () -> Void) throws -> Waker { fatalError() }
    public func onSignals(_ signals: [Int32], _ handler: @escaping (Int32) -> Void) throws { fatalError() }
    public func run() { fatalError() }
    public func runOnce(timeout: Duration? = nil) { fatalError() }
    public func stop() { fatalError() }
}
