/// Where a backend's flip completions get their rhythm from.
public enum FlipPacing: Equatable, Sendable, CustomStringConvertible {
    /// The driver's vblank: a flip completes at a real vblank and its event says which, so it is passed on as is.
    case vblank
    /// A timer at the mode's refresh: the driver completes flips at once, or has no flip events at all (fbdev).
    /// `reason` says why, for the log and `output.info`.
    case timer(reason: String)

    public var isTimer: Bool { if case .timer = self { true } else { false } }

    public var description: String {
        switch self {
        case .vblank: "vblank"
        case .timer(let reason): "timer (\(reason))"
        }
    }
}

/// Paces flip completions for drivers whose flips are not tied to a vblank.
///
/// Some drivers complete a page flip at once, as soon as the commit is done (virtio-gpu, SPI and USB panels:
/// the kernel's atomic helpers send a "fake" vblank event with sequence 0 and the current time), and fbdev has no
/// flip events at all. Passed on as they are, such completions let the engine present again at once, so an
/// animation would draw as fast as the CPU allows. Under `.timer` pacing the pacer holds each completion until the
/// next tick of a virtual vblank at the mode's refresh, `anchor + k * frameDuration`, at most one flip per tick, and
/// reports that tick's number and time as the flip's sequence and timestamp: the display link ticks at the
/// refresh rate, animations keep their speed, and a completion that takes longer than a frame shows as a sequence
/// gap, as a missed vblank does on hardware.
///
/// The rule for switching (`vblankMissing`) is a pure function of two consecutive events, and it must hold for
/// `evidenceNeeded` flips in a row: a driver without vblank breaks it at every flip, while a real vblank can break
/// it once, around a modeset (whose event the kernel may send at once with the current count). `forgetHeld`, which
/// a backend calls when a modeset replaced its pending flip, starts the comparison afresh. A backend may also choose
/// timer pacing from the start (`useTimer`), when it knows the driver has no vblank.
///
/// Lives on the main thread with its backend; a held completion waits in a loop timer.
public final class FlipPacer {
    public private(set) var pacing: FlipPacing
    public let frameDuration: Duration
    /// Completions delivered at their tick since start; with `.vblank` pacing always 0.
    public private(set) var flipsPaced = 0

    private var previousRaw: FlipEvent?
    /// Consecutive flips for which `vblankMissing` held.
    private var missingInARow = 0
    /// How many flips in a row must lack a vblank before the timer takes over.
    public static let evidenceNeeded = 3
    private var lastDelivered: FlipEvent?
    /// Tick 0 of the virtual vblank and the sequence it carries; set when timer pacing begins.
    private var anchor: (time: MonotonicInstant, sequence: UInt64)?
    private var lastTick: UInt64 = 0
    private var held: (event: FlipEvent, timer: TimerHandle, deliver: (FlipEvent) -> Void)?

    /// Starts on vblank pacing; a backend that knows better calls `useTimer` before its first flip.
    public init(frameDuration: Duration) {
        self.frameDuration = frameDuration
        pacing = .vblank
    }

    /// Why two consecutive flip events, as the driver reported them, cannot come from a vblank, or nil when they
    /// can. A real vblank counter advances between two flips (at most one is in flight, and each completes at a
    /// vblank), and a real vblank timestamp is never zero.
    public static func vblankMissing(previous: FlipEvent?, current: FlipEvent) -> String? {
        if current.timestamp.nanoseconds == 0 {
            return "the flip event has no vblank timestamp"
        }
        if let previous, current.sequence == previous.sequence {
            return "the vblank sequence did not advance between two flips (\(current.sequence))"
        }
        return nil
    }

    /// Switches to timer pacing from here on (a no-op when already on it). `now` is tick 0.
    public func useTimer(reason: String, now: MonotonicInstant) {
        guard !pacing.isTimer else { return }
        pacing = .timer(reason: reason)
        anchor = (now, lastDelivered?.sequence ?? 0)
        lastTick = 0
    }

    /// Whether a completion is held for its tick: the backend still counts its flip as pending.
    public var isHolding: Bool { held != nil }

    /// Takes a completion as the driver reported it (`raw.bufferIndex` is what went on screen). Under vblank pacing
    /// it is checked with `vblankMissing` and, when it came from a vblank, passed to `deliver` at once; otherwise
    /// the pacer switches to the timer and `deliver` runs from a loop timer at the next tick. Returns the reason
    /// when this completion switched pacing to the timer, so the backend can log it once.
    @discardableResult
    public func flipCompleted(_ raw: FlipEvent, on loop: MainLoop, deliver: @escaping (FlipEvent) -> Void) -> String? {
        var switched: String?
        if case .vblank = pacing {
            if let reason = Self.vblankMissing(previous: previousRaw, current: raw) {
                missingInARow += 1
                if missingInARow >= Self.evidenceNeeded {
                    useTimer(reason: reason, now: loop.now)
                    switched = reason
                }
            } else {
                missingInARow = 0
            }
        }
        previousRaw = raw
        guard case .timer = pacing, let anchor else {
            lastDelivered = raw
            deliver(raw)
            return nil
        }
        precondition(held == nil, "FlipPacer: a second completion while one is held")
        let now = loop.now
        let frame = UInt64(max(frameDuration.nanosecondsClamped, 1))
        let elapsed = now >= anchor.time ? now.nanoseconds - anchor.time.nanoseconds : 0
        // The first tick at or after now, and never the tick of the flip before.
        let tick = max((elapsed + frame - 1) / frame, lastTick + 1)
        lastTick = tick
        let time = MonotonicInstant(nanoseconds: anchor.time.nanoseconds + tick * frame)
        let paced = FlipEvent(sequence: anchor.sequence + tick, timestamp: time, bufferIndex: raw.bufferIndex)
        let timer = loop.addTimer(at: time) { [weak self] in self?.deliverHeld() }
        held = (paced, timer, deliver)
        return switched
    }

    /// Delivers a held completion now (at stop, or before the output goes dark), with its tick's sequence and
    /// time. Returns false when none was held.
    @discardableResult
    public func deliverHeldNow() -> Bool {
        guard let held else { return false }
        held.timer.cancel()
        deliverHeld()
        return true
    }

    /// Forgets a held completion without delivering it (the backend forgets its pending flip: a modeset replaced it).
    /// The next event is not compared with the ones before the modeset.
    public func forgetHeld() {
        held?.timer.cancel()
        held = nil
        previousRaw = nil
        missingInARow = 0
    }

    private func deliverHeld() {
        guard let held else { return }
        self.held = nil
        lastDelivered = held.event
        flipsPaced += 1
        held.deliver(held.event)
    }
}
