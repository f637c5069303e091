#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The production poller: one epoll set (level-triggered) holding the loop's descriptors, one timerfd armed
/// for the earliest deadline, one eventfd that other threads write to wake the loop, and, once signals are
/// watched, one signalfd. The three descriptors of its own are never reported as `PollEvent`s: they come back as
/// the deadline passing, `PollResult.woken` and `PollResult.signals`.
///
/// Lives on the main thread (the loop's thread); only `wakeup` is used from other threads.
public final class EpollPoller: Poller {
    private let calls: LinuxEventCalls
    private let epollFD: Int32
    private let timerFD: Int32
    private let eventFD: EventFDWakeup
    private var signalFD: Int32?
    private var watchedSignals = sigset_t()

    /// What the timerfd is armed for; `nil` while disarmed or after it expired. Lets an unchanged deadline skip
    /// the `timerfd_settime` call, which an iteration would otherwise pay every time.
    private var armedDeadline: MonotonicInstant?

    /// Raw `struct epoll_event` array for `epoll_wait`; grows when an iteration fills it.
    private var eventBuffer: UnsafeMutableRawPointer
    private var eventCapacity = EpollPoller.initialEventCapacity
    private static let initialEventCapacity = 64
    private static let maximumEventCapacity = 1024

    public var wakeup: any PollerWakeup { eventFD }

    public var now: MonotonicInstant { MonotonicInstant.now() }

    public init() throws {
        let calls = try LinuxEventCalls.shared.get()
        let epollFD = calls.epollCreate1(EpollConstant.closeOnExec)
        guard epollFD >= 0 else { throw LoopError(operation: "epoll_create1", object: "", errno: errno) }

        let flags = EventFDConstant.closeOnExec | EventFDConstant.nonBlocking
        let timerFD = calls.timerfdCreate(CLOCK_MONOTONIC, flags)
        guard timerFD >= 0 else {
            let error = LoopError(operation: "timerfd_create", object: "CLOCK_MONOTONIC", errno: errno)
            close(epollFD)
            throw error
        }
        let eventFD = calls.eventfd(0, flags)
        guard eventFD >= 0 else {
            let error = LoopError(operation: "eventfd", object: "", errno: errno)
            close(timerFD)
            close(epollFD)
            throw error
        }

        self.calls = calls
        self.epollFD = epollFD
        self.timerFD = timerFD
        self.eventFD = EventFDWakeup(fd: eventFD)
        self.eventBuffer = .allocate(byteCount: Self.initialEventCapacity * EpollConstant.eventSize, alignment: 8)
        // From here deinit closes everything, so a failed registration needs no cleanup of its own.
        try control(EpollConstant.controlAdd, "ADD", fd: timerFD, events: .readable)
        try control(EpollConstant.controlAdd, "ADD", fd: eventFD, events: .readable)
    }

    deinit {
        if let signalFD { close(signalFD) }
        close(timerFD)
        close(epollFD)
        eventBuffer.deallocate()
        // The eventfd closes with the last Waker that still holds it. Blocked signals stay blocked: unblocking
        // one that is pending would run its default action, which for SIGTERM is to exit.
    }

    public func register(fd: Int32, events: IOEvents) throws {
        try control(EpollConstant.controlAdd, "ADD", fd: fd, events: events)
    }

    public func modify(fd: Int32, events: IOEvents) throws {
        try control(EpollConstant.controlModify, "MOD", fd: fd, events: events)
    }

    public func unregister(fd: Int32) throws {
        try control(EpollConstant.controlDelete, "DEL", fd: fd, events: [])
    }

