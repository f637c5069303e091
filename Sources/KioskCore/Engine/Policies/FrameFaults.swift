import Logging

private let logger = Logger(label: "kioskd.engine")

/// A fault on the frame path, as control-socket subscribers see it: an `error` event with this code and message.
/// A plain value.
public struct FrameFault: Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// A present failed; the message names the object and the errno.
        case presentFailed = "present_failed"
        /// DRM master was lost; presenting stops until it is regained.
        case masterLost = "master_lost"
        /// The device is gone; kioskd exits.
        case deviceGone = "device_gone"
        /// A flip did not complete in time.
        case flipTimeout = "flip_timeout"
        /// The screen has been one colour while the scene has visible content (`ScreenWatch`).
        case screenBlack = "screen_black"
        /// The screen has not changed across the changes the scene expected (`ScreenWatch`).
        case screenFrozen = "screen_frozen"
        /// The frame read back through the writeback connector differs from the composed one (`ScanoutComparison`).
        case scanoutMismatch = "scanout_mismatch"
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}

/// Why the frame path cannot go on (the device is gone, flips keep timing out, nothing is left to fall back to):
/// the engine has stopped presenting, and kioskd exits non-zero so the service manager restarts it.
public struct FatalFrameError: Error, Sendable, CustomStringConvertible {
    public let code: FrameFault.Code
    public let message: String

    public var description: String { message }
}

/// The engine's fault bookkeeping: why presents are held, the timers that end the hold, the flip deadline. A value
/// owned by one `LayerEngine`, on the main thread.
struct FrameFaultState {
    enum Hold {
        /// A present failed with EBUSY (or alike); the next one waits for the next vblank.
        case retry
        /// DRM master is lost; attempts to regain it run with backoff.
        case masterLost
        /// The output was handed over on purpose (`yieldOutput`); nothing is attempted until `takeOutputBack`.
        case yielded
        /// Every configuration of the output's mode size was refused; the output is being opened again in another
        /// mode (`onFallbackExhausted`), which attaches a new output and ends the hold.
        case reopening
        /// Nothing more is presented.
        case fatal(FatalFrameError)
    }

    var hold: Hold?
    /// Ends a retry hold, or makes the next attempt to regain master.
    var holdTimer: TimerHandle?
    var regainDelay = LayerEngine.regainBackoff.first
    /// When the pending flip was queued, and the timer that fires if it never completes.
    var flipPresentedAt: MonotonicInstant?
    var flipDeadline: TimerHandle?
    /// When the flip deadline's timer was due: a timer that fires much later than that says the loop itself was
    /// starved.
    var flipDeadlineDue: MonotonicInstant?
    /// The output's vblank counter when the pending flip was queued (where the backend has one).
    var flipPresentedVblank: UInt64?
    /// Flip timeouts without a completed flip in between.
    var consecutiveFlipTimeouts = 0

    var fatal: FatalFrameError? {
        if case .fatal(let error) = hold { return error }
        return nil
    }

    mutating func cancelTimers() {
        holdTimer?.cancel()
        holdTimer = nil
        flipDeadline?.cancel()
        flipDeadline = nil
    }
}

/// Fault policies of the present and flip paths (see `PresentFailure`, `FrameHealth`). Main thread.
extension LayerEngine {
    /// Attempts to regain DRM master start after `first` and back off to `max` between attempts, so a kiosk resumes
    /// within a second of master becoming free while costing nothing measurable meanwhile.
    static let regainBackoff = (first: Duration.milliseconds(50), max: Duration.milliseconds(500))
    /// Flip timeouts in a row, each followed by a modeset, before kioskd gives up and exits.
    public static let flipTimeoutLimit = 3
    /// Vblanks the driver must count after a present, with the flip still pending, before the flip counts as stuck.
    public static let flipTimeoutVblanks: UInt64 = 3
    /// How long a flip may stay pending while the driver's vblank counter itself stands still (a machine too starved
    /// to run its vblanks, or a vblank interrupt that died): after that it counts as stuck all the same.
    public static let flipTimeoutStalledVblanks = Duration.seconds(1)

    /// How long a flip may take: 3 refresh periods, at least 250 ms (a modeset blanks a real monitor for a second or
    /// more; a quarter of a second's freeze first costs less). On an output paced by a timer, 1 s: its flips
    /// complete when the driver's transfer does (an SPI panel, virtio-gpu), not at a vblank.
    public var flipTimeout: Duration {
        if backend?.flipPacing.isTimer == true { return .seconds(1) }
        return max(displayLink.frameDuration * 3, .milliseconds(250))
    }

    /// "Is the frame path healthy?" (see `FrameHealth`).
    public var health: FrameHealth {
        var waitingForMaster = false
        switch faults.hold {
        case .masterLost, .yielded: waitingForMaster = true
        default: break
        }
        let screen = screenProblem
        return FrameHealth.evaluate(now: loop.now, lastLoopWake: loop.lastWake, flipPendingSince: faults.flipPresentedAt,
                                    flipTimeout: flipTimeout, waitingForMaster: waitingForMaster,
                                    fatal: faults.fatal?.message,
                                    screen: screen.map { ($0.reason, screenWatch.settings.restartOn.contains($0.problem)) })
    }

