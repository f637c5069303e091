/// Identifies one animation added to an `Animator`. A plain value.
public struct AnimationID: Hashable, Sendable {
    let value: UInt64
}

/// Runs pop-style animations of object properties: basic (easing), spring and decay, stepped by display time and
/// written through `AnimatableProperty.write`.
///
/// One animation per (target, key): a new one for a running (target, key) replaces it, starting from the property's
/// current value, and a spring or decay whose velocity is nil takes over the replaced animation's current velocity,
/// so a flick interrupted by a spring back continues without a jump in position or speed. The replaced animation's
/// completion gets `false`.
///
/// Time: an animation's clock starts at the first `step` after it was added, and the value written at that step is
/// its start value; or, given `startingAt`, at that instant: a step before it writes the start value, and the first
/// step after it writes the motion as it is by then (an animation whose start has passed catches up at once, which
/// is how the members of a sync group that hear of it late show it where the others do). Attached to a `LayerEngine`, the animator steps on each display-link tick with
/// `DisplayTick.nextVblank`, the vblank at which the frame being prepared will be on screen, rather than the
/// timestamp of the flip that was just shown: values are computed for the moment they are seen, and a frame that
/// misses a vblank shows the motion where it should be by then instead of lagging behind.
///
/// Targets are held weakly: a freed target's animations are dropped at the next step (completion `false`). While
/// it has animations the animator is a display-link target of its engine; once idle it deregisters, so an idle
/// kiosk has no flips and no wake-ups on its behalf.
///
/// Lives on the main thread, like the layers it animates; not Sendable.
public final class Animator {
    /// Called when the first animation is added to an idle animator.
    public var onActive: (() -> Void)?
    /// Called when the last animation has ended, been stopped or dropped, after its completion ran.
    public var onIdle: (() -> Void)?

    /// The engine whose display link steps the animator, if attached.
    public private(set) weak var engine: LayerEngine?

    private var animations: [RunningAnimation] = []
    private var lastID: UInt64 = 0
    private var registration: LayerEngine.AnimationToken?
    private var isActive = false
    /// Set while `step` writes values and runs completions: activity changes are settled once at the end.
    private var isStepping = false

    public init() {}

    /// An animator stepped by `engine`'s display link.
    public convenience init(engine: LayerEngine) {
        self.init()
        attach(to: engine)
    }

    /// Leaves the engine's display link. Completions of animations still running are not called.
    deinit {
        if let registration { engine?.removeAnimation(registration) }
    }

    /// Steps on `engine`'s display-link ticks from now on, registering with it only while there are animations.
    /// An animator added while idle needs no extra wake-up: the engine presents unchanged frames while its display
    /// link has targets, and the flips they cause bring the ticks.
    public func attach(to engine: LayerEngine) {
        if let registration, let old = self.engine { old.removeAnimation(registration) }
        registration = nil
        self.engine = engine
        updateActivity()
    }

    // MARK: Adding

    /// Animates `property` of `target` to `value` along a basic or spring curve.
    ///
    /// - Parameters:
    ///   - key: identifies the animation on this target; the property's name by default. An animation already
    ///     running for the same target and key is replaced (see the type's description).
    ///   - completion: called once: `true` after the end value was written, `false` when the animation is
    ///     replaced, stopped, or its target freed.
    /// - Throws: `AnimationError` when `value` does not have the property's component count or is not finite, the
    ///   curve's parameters are out of range, the curve is a decay (it takes no end value), or the property reads
    ///   the wrong number of components. Nothing changes then.
    @discardableResult
    public func animate<Target: AnyObject>(_ target: Target, _ property: AnimatableProperty<Target>, to value: [Double],
                                           curve: AnimationCurve, key: String? = nil, startingAt start: MonotonicInstant? = nil,
                                           completion: ((_ finished: Bool) -> Void)? = nil) throws -> AnimationID {
        if case .decay = curve { throw AnimationError.endValue("a decay ends where it stops and takes no end value") }
        guard value.count == property.componentCount else {
            throw AnimationError.componentCount(what: "end value", expected: property.componentCount, got: value.count)
        }
        guard value.allSatisfy(\.isFinite) else { throw AnimationError.nonFiniteValue(value) }
        return try add(target, property, end: value, curve: curve, key: key, start: start, completion: completion)
    }

    /// Starts a decay of `property` of `target`: `curve` must be `.decay`, which ends where it stops.
    ///
    /// - Throws: `AnimationError` as `animate(_:_:to:curve:key:completion:)` does, and when `curve` is not a decay.
    @discardableResult
    public func animate<Target: AnyObject>(_ target: Target, _ property: AnimatableProperty<Target>, curve: AnimationCurve,
                                           key: String? = nil, startingAt start: MonotonicInstant? = nil,
                                           completion: ((_ finished: Bool) -> Void)? = nil) throws -> AnimationID {
        guard case .decay = curve else { throw AnimationError.endValue("a basic or spring animation needs an end value") }
        return try add(target, property, end: nil, curve: curve, key: key, start: start, completion: completion)
    }

