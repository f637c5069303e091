import Glibc
import KioskCore
import KioskDisplay

/// A `HeadlessBackend` with faults on cue: `present` throws a chosen errno on chosen presents, flips can be made
/// never to complete, `reacquire` can be refused (another process holds master), and the device can be made to go
/// away. Everything else is the headless backend's, so the front buffer shows what really reached the screen.
///
/// Lives on the main thread, like the backend it wraps.
public final class FaultInjectingBackend: DisplayBackend {
    public let headless: HeadlessBackend
    /// Presents by 1-based number (counting every call, failed or not) that throw the errno given.
    public var presentFaults: [Int: Int32] = [:]
    /// While true, a present is accepted but its flip never completes.
    public var flipsNeverComplete = false
    /// Presents by 1-based number that reach the (simulated) hardware only this long after the call returned, as a
    /// nonblocking commit whose kernel worker runs late: the flip lands at the first vblank after that.
    public var commitDelays: [Int: Duration] = [:]
    /// What the backend says paces its flips; the engine's flip timeout depends on it.
    public var flipPacing: FlipPacing = .vblank
    /// The vblank counter the backend reports (nil: none, as on a headless output). Tests move it by hand to stand
    /// for a driver whose vblanks run slow or stop.
    public var vblankCounter: UInt64?
    /// While true, a flip completes on time but its event waits unread on the (simulated) device until
    /// `readPendingEvents`: the loop woke late and ran its timers first.
    public var flipEventsWaitUnread = false
    /// Calls of `readPendingEvents`.
    public private(set) var readPendingEventsCalls = 0
    /// While positive, `reacquire` throws EACCES (another master holds the device) and counts down.
    public var reacquireRefusals = 0
    /// The connector's modes (the preferred one flagged): what `fallBack` may fall back to.
    public let modes: [OutputMode]
    /// The commit API and mode in use; `info` reports them. Starts atomic with the mode given.
    public private(set) var configuration: OutputConfiguration
    /// Configurations the simulated kernel refuses when `fallBack` tries them.
    public var refusedConfigurations: Set<OutputConfiguration> = []
    /// The configurations `fallBack` tried, in order, refused or not.
    public private(set) var fallbackAttempts: [OutputConfiguration] = []
    private var fallbackSteps: [OutputConfiguration]?

    public private(set) var presentCalls = 0
    public private(set) var reacquireCalls = 0
    public private(set) var fallBackCalls = 0
    /// Buffers handed out and not yet presented or released.
    public private(set) var buffersOut = 0
    public var onDeviceLost: ((OutputError) -> Void)?

    /// A flip accepted while `flipsNeverComplete` was on: it holds a buffer until `reacquire`.
    private var swallowedFlip: PixelBuffer?
    /// A present held back by `commitDelays`, until its timer hands it to the headless backend.
    private var delayedCommit: (buffer: PixelBuffer, timer: TimerHandle)?
    private var loop: MainLoop?

    /// - modes: the connector's modes; by default `mode` alone, as the preferred one.
    public init(mode: OutputMode = OutputMode(width: 64, height: 48, refreshMilliHz: 60_000), modes: [OutputMode]? = nil,
                bufferCount: Int = 2) throws {
        headless = try HeadlessBackend(mode: mode, bufferCount: bufferCount)
        var preferred = mode
        preferred.isPreferred = true
        let modes = modes ?? [preferred]
        self.modes = modes
        // The connector's own entry for the mode, as the DRM backend keeps it (with its preferred flag).
        let current = modes.first { $0.size == mode.size && $0.refreshMilliHz == mode.refreshMilliHz } ?? mode
        configuration = OutputConfiguration(.atomic, current)
    }

    public var info: OutputInfo {
        var info = headless.info
        info.mode = configuration.mode
        info.commitAPI = configuration.commitAPI
        return info
    }
    public var isFlipPending: Bool { swallowedFlip != nil || delayedCommit != nil || headless.isFlipPending }
    public var isPoweredOn: Bool { headless.isPoweredOn }

    public func start(on loop: MainLoop, onFlip: @escaping (FlipEvent) -> Void) throws {
        self.loop = loop
        try headless.start(on: loop, onFlip: onFlip)
    }

