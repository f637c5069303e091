import KioskCore

/// A display with no hardware: XRGB8888 buffers in memory and a vblank simulated from the main loop's clock.
/// It keeps the DRM backend's rules (at most one flip in flight, a flip lands on the next vblank, the shown buffer
/// is never handed out), so core behaviour can be tested with a manual clock and previews can run without a GPU.
///
/// Vblank `k` happens at `t0 + k * frameDuration`, where `t0` is the loop's time at `start`. A flip queued by
/// `present` completes at the first vblank strictly after the present, reporting that vblank's sequence number and
/// time; a present that misses a vblank therefore shows as a sequence gap, as on real hardware.
///
/// Power: `setPower(false)` completes a pending flip and stops the simulated vblank (no flips, `present` throws);
/// `setPower(true)` lights it again with the vblank counter running on from the clock, as a CRTC's does.
///
/// Lives on the main thread: it is driven from the main loop, and its flip callback runs there. Pending-flip state
/// lives between a successful `present` and the loop timer at the next vblank.
public final class HeadlessBackend: DisplayBackend {
    private enum BufferState { case free, acquired, pending, front }

    public private(set) var info: OutputInfo
    /// Flips completed since `start`.
    public private(set) var flipsCompleted = 0
    /// The most recent completed flip.
    public private(set) var lastFlip: FlipEvent?
    /// What the last `present` said had changed (nil = everything); kept so tests can check what callers pass.
    public private(set) var lastPresentedDamage: [Rect]?
    /// Presents accepted since `start`.
    public private(set) var presentCount = 0
    public private(set) var isPoweredOn = true
    /// Never called: memory buffers cannot go away.
    public var onDeviceLost: ((OutputError) -> Void)?
    /// Calls of `reacquire` since `start`.
    public private(set) var reacquireCount = 0

    private var buffers: [MemoryPixelBuffer] = []
    private var states: [BufferState] = []
    private var frontIndex: Int?
    private var pending: (index: Int, sequence: UInt64, deadline: MonotonicInstant, timer: TimerHandle)?
    private var loop: MainLoop?
    private var onFlip: ((FlipEvent) -> Void)?
    private var startTime = MonotonicInstant(nanoseconds: 0)
    /// Set during `stop`, so a flip callback run by it cannot queue another frame.
    private var isStopping = false

    private var name: String { info.connector }

    /// `bufferCount` is 2 (double buffering) or 3 (triple buffering); `connector` is the name the output goes by
    /// (one per `outputs:` entry when several are simulated).
    public init(
        mode: OutputMode = OutputMode(width: 1024, height: 768, refreshMilliHz: 60_000),
        bufferCount: Int = 2,
        connector: String = "Headless-1"
    ) throws {
        guard bufferCount == 2 || bufferCount == 3 else {
            throw OutputError("\(connector): buffer count must be 2 or 3, not \(bufferCount)")
        }
        guard mode.width > 0, mode.height > 0, mode.refreshMilliHz > 0 else {
            throw OutputError("\(connector): invalid mode \(mode.width)x\(mode.height) at \(mode.refreshMilliHz) mHz")
        }
        info = OutputInfo(device: "headless", driver: "headless", connector: connector, mode: mode,
                          commitAPI: .headless, bufferCount: bufferCount)
    }

    deinit {
        pending?.timer.cancel()
    }

    public var isFlipPending: Bool { pending != nil }

    /// Allocates black buffers and shows the first one at once, as a modeset would; no flip event is reported for it.
    public func start(on loop: MainLoop, onFlip: @escaping (FlipEvent) -> Void) throws {
        precondition(self.loop == nil, "\(name): start called twice")
        let size = info.mode.size
        buffers = (0..<info.bufferCount).map { _ in MemoryPixelBuffer(size: size) }
        states = Array(repeating: .free, count: info.bufferCount)
        states[0] = .front
        frontIndex = 0
        flipsCompleted = 0
        lastFlip = nil
        lastPresentedDamage = nil
        presentCount = 0
        isPoweredOn = true
        startTime = loop.now
        self.loop = loop
        self.onFlip = onFlip
    }

    /// A buffer that is neither on screen nor waiting to be; nil while every such buffer is already acquired
    /// (with two buffers: whenever a flip is pending or the back buffer is out).
    public func acquireBuffer() -> PixelBuffer? {
        guard loop != nil, let index = states.firstIndex(of: .free) else { return nil }
        states[index] = .acquired
        return pixelBuffer(index)
    }

    /// Gives an acquired buffer back without showing it.
    public func releaseBuffer(_ buffer: PixelBuffer) {
        if states.indices.contains(buffer.index), states[buffer.index] == .acquired {
            states[buffer.index] = .free
        }
    }