    private func add<Target: AnyObject>(_ target: Target, _ property: AnimatableProperty<Target>, end: [Double]?,
                                        curve: AnimationCurve, key: String?, start: MonotonicInstant?,
                                        completion: ((Bool) -> Void)?) throws -> AnimationID {
        let count = property.componentCount
        if let error = curve.validationError(componentCount: count) { throw error }
        let current = property.read(target)
        guard current.count == count else {
            throw AnimationError.componentCount(what: "\(property.name) as read", expected: count, got: current.count)
        }
        guard current.allSatisfy(\.isFinite) else { throw AnimationError.nonFiniteValue(current) }

        let key = key ?? property.name
        let slot = ObjectIdentifier(target)
        var replaced: RunningAnimation?
        if let index = animations.firstIndex(where: { $0.slot == slot && $0.key == key }) {
            replaced = animations.remove(at: index)
        }
        // An identifier can outlive its object and be reused by a new one at the same address: only a live match
        // hands over its velocity.
        let handedOver = replaced.flatMap { $0.target === target ? $0.currentVelocity : nil }
        let inherited = handedOver.flatMap { $0.count == count ? $0 : nil } ?? Array(repeating: 0, count: count)

        let motion: Motion
        switch curve {
        case .basic(let duration, let timing):
            motion = .basic(from: current, to: end ?? current, duration: duration, timing: timing)
        case .spring(let stiffness, let damping, let mass, let velocity, let threshold):
            let velocity = velocity ?? inherited
            let springs = (0..<count).map { i in
                SpringMotion(stiffness: stiffness, damping: damping, mass: mass, from: current[i], to: end?[i] ?? current[i],
                             velocity: velocity[i])
            }
            motion = .spring(springs, threshold: threshold)
        case .decay(let velocity, let deceleration, let threshold):
            let velocity = velocity ?? inherited
            let decays = (0..<count).map { i in DecayMotion(from: current[i], velocity: velocity[i], deceleration: deceleration) }
            motion = .decay(decays, threshold: threshold)
        }

        lastID += 1
        let id = AnimationID(value: lastID)
        let write = property.write
        let running = RunningAnimation(
            id: id, key: key, target: target, motion: motion, completion: completion,
            write: { object, value in
                guard let target = object as? Target else { return }
                write(target, value)
            })
        running.start = start
        animations.append(running)
        // The new animation is in place first, so the old completion sees the property still animating.
        replaced?.completion?(false)
        updateActivity()
        return id
    }

    // MARK: Stepping

    /// Advances every animation to `now`: writes each one's value, or for one that is done its exact end value,
    /// then removes it and calls its completion with `true`. Animations of freed targets are dropped (completion
    /// `false`). Completions run after all values of this step are written.
    public func step(to now: MonotonicInstant) {
        let wasStepping = isStepping
        isStepping = true
        var ended: [(RunningAnimation, finished: Bool)] = []
        for animation in animations where !animation.hasEnded {
            guard let target = animation.target else {
                animation.hasEnded = true
                ended.append((animation, false))
                continue
            }
            let elapsed: Double
            if let start = animation.start {
                elapsed = max(0, Double((now - start).nanosecondsClamped) / 1e9)
            } else {
                animation.start = now
                elapsed = 0
            }
            animation.elapsed = elapsed
            if animation.motion.isFinished(at: elapsed) {
                animation.write(target, animation.motion.endValue)
                animation.hasEnded = true
                ended.append((animation, true))
            } else {
                animation.write(target, animation.motion.values(at: elapsed))
            }
        }
        animations.removeAll { $0.hasEnded }
        for (animation, finished) in ended { animation.completion?(finished) }
        isStepping = wasStepping
        updateActivity()
    }

    private func tick(_ tick: DisplayTick) -> Bool {
        step(to: tick.nextVblank)
        // Idle: `updateActivity` has deregistered; returning false lets the display link drop the entry too.
        return registration != nil
    }

    // MARK: Stopping and inspecting

    /// Stops the animation for `target` and `key`, leaving the property where it is; its completion gets `false`.
    public func stop(_ target: AnyObject, key: String) {
        let slot = ObjectIdentifier(target)
        remove { $0.slot == slot && $0.key == key && $0.target === target }
    }

    /// Stops one animation, if it is still running; its completion gets `false`.
    public func stop(_ id: AnimationID) {
        remove { $0.id == id }
    }