    public func acquireBuffer() -> PixelBuffer? {
        guard swallowedFlip == nil, delayedCommit == nil, let buffer = headless.acquireBuffer() else { return nil }
        buffersOut += 1
        return buffer
    }

    public func releaseBuffer(_ buffer: PixelBuffer) {
        buffersOut -= 1
        headless.releaseBuffer(buffer)
    }

    public func present(_ buffer: PixelBuffer, damage: [Rect]?) throws {
        presentCalls += 1
        if let code = presentFaults[presentCalls] {
            throw OutputError("connector \(info.connector): atomic page flip failed: \(errnoDescription(code))", errno: code)
        }
        if flipsNeverComplete || flipEventsWaitUnread {
            guard swallowedFlip == nil else { throw OutputError("connector \(info.connector): flip already pending") }
            swallowedFlip = buffer
            buffersOut -= 1
            return
        }
        if let delay = commitDelays[presentCalls], let loop {
            guard delayedCommit == nil else { throw OutputError("connector \(info.connector): flip already pending") }
            let timer = loop.addTimer(at: loop.now + delay) { [weak self] in
                guard let self, let held = delayedCommit else { return }
                delayedCommit = nil
                do {
                    try headless.present(held.buffer, damage: damage)
                } catch {
                    preconditionFailure("the delayed commit failed: \(error)")
                }
            }
            delayedCommit = (buffer, timer)
            buffersOut -= 1
            return
        }
        try headless.present(buffer, damage: damage)
        buffersOut -= 1
    }

    /// Hands a flip whose event waits unread (`flipEventsWaitUnread`) to the engine now.
    public func readPendingEvents() {
        readPendingEventsCalls += 1
        guard flipEventsWaitUnread, !flipsNeverComplete, let buffer = swallowedFlip else { return }
        swallowedFlip = nil
        do {
            try headless.present(buffer, damage: nil)
        } catch {
            preconditionFailure("the unread flip failed: \(error)")
        }
        headless.waitForPendingFlip()
    }

    public func reacquire() throws {
        reacquireCalls += 1
        if reacquireRefusals > 0 {
            reacquireRefusals -= 1
            throw OutputError("device \(info.device): cannot become DRM master: \(errnoDescription(EACCES))", errno: EACCES)
        }
        if let buffer = swallowedFlip {
            swallowedFlip = nil
            headless.releaseBuffer(buffer)
        }
        if let held = delayedCommit {
            delayedCommit = nil
            held.timer.cancel()
            headless.releaseBuffer(held.buffer)
        }
        try headless.reacquire()
    }

    /// Walks `ConfigurationFallback` as the DRM backend does, with `refusedConfigurations` standing in for the
    /// kernel's TEST_ONLY and modeset answers.
    public func fallBack(after failure: PresentFailure) throws -> String {
        fallBackCalls += 1
        if fallbackSteps == nil {
            fallbackSteps = ConfigurationFallback(from: configuration, modes: modes, atomicAvailable: true).steps
        }
        while let step = fallbackSteps?.first {
            fallbackSteps?.removeFirst()
            fallbackAttempts.append(step)
            if refusedConfigurations.contains(step) { continue }
            configuration = step
            if let buffer = swallowedFlip {
                swallowedFlip = nil
                headless.releaseBuffer(buffer)
            }
            return step.description
        }
        throw OutputError("connector \(info.connector): \(failure.errnoName) at commit with \(configuration); nothing left to fall back to",
                           errno: failure.errno)
    }

    /// The device goes away: as the DRM backend does on EPOLLHUP.
    public func loseDevice() {
        onDeviceLost?(OutputError("device \(info.device): EPOLLHUP on the DRM fd"))
    }

    public func frontBufferSnapshot() -> [UInt8]? { headless.frontBufferSnapshot() }
    public func stop() {
        if let held = delayedCommit {
            delayedCommit = nil
            held.timer.cancel()
            headless.releaseBuffer(held.buffer)
        }
        headless.stop()
    }
    public func setPower(_ on: Bool) throws { try headless.setPower(on) }
}