    private func control(_ operation: Int32, _ name: String, fd: Int32, events: IOEvents) throws(LoopError) {
        var bits: UInt32 = 0
        if events.contains(.readable) { bits |= EpollConstant.readable }
        if events.contains(.writable) { bits |= EpollConstant.writable }
        // The fd itself is the epoll data, so a ready event names its descriptor without a lookup table here.
        let status = withUnsafeTemporaryAllocation(byteCount: EpollConstant.eventSize, alignment: 8) { event in
            let raw = event.baseAddress!
            raw.initializeMemory(as: UInt8.self, repeating: 0, count: EpollConstant.eventSize)
            raw.storeBytes(of: bits, toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: UInt64(UInt32(bitPattern: fd)), toByteOffset: EpollConstant.dataOffset, as: UInt64.self)
            return calls.epollCtl(epollFD, operation, fd, raw)
        }
        guard status == 0 else { throw LoopError(operation: "epoll_ctl(\(name))", object: "fd \(fd)", errno: errno) }
    }

    /// Blocks `signals` in the calling thread and reads them through one signalfd.
    ///
    /// `pthread_sigmask` changes only the calling thread's mask, and threads inherit the mask of the thread
    /// that creates them: call this on the loop thread before any other thread starts, or a process-directed
    /// signal may go to a thread that does not block it and take its default action there.
    public func watchSignals(_ signals: [Int32]) throws {
        var mask = watchedSignals
        for signal in signals {
            // SIGKILL and SIGSTOP cannot be blocked or read; sigaddset itself rejects numbers out of range and
            // the signals glibc keeps for its own threads.
            guard signal != SIGKILL, signal != SIGSTOP, sigaddset(&mask, signal) == 0 else {
                throw LoopError(operation: "watchSignals", object: "signal \(signal)", errno: EINVAL)
            }
        }
        let names = "signals \(signals.map(String.init).joined(separator: ","))"
        // Block before the signalfd exists: a signal in between would otherwise take its default action.
        let status = pthread_sigmask(SIG_BLOCK, &mask, nil)
        guard status == 0 else { throw LoopError(operation: "pthread_sigmask(SIG_BLOCK)", object: names, errno: status) }

        // Passing the existing signalfd replaces its mask, so all watched signals share one descriptor.
        let fd = calls.signalfd(signalFD ?? -1, &mask, EventFDConstant.closeOnExec | EventFDConstant.nonBlocking)
        guard fd >= 0 else { throw LoopError(operation: "signalfd", object: names, errno: errno) }
        if signalFD == nil {
            do {
                try control(EpollConstant.controlAdd, "ADD", fd: fd, events: .readable)
            } catch {
                close(fd)
                throw error
            }
            signalFD = fd
        }
        watchedSignals = mask
    }

    public func wait(until deadline: MonotonicInstant?) -> PollResult {
        var timeoutMilliseconds: Int32 = -1
        if let deadline, deadline <= now {
            timeoutMilliseconds = 0
        } else {
            // The deadline goes to the timerfd, not to epoll_wait's millisecond timeout: rounding that down
            // would wake the loop early and make it spin until the deadline; rounding up would be up to 1 ms late.
            armTimer(for: deadline)
        }

        var count: Int32
        repeat {
            count = calls.epollWait(epollFD, eventBuffer, Int32(eventCapacity), timeoutMilliseconds)
        } while count < 0 && errno == EINTR
        // EBADF, EFAULT and EINVAL are the only other failures, and each is a bug here, not a runtime condition.
        precondition(count >= 0, "\(LoopError(operation: "epoll_wait", object: "epoll fd \(epollFD)", errno: errno))")

        var result = PollResult()
        for index in 0..<Int(count) {
            let event = eventBuffer + index * EpollConstant.eventSize
            let bits = event.loadUnaligned(as: UInt32.self)
            let fd = Int32(truncatingIfNeeded: event.loadUnaligned(fromByteOffset: EpollConstant.dataOffset, as: UInt64.self))
            if fd == timerFD {
                var expirations: UInt64 = 0
                _ = read(timerFD, &expirations, MemoryLayout<UInt64>.size)
                armedDeadline = nil
            } else if fd == eventFD.fd {
                eventFD.drain()
                result.woken = true
            } else if fd == signalFD {
                result.signals += readSignals(from: fd)
            } else {
                result.events.append(PollEvent(fd: fd, events: IOEvents(epollBits: bits)))
            }
        }

        // A full buffer means more may be ready; they stay ready (level-triggered) and come next time, but a
        // bigger buffer lets them come together.
        if Int(count) == eventCapacity && eventCapacity < Self.maximumEventCapacity {
            eventBuffer.deallocate()
            eventCapacity *= 2
            eventBuffer = .allocate(byteCount: eventCapacity * EpollConstant.eventSize, alignment: 8)
        }
        return result
    }