    public func present(_ buffer: PixelBuffer, damage: [Rect]?) throws {
        guard let loop else { throw OutputError("\(name): present before start") }
        guard !isStopping else { throw OutputError("\(name): present while stopping") }
        guard pending == nil else { throw OutputError("\(name): flip already pending") }
        guard isPoweredOn else { throw OutputError("\(name): present while the output is off") }
        guard states.indices.contains(buffer.index), buffers[buffer.index].base == buffer.base else {
            throw OutputError("\(name): buffer \(buffer.index) does not belong to this output")
        }
        switch states[buffer.index] {
        case .acquired: break
        case .front: throw OutputError("\(name): buffer \(buffer.index) is on screen")
        case .pending: throw OutputError("\(name): buffer \(buffer.index) is already queued")
        case .free: throw OutputError("\(name): buffer \(buffer.index) was not acquired")
        }

        let sequence = nextVblank(after: loop.now)
        let deadline = vblankTime(sequence)
        let timer = loop.addTimer(at: deadline) { [weak self] in self?.completePendingFlip() }
        states[buffer.index] = .pending
        pending = (buffer.index, sequence, deadline, timer)
        lastPresentedDamage = damage
        presentCount += 1
    }

    /// There is no master to regain: forgets a pending flip (its buffer is free again, no flip event comes) and
    /// keeps showing the front buffer, as a modeset with it would.
    public func reacquire() throws {
        guard loop != nil else { throw OutputError("\(name): reacquire before start") }
        if let flip = pending {
            flip.timer.cancel()
            states[flip.index] = .free
            pending = nil
        }
        reacquireCount += 1
    }

    /// A headless output has one configuration: nothing to fall back to.
    public func fallBack(after failure: PresentFailure) throws -> String {
        throw OutputError("\(name): no other configuration to fall back to after \(failure.errnoName)", errno: failure.errno)
    }

    public func setPower(_ on: Bool) throws {
        guard on != isPoweredOn else { return }
        isPoweredOn = on
        // The flip queued before the output went dark still completes; a present from its callback is refused.
        if !on { waitForPendingFlip() }
    }

    public func frontBufferSnapshot() -> [UInt8]? {
        frontIndex.map { buffers[$0].copyBytes() }
    }

    /// Completes a pending flip now, as if its vblank had come: the event still carries that vblank's sequence and
    /// time, and `onFlip` runs. Returns false when no flip was pending. `stop` uses it; tests may too.
    @discardableResult
    public func waitForPendingFlip() -> Bool {
        guard let pending else { return false }
        pending.timer.cancel()
        completePendingFlip()
        return true
    }

    /// Completes a pending flip (see `waitForPendingFlip`), then frees every buffer.
    public func stop() {
        guard loop != nil else { return }
        isStopping = true
        defer { isStopping = false }
        waitForPendingFlip()
        buffers = []
        states = []
        frontIndex = nil
        loop = nil
        onFlip = nil
    }

    // MARK: - Vblank

    private var frameNanoseconds: UInt64 { UInt64(max(info.mode.frameDuration.nanosecondsClamped, 1)) }

    /// The first vblank strictly after `instant`: a present exactly at a vblank has missed it.
    private func nextVblank(after instant: MonotonicInstant) -> UInt64 {
        let elapsed = instant >= startTime ? instant.nanoseconds - startTime.nanoseconds : 0
        return elapsed / frameNanoseconds + 1
    }

    private func vblankTime(_ sequence: UInt64) -> MonotonicInstant {
        MonotonicInstant(nanoseconds: startTime.nanoseconds + sequence * frameNanoseconds)
    }

    private func completePendingFlip() {
        guard let flip = pending else { return }
        pending = nil
        if let previous = frontIndex { states[previous] = .free }
        states[flip.index] = .front
        frontIndex = flip.index
        flipsCompleted += 1
        let event = FlipEvent(sequence: flip.sequence, timestamp: flip.deadline, bufferIndex: flip.index)
        lastFlip = event
        // State is final before the callback, so it may acquire and present the next frame right away.
        onFlip?(event)
    }

    private func pixelBuffer(_ index: Int) -> PixelBuffer {
        let memory = buffers[index]
        return PixelBuffer(index: index, base: memory.base, size: memory.size, stride: memory.stride)
    }
}

/// The single owner of one buffer in RAM (headless scanout, fbdev staging): zero-filled (black) XRGB8888, `stride` = width * 4.
/// Lives on the main thread with its backend.
final class MemoryPixelBuffer {
    let base: UnsafeMutableRawPointer
    let size: Size
    let stride: Int

    init(size: Size) {
        self.size = size
        stride = size.width * 4
        // Page-aligned like a mapped dumb buffer, so alignment-sensitive copy paths behave as they do on hardware.
        base = UnsafeMutableRawPointer.allocate(byteCount: stride * size.height, alignment: 4096)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: stride * size.height)
    }

    deinit { base.deallocate() }

    func copyBytes() -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: base, count: stride * size.height))
    }
}