    /// Whether a fault holds presents back (retry wait, master lost, fatal).
    var presentsHeldByFault: Bool { faults.hold != nil }

    /// A present went out: the flip must complete within `flipTimeout`.
    func armFlipDeadline() {
        faults.flipDeadline?.cancel()
        faults.flipPresentedAt = loop.now
        faults.flipPresentedVblank = backend?.flipPacing.isTimer == false ? backend?.vblankCounter : nil
        scheduleFlipDeadline()
    }

    private func scheduleFlipDeadline() {
        let due = loop.now + flipTimeout
        faults.flipDeadlineDue = due
        faults.flipDeadline = loop.addTimer(at: due) { [weak self] in self?.flipTimedOut() }
    }

    /// A flip completed: its deadline is off, and the timeouts in a row start again from zero.
    func disarmFlipDeadline() {
        faults.flipDeadline?.cancel()
        faults.flipDeadline = nil
        faults.flipPresentedAt = nil
        faults.consecutiveFlipTimeouts = 0
    }

    /// `present` threw; the buffer was given back. Applies the policy of the errno's class.
    func presentFailed(_ error: any Error) {
        guard let backend, let compositor else { return }
        let failure = PresentFailure(error)
        counters.presentFailures[failure.errnoName, default: 0] += 1
        // Master loss says so in its own line. A present the policy retries at the next vblank (EBUSY: the kernel
        // still holds a flip, as under emulation when a vblank comes late) is a warning: handled, counted in
        // `present_failures` and sent as an `error` event, it is no error for the journal to carry.
        switch failure.policy {
        case .regainMaster: break
        case .retryAtNextVblank: logger.warning("\(failure.message); retrying at the next vblank")
        default: logger.error("\(failure.message)")
        }
        switch failure.policy {
        case .retryAtNextVblank:
            counters.presentRetries += 1
            report(FrameFault(code: .presentFailed, message: "\(failure.message); retrying at the next vblank"))
            faults.hold = .retry
            faults.holdTimer = loop.addTimer(after: displayLink.frameDuration) { [weak self] in
                guard let self, case .retry = self.faults.hold else { return }
                self.faults.hold = nil
                self.faults.holdTimer = nil
            }
        case .regainMaster:
            masterLost(failure.message)
        case .exit:
            fail(FatalFrameError(code: .deviceGone, message: "\(failure.message): device \(backend.info.device) is gone"))
        case .fallBack:
            report(FrameFault(code: .presentFailed, message: failure.message))
            do {
                let chosen = try backend.fallBack(after: failure)
                // The compositor, the buffers and the scene are sized to the mode: a backend's fallback never
                // changes it. Another size is another output (below).
                guard backend.info.mode.size == compositor.size else {
                    fail(FatalFrameError(code: .presentFailed, message: "\(failure.message); the fallback (\(chosen)) changed the mode's size to \(backend.info.mode.size)"))
                    return
                }
                counters.configurationFallbacks += 1
                logger.warning("\(backend.info.connector): \(failure.errnoName) at commit; fell back to \(chosen)")
                redrawEverything()
            } catch {
                // Nothing of this size is left. A mode of another size needs new scanout buffers, a compositor and
                // a layout of that size: whoever attached the output opens it again in that mode, at the next turn.
                if onFallbackExhausted?(failure) == true {
                    counters.configurationFallbacks += 1
                    faults.cancelTimers()
                    faults.hold = .reopening
                    return
                }
                fail(FatalFrameError(code: .presentFailed, message: "\(failure.message); no fallback left: \(error)"))
            }
        }
    }

    /// The backend reported its device gone (a hang-up on its fd).
    func deviceLost(_ error: OutputError) {
        counters.presentFailures[error.errno.map(errnoName) ?? "EPOLLHUP", default: 0] += 1
        fail(FatalFrameError(code: .deviceGone, message: "\(error.message): the device is gone"))
    }

    /// Stops presenting and keeps every other state; tries to take the output back with backoff. Also the way in for
    /// a deliberate hand-over (`yieldOutput`).
    func masterLost(_ message: String) {
        if case .masterLost = faults.hold { return }
        guard faults.fatal == nil else { return }
        counters.masterLost += 1
        logger.error("\(message): DRM master lost; presenting stops until it is regained")
        report(FrameFault(code: .masterLost, message: message))
        faults.cancelTimers()
        faults.flipPresentedAt = nil
        faults.hold = .masterLost
        faults.regainDelay = Self.regainBackoff.first
        scheduleRegain()
    }