    /// Stops every animation; each completion gets `false`.
    public func stopAll() {
        remove { _ in true }
    }

    /// Whether an animation runs for `target` and `key`.
    public func isAnimating(_ target: AnyObject, key: String) -> Bool {
        running(target, key) != nil
    }

    /// The velocity per second, one value per component, of the animation for `target` and `key` as of its last
    /// step (its initial velocity before the first); nil when none runs.
    public func currentVelocity(of target: AnyObject, key: String) -> [Double]? {
        running(target, key)?.currentVelocity
    }

    /// Animations whose targets are alive.
    public var activeCount: Int {
        animations.count(where: { !$0.hasEnded && $0.target != nil })
    }

    private func running(_ target: AnyObject, _ key: String) -> RunningAnimation? {
        let slot = ObjectIdentifier(target)
        return animations.first { $0.slot == slot && $0.key == key && !$0.hasEnded && $0.target === target }
    }

    private func remove(where matches: (RunningAnimation) -> Bool) {
        var removed: [RunningAnimation] = []
        animations.removeAll { animation in
            guard matches(animation) else { return false }
            removed.append(animation)
            return true
        }
        for animation in removed where !animation.hasEnded {
            animation.hasEnded = true
            animation.completion?(false)
        }
        updateActivity()
    }

    // MARK: Activity

    private func updateActivity() {
        guard !isStepping else { return }
        let active = !animations.isEmpty
        if active, registration == nil, let engine {
            registration = engine.addAnimation(target: self) { animator, tick in animator.tick(tick) }
        } else if !active, let registration {
            engine?.removeAnimation(registration)
            self.registration = nil
        }
        guard active != isActive else { return }
        isActive = active
        if active { onActive?() } else { onIdle?() }
    }
}

/// One animation in an `Animator`: its target (weakly), the motion, and its clock. Main thread.
private final class RunningAnimation {
    let id: AnimationID
    let key: String
    /// The target's identity, kept after the target is gone so the (target, key) slot can still be found.
    let slot: ObjectIdentifier
    weak var target: AnyObject?
    let motion: Motion
    let completion: ((Bool) -> Void)?
    let write: (AnyObject, [Double]) -> Void
    /// When the motion starts: the time of the first step, nil until then, unless given when added.
    var start: MonotonicInstant?
    /// Seconds since `start` at the last step.
    var elapsed = 0.0
    /// Finished, stopped or dropped: its completion has run or is about to.
    var hasEnded = false

    init(id: AnimationID, key: String, target: AnyObject, motion: Motion, completion: ((Bool) -> Void)?,
         write: @escaping (AnyObject, [Double]) -> Void) {
        self.id = id; self.key = key
        slot = ObjectIdentifier(target)
        self.target = target
        self.motion = motion; self.completion = completion; self.write = write
    }

    var currentVelocity: [Double] { motion.velocity(at: elapsed) }
}

/// The per-component motion of one animation, evaluated at seconds since its start.
private enum Motion {
    case basic(from: [Double], to: [Double], duration: Double, timing: TimingFunction)
    case spring([SpringMotion], threshold: Double)
    case decay([DecayMotion], threshold: Double)

    func values(at t: Double) -> [Double] {
        switch self {
        case .basic(let from, let to, let duration, let timing):
            let progress = duration > 0 ? timing.value(at: t / duration) : 1
            return zip(from, to).map { $0 + ($1 - $0) * progress }
        case .spring(let springs, _):
            return springs.map { $0.position(at: t) }
        case .decay(let decays, _):
            return decays.map { $0.position(at: t) }
        }
    }

    func velocity(at t: Double) -> [Double] {
        switch self {
        case .basic(let from, let to, let duration, let timing):
            guard duration > 0, t < duration else { return Array(repeating: 0, count: from.count) }
            let slope = timing.slope(at: t / duration)
            return zip(from, to).map { slope * ($1 - $0) / duration }
        case .spring(let springs, _):
            return springs.map { $0.velocity(at: t) }
        case .decay(let decays, _):
            return decays.map { $0.velocity(at: t) }
        }
    }

    func isFinished(at t: Double) -> Bool {
        switch self {
        case .basic(_, _, let duration, _):
            return t >= duration
        case .spring(let springs, let threshold):
            return springs.allSatisfy { $0.isSettled(at: t, threshold: threshold) }
        case .decay(let decays, let threshold):
            return decays.allSatisfy { abs($0.velocity(at: t)) < threshold }
        }
    }

    /// What the last step writes: the end value, or where a decay stops.
    var endValue: [Double] {
        switch self {
        case .basic(_, let to, _, _): to
        case .spring(let springs, _): springs.map(\.to)
        case .decay(let decays, _): decays.map(\.stopPoint)
        }
    }
}
