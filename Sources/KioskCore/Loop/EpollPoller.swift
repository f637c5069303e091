#if canImport(Glibc)
import Glibc
#endif
// Internal, so no C type can leak into KioskCore's public API.
internal import CKioskSys
import Synchronization

/// The production poller: one epoll set (level-triggered) holding the loop's descriptors, one timerfd armed
/// for the earliest deadline, one eventfd that other threads write to wake the loop, and, once signals are
/// watched, one signalfd. The three descriptors of its own are never reported as `PollEvent`s: they come back as
/// the deadline passing, `PollResult.woken` and `PollResult.signals`.
///
/// Lives on the main thread (the loop's thread); only `wakeup` is used from other threads.
public final class EpollPoller: Poller {
    private let epollFD: Int32
    private let timerFD: Int32
    private let eventFD: EventFDWakeup
    private var signalFD: Int32?
    private var watchedSignals = sigset_t()

    /// What the timerfd is armed for; `nil` while disarmed or after it expired. Lets an unchanged deadline skip
    /// the `timerfd_settime` call, which an iteration would otherwise pay every time.
    private var armedDeadline: MonotonicInstant?

    /// The `struct epoll_event` array for `epoll_wait`; grows when an iteration fills it.
    private var eventBuffer: UnsafeMutablePointer<epoll_event>
    private var eventCapacity = EpollPoller.initialEventCapacity
    private static let initialEventCapacity = 64
    private static let maximumEventCapacity = 1024

    public var wakeup: any PollerWakeup { eventFD }

    public var now: MonotonicInstant { MonotonicInstant.now() }

    public init() throws {
        let epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epollFD >= 0 else { throw LoopError(operation: "epoll_create1", object: "", errno: errno) }

        let timerFD = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        guard timerFD >= 0 else {
            let error = LoopError(operation: "timerfd_create", object: "CLOCK_MONOTONIC", errno: errno)
            close(epollFD)
            throw error
        }
        let eventFD = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard eventFD >= 0 else {
            let error = LoopError(operation: "eventfd", object: "", errno: errno)
            close(timerFD)
            close(epollFD)
            throw error
        }

        self.epollFD = epollFD
        self.timerFD = timerFD
        self.eventFD = EventFDWakeup(fd: eventFD)
        self.eventBuffer = .allocate(capacity: Self.initialEventCapacity)
        // From here deinit closes everything, so a failed registration needs no cleanup of its own.
        try control(EPOLL_CTL_ADD, "ADD", fd: timerFD, events: .readable)
        try control(EPOLL_CTL_ADD, "ADD", fd: eventFD, events: .readable)
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
        try control(EPOLL_CTL_ADD, "ADD", fd: fd, events: events)
    }

    public func modify(fd: Int32, events: IOEvents) throws {
        try control(EPOLL_CTL_MOD, "MOD", fd: fd, events: events)
    }

    public func unregister(fd: Int32) throws {
        try control(EPOLL_CTL_DEL, "DEL", fd: fd, events: [])
    }

    private func control(_ operation: Int32, _ name: String, fd: Int32, events: IOEvents) throws(LoopError) {
        var event = epoll_event()
        if events.contains(.readable) { event.events |= EPOLLIN.rawValue }
        if events.contains(.writable) { event.events |= EPOLLOUT.rawValue }
        // The fd itself is the epoll data, so a ready event names its descriptor without a lookup table here.
        event.data.fd = fd
        let status = epoll_ctl(epollFD, operation, fd, &event)
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
        let fd = signalfd(signalFD ?? -1, &mask, Int32(SFD_CLOEXEC | SFD_NONBLOCK))
        guard fd >= 0 else { throw LoopError(operation: "signalfd", object: names, errno: errno) }
        if signalFD == nil {
            do {
                try control(EPOLL_CTL_ADD, "ADD", fd: fd, events: .readable)
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
            count = epoll_wait(epollFD, eventBuffer, Int32(eventCapacity), timeoutMilliseconds)
        } while count < 0 && errno == EINTR
        // EBADF, EFAULT and EINVAL are the only other failures, and each is a bug here, not a runtime condition.
        precondition(count >= 0, "\(LoopError(operation: "epoll_wait", object: "epoll fd \(epollFD)", errno: errno))")

        var result = PollResult()
        for index in 0..<Int(count) {
            let event = eventBuffer[index]
            let fd = event.data.fd
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
                result.events.append(PollEvent(fd: fd, events: IOEvents(epollBits: event.events)))
            }
        }

        // A full buffer means more may be ready; they stay ready (level-triggered) and come next time, but a
        // bigger buffer lets them come together.
        if Int(count) == eventCapacity && eventCapacity < Self.maximumEventCapacity {
            eventBuffer.deallocate()
            eventCapacity *= 2
            eventBuffer = .allocate(capacity: eventCapacity)
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
        let status = timerfd_settime(timerFD, Int32(TFD_TIMER_ABSTIME), &spec, nil)
        precondition(status == 0, "\(LoopError(operation: "timerfd_settime", object: "timerfd \(timerFD)", errno: errno))")
        armedDeadline = deadline
    }

    private func readSignals(from fd: Int32) -> [Int32] {
        var signals: [Int32] = []
        let infoSize = MemoryLayout<signalfd_siginfo>.stride
        withUnsafeTemporaryAllocation(of: signalfd_siginfo.self, capacity: 8) { buffer in
            let byteCount = buffer.count * infoSize
            while true {
                let length = read(fd, buffer.baseAddress, byteCount)
                if length < 0 && errno == EINTR { continue }
                // EAGAIN: drained. Nothing else can fail on a valid non-blocking signalfd.
                guard length > 0 else { return }
                // The kernel writes whole records only.
                for info in buffer[..<(length / infoSize)] {
                    signals.append(Int32(bitPattern: info.ssi_signo))
                }
                if length < byteCount { return }
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
        if bits & EPOLLIN.rawValue != 0 { insert(.readable) }
        if bits & EPOLLOUT.rawValue != 0 { insert(.writable) }
        // EPOLLHUP and EPOLLERR are reported whether asked for or not.
        if bits & EPOLLHUP.rawValue != 0 { insert(.hangup) }
        if bits & EPOLLERR.rawValue != 0 { insert(.error) }
    }
}