    /// Hands the output over on purpose (e.g. on SIGUSR1, before dropping DRM master): presenting stops, all other
    /// state is kept, and nothing tries to take the output back until `takeOutputBack`.
    public func yieldOutput() {
        guard faults.fatal == nil, let backend else { return }
        faults.cancelTimers()
        faults.flipPresentedAt = nil
        faults.hold = .yielded
        logger.notice("\(backend.info.connector): display handed over; presenting stops until it is taken back")
    }

    /// Takes the output back after `yieldOutput` (e.g. on SIGUSR2): DRM master is regained with backoff (at once
    /// when it is free), then the mode is set again and the whole screen redrawn.
    public func takeOutputBack() {
        guard case .yielded = faults.hold else { return }
        faults.hold = .masterLost
        faults.regainDelay = Self.regainBackoff.first
        attemptRegain()
    }

    /// The next attempt after the current delay; the one after it waits twice as long, up to the maximum.
    private func scheduleRegain() {
        faults.holdTimer = loop.addTimer(after: faults.regainDelay) { [weak self] in self?.attemptRegain() }
        faults.regainDelay = min(faults.regainDelay * 2, Self.regainBackoff.max)
    }

    private func attemptRegain() {
        faults.holdTimer = nil
        guard case .masterLost = faults.hold, let backend else { return }
        do {
            try backend.reacquire()
        } catch {
            // Expected while another process holds master: said once at error when lost, not at every attempt.
            logger.debug("\(error)")
            scheduleRegain()
            return
        }
        faults.hold = nil
        logger.notice("\(backend.info.connector): display regained (DRM master where there is one); mode set again, redrawing the whole screen")
        redrawEverything()
        waker.wake()
    }

    private func flipTimedOut() {
        faults.flipDeadline = nil
        guard let backend, let presentedAt = faults.flipPresentedAt else { return }
        // The event may be waiting already: a loop that woke late runs its timers before it reads the device.
        backend.readPendingEvents()
        guard faults.flipPresentedAt != nil, backend.isFlipPending else { return }
        // A flip is given more time, up to `flipTimeoutStalledVblanks` after its present, when the machine runs late
        // as a whole (a loaded VM, a starved board) rather than the flip being stuck. Two signs say so: this timer
        // fired late by more than a refresh period (the loop was not run on time, and neither, likely, was the
        // driver's commit worker), or the driver counted fewer than 3 vblanks since the present. A flip still
        // pending after that is stuck, and so is one whose vblanks stopped altogether.
        let pending = loop.now - presentedAt
        let late = faults.flipDeadlineDue.map { loop.now - $0 } ?? .zero
        let starved = late > max(displayLink.frameDuration, .milliseconds(20))
        var slowVblanks = false
        if let start = faults.flipPresentedVblank, let now = backend.vblankCounter, now >= start {
            slowVblanks = now - start < Self.flipTimeoutVblanks
        }
        if (starved || slowVblanks), pending < Self.flipTimeoutStalledVblanks {
            logger.debug("\(backend.info.connector): flip pending \(Int(pending.milliseconds)) ms\(starved ? ", the deadline fired \(Int(late.milliseconds)) ms late" : "")\(slowVblanks ? ", fewer than \(Self.flipTimeoutVblanks) vblanks counted" : ""); waiting longer")
            counters.flipDeadlinesExtended += 1
            scheduleFlipDeadline()
            return
        }
        faults.flipPresentedAt = nil
        faults.flipPresentedVblank = nil
        counters.flipTimeouts += 1
        faults.consecutiveFlipTimeouts += 1
        let message = "\(backend.info.connector): flip not completed within \(Int(pending.milliseconds)) ms"
        logger.error("\(message) (\(faults.consecutiveFlipTimeouts) in a row); setting the mode again")
        report(FrameFault(code: .flipTimeout, message: message))
        guard faults.consecutiveFlipTimeouts < Self.flipTimeoutLimit else {
            fail(FatalFrameError(code: .flipTimeout, message: "\(message), \(faults.consecutiveFlipTimeouts) times in a row; giving up"))
            return
        }
        do {
            try backend.reacquire()
        } catch {
            // Not being able to set the mode is most often another master (SET_MASTER answers EBUSY then): wait
            // for it like for a lost master. A device that is gone is fatal.
            let failure = PresentFailure(error)
            if failure.policy == .exit {
                fail(FatalFrameError(code: .deviceGone, message: "\(message); setting the mode again failed: \(failure.message): device \(backend.info.device) is gone"))
            } else {
                masterLost(failure.message)
            }
            return
        }
        redrawEverything()
        waker.wake()
    }

    /// Stops presenting for good and hands the reason to the fatal listeners (kioskd exits non-zero).
    func fail(_ error: FatalFrameError) {
        guard faults.fatal == nil else { return }
        logger.critical("\(error.message); the frame path stops")
        faults.cancelTimers()
        faults.hold = .fatal(error)
        report(FrameFault(code: error.code, message: error.message))
        fatalListeners.emit(error)
    }

    private func report(_ fault: FrameFault) {
        faultListeners.emit(fault)
    }
}