    private func armTimer(for deadline: MonotonicInstant?) {
        guard deadline != armedDeadline else { return }
        // A zero it_value disarms the timer. A deadline is never zero: it lies after `now`.
        var spec = itimerspec()
        if let deadline {
            spec.it_value.tv_sec = Int(deadline.nanoseconds / 1_000_000_000)
            spec.it_value.tv_nsec = Int(deadline.nanoseconds % 1_000_000_000)
        }
        let status = calls.timerfdSettime(timerFD, EventFDConstant.timerAbsolute, &spec, nil)
        precondition(status == 0, "\(LoopError(operation: "timerfd_settime", object: "timerfd \(timerFD)", errno: errno))")
        armedDeadline = deadline
    }

    private func readSignals(from fd: Int32) -> [Int32] {
        var signals: [Int32] = []
        let batch = 8
        withUnsafeTemporaryAllocation(byteCount: batch * EventFDConstant.signalInfoSize, alignment: 8) { buffer in
            let raw = buffer.baseAddress!
            while true {
                let length = read(fd, raw, buffer.count)
                if length < 0 && errno == EINTR { continue }
                // EAGAIN: drained. Nothing else can fail on a valid non-blocking signalfd.
                guard length > 0 else { return }
                for offset in stride(from: 0, to: length, by: EventFDConstant.signalInfoSize) {
                    signals.append(Int32(bitPattern: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                }
                if length < buffer.count { return }
            }
        }
        return signals
    }
}

/// The eventfd behind every `Waker` of an epoll loop. `wake()` runs on any thread; `drain()` on the loop thread.
///
/// Writes are coalesced: while a wake is pending (written, not yet drained) another wake does not write.
final class EventFDWakeup: PollerWakeup {
    let fd: Int32
    private let pending = Atomic<Bool>(false)

    init(fd: Int32) { self.fd = fd }

    deinit { close(fd) }

    func wake() {
        guard !pending.exchange(true, ordering: .sequentiallyConsistent) else { return }
        var one: UInt64 = 1
        while true {
            let written = write(fd, &one, MemoryLayout<UInt64>.size)
            if written == MemoryLayout<UInt64>.size { return }
            if written < 0 && errno == EINTR { continue }
            // EAGAIN means the counter is at its maximum: the loop is certain to wake anyway.
            if written < 0 && errno == EAGAIN { return }
            preconditionFailure("\(LoopError(operation: "write", object: "eventfd \(fd)", errno: errno))")
        }
    }

    /// Consumes the pending wake. Reads first and clears the flag after: clearing first would let a wake in
    /// between write, be drained by this read, and leave the flag set with nothing written, so every later
    /// wake would be skipped. Callers look at what the wakers want only after this returns.
    func drain() {
        var value: UInt64 = 0
        _ = read(fd, &value, MemoryLayout<UInt64>.size)
        _ = pending.exchange(false, ordering: .sequentiallyConsistent)
    }
}

extension IOEvents {
    /// The readiness in an `epoll_event.events` mask.
    init(epollBits bits: UInt32) {
        self = []
        if bits & EpollConstant.readable != 0 { insert(.readable) }
        if bits & EpollConstant.writable != 0 { insert(.writable) }
        if bits & EpollConstant.hangup != 0 { insert(.hangup) }
        if bits & EpollConstant.error != 0 { insert(.error) }
    }
}
