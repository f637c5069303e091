import Glibc
import KioskCore
import Logging

/// A Linux framebuffer (fbdev) output, for boards without KMS: the engine composes into XRGB8888 staging buffers
/// in RAM, as it would into dumb buffers, and each present converts the damaged rectangles into the mapped
/// framebuffer in its own pixel layout (`FbdevPixelFormat`: XRGB8888 is copied as is, RGB565 and the others are
/// converted), writing rows and never reading them.
///
/// fbdev has no page flip: a present is on screen once copied. So that the engine's rules hold as on DRM (at most
/// one flip in flight, a flip lands on a vblank, the display link ticks at the refresh rate), each present's
/// "flip" completes at the next vertical sync: FBIO_WAITFORVSYNC where the driver has it, waited for off the main
/// loop (`FbdevVsync`), else the next tick of a `FlipPacer` timer at the mode's refresh, from the pixel clock and
/// totals where the driver gives them, else 60 Hz. The first present finds out which (a driver without it answers
/// ENOTTY or EINVAL at once), and the choice holds for the run. The shown staging buffer is never handed out until
/// the next flip lands, as a front buffer would not be.
///
/// Power: FBIOBLANK (powerdown and unblank); a driver that cannot blank answers EINVAL, reported as an error.
/// While started, the active VT is in graphics mode (`FbdevConsole`), so the console does not draw over the kiosk.
///
/// Lives on the main thread: it is driven from the main loop, and its flip callback runs there.
public final class FbdevBackend: DisplayBackend {
    private enum BufferState { case free, acquired, pending, front }

    public let device: FbdevDevice
    public private(set) var info: OutputInfo
    public private(set) var isPoweredOn = true
    /// Never called: a framebuffer device has no fd to watch for a hang-up; its mapping stays valid until unmapped.
    public var onDeviceLost: ((OutputError) -> Void)?
    /// Presents copied into the framebuffer since `start`.
    public private(set) var presentCount = 0
    /// Bytes written into the framebuffer since `start`.
    public private(set) var bytesWritten = 0

    private let logger = Logger(label: "kioskd.fbdev")
    private var buffers: [MemoryPixelBuffer] = []
    private var states: [BufferState] = []
    private var frontIndex: Int?
    private var pendingIndex: Int?
    private var loop: MainLoop?
    private var onFlip: ((FlipEvent) -> Void)?
    /// The timer, once the driver turned out to have no FBIO_WAITFORVSYNC.
    private var pacer: FlipPacer?
    private var vsync: FbdevVsync?
    /// Whether FBIO_WAITFORVSYNC works here: nil until the first present's wait answers.
    private var hasVsync: Bool?
    /// The vsync the last flip landed on, numbered from 1 at the first.
    private var lastVsync: (sequence: UInt64, time: MonotonicInstant)?
    /// The VT in graphics mode while started, so the framebuffer console keeps off the screen.
    private var console: FbdevConsole?
    private let scratch: UnsafeMutableRawPointer

    /// Opens and maps `path`; nothing is written until `start`.
    /// - Throws: `OutputError` naming the device (open, its mode, the mapping) or a buffer count other than 2 or 3.
    public init(path: String, bufferCount: Int = 2) throws {
        guard bufferCount == 2 || bufferCount == 3 else {
            throw OutputError("framebuffer \(path): buffer count must be 2 or 3, not \(bufferCount)")
        }
        device = try FbdevDevice(path: path)
        info = OutputInfo(device: path, driver: "fbdev", connector: device.driverID, mode: device.timing.mode,
                          commitAPI: .fbdev, bufferCount: bufferCount)
        scratch = UnsafeMutableRawPointer.allocate(byteCount: device.timing.xres * 4, alignment: 64)
        let rate = device.timing.refreshRate.map { "\(ModeTiming.formatHz($0)) Hz from the pixel clock" }
            ?? "60 Hz (the driver gives no pixel clock)"
        logger.info("framebuffer \(device.name): \(device.timing.xres)x\(device.timing.yres) \(device.format), \(device.lineLength) bytes a row, paced at \(rate), \(bufferCount) staging buffers")
    }

    deinit {
        if loop != nil { stop() }
        scratch.deallocate()
    }

    public var isFlipPending: Bool { pendingIndex != nil }

    /// By the vsync where FBIO_WAITFORVSYNC works; by the timer where it does not, and until the first present has
    /// found out.
    public var flipPacing: FlipPacing {
        if hasVsync == true { return .vblank }
        return pacer?.pacing ?? .timer(reason: "FBIO_WAITFORVSYNC not tried yet")
    }

    /// Clears the framebuffer to black, as a modeset shows a black buffer; no flip event is reported for it.
    public func start(on loop: MainLoop, onFlip: @escaping (FlipEvent) -> Void) throws {
        precondition(self.loop == nil, "framebuffer \(device.path): start called twice")
        console = FbdevConsole(logger: logger)
        let size = info.mode.size
        buffers = (0..<info.bufferCount).map { _ in MemoryPixelBuffer(size: size) }
        states = Array(repeating: .free, count: info.bufferCount)
        states[0] = .front
        frontIndex = 0
        pendingIndex = nil
        copy(buffers[0], damage: nil)
        vsync = try FbdevVsync(device: device, loop: loop)
        self.loop = loop
        self.onFlip = onFlip
        isPoweredOn = true
    }

    public func acquireBuffer() -> PixelBuffer? {
        guard loop != nil, let index = states.firstIndex(of: .free) else { return nil }
        states[index] = .acquired
        let memory = buffers[index]
        return PixelBuffer(index: index, base: memory.base, size: memory.size, stride: memory.stride)
    }

    public func releaseBuffer(_ buffer: PixelBuffer) {
        if states.indices.contains(buffer.index), states[buffer.index] == .acquired { states[buffer.index] = .free }
    }

    /// Converts `damage` (everything when nil) from the staging buffer into the framebuffer now; the flip
    /// completes at the next vsync (FBIO_WAITFORVSYNC), or at the timer's next tick where the driver has none.
    public func present(_ buffer: PixelBuffer, damage: [Rect]?) throws {
        guard let loop else { throw OutputError("framebuffer \(device.path): present before start") }
        guard pendingIndex == nil else { throw OutputError("framebuffer \(device.path): flip already pending") }
        guard isPoweredOn else { throw OutputError("framebuffer \(device.path): present while the output is off") }
        guard states.indices.contains(buffer.index), buffers[buffer.index].base == buffer.base,
              states[buffer.index] == .acquired else {
            throw OutputError("framebuffer \(device.path): buffer \(buffer.index) was not acquired")
        }
        copy(buffers[buffer.index], damage: damage)
        states[buffer.index] = .pending
        pendingIndex = buffer.index
        presentCount += 1
        let index = buffer.index
        if hasVsync != false, let vsync {
            vsync.waitForNext { [weak self] answer in self?.vsyncAnswered(answer, bufferIndex: index) }
        } else {
            paceByTimer(bufferIndex: index, on: loop)
        }
    }

    private func vsyncAnswered(_ answer: FbdevVsync.Answer, bufferIndex: Int) {
        guard let loop else { return }
        switch answer {
        case .vsync(let time):
            if hasVsync == nil {
                hasVsync = true
                logger.info("framebuffer \(device.name): flips paced by FBIO_WAITFORVSYNC")
            }
            finishFlip(FlipEvent(sequence: nextVsyncSequence(at: time), timestamp: time, bufferIndex: bufferIndex))
        case .failed(let code):
            hasVsync = false
            let reason = "FBIO_WAITFORVSYNC: \(errnoDescription(code))"
            let pacer = FlipPacer(frameDuration: info.mode.frameDuration)
            pacer.useTimer(reason: reason, now: loop.now)
            self.pacer = pacer
            logger.notice("framebuffer \(device.name): flips paced by a timer at \(ModeTiming.formatHz(info.mode.refreshRate)) Hz (\(reason))")
            paceByTimer(bufferIndex: bufferIndex, on: loop)
        }
    }

    /// The pending flip completes at the timer's next tick.
    private func paceByTimer(bufferIndex: Int, on loop: MainLoop) {
        pacer?.flipCompleted(FlipEvent(sequence: 0, timestamp: loop.now, bufferIndex: bufferIndex), on: loop) { [weak self] event in
            self?.finishFlip(event)
        }
    }

    /// Vsyncs are counted from the time between them: a frame that took two refresh periods skips a number.
    private func nextVsyncSequence(at time: MonotonicInstant) -> UInt64 {
        guard let last = lastVsync else {
            lastVsync = (1, time)
            return 1
        }
        let periods = Double((time - last.time).nanosecondsClamped) / Double(info.mode.frameDuration.nanosecondsClamped)
        let sequence = last.sequence + UInt64(max(1, periods.rounded()))
        lastVsync = (sequence, time)
        return sequence
    }

    /// Completes a pending flip now (stop, power off): with its vsync when one is being waited for, else with the
    /// timer's tick.
    private func completePendingFlipNow() {
        if let vsync, vsync.isWaiting, let index = pendingIndex, let loop {
            vsync.cancel()
            finishFlip(FlipEvent(sequence: nextVsyncSequence(at: loop.now), timestamp: loop.now, bufferIndex: index))
        } else {
            pacer?.deliverHeldNow()
        }
    }

    /// No master to regain: forgets a pending flip (its buffer is free again, no flip event comes). The
    /// framebuffer keeps what was copied into it.
    public func reacquire() throws {
        guard loop != nil else { throw OutputError("framebuffer \(device.path): reacquire before start") }
        vsync?.cancel()
        pacer?.forgetHeld()
        if let index = pendingIndex { states[index] = .free }
        pendingIndex = nil
    }

    /// A framebuffer has one configuration: nothing to fall back to.
    public func fallBack(after failure: PresentFailure) throws -> String {
        throw OutputError("framebuffer \(device.path): no other configuration to fall back to after \(failure.errnoName)", errno: failure.errno)
    }

    /// The frame on screen, read back from the framebuffer and widened to XRGB8888.
    public func frontBufferSnapshot() -> [UInt8]? {
        loop == nil ? nil : device.readBack()
    }

    /// FBIOBLANK. Going dark completes a pending flip first (its event is still delivered).
    public func setPower(_ on: Bool) throws {
        guard on != isPoweredOn else { return }
        guard loop != nil else { throw OutputError("framebuffer \(device.path): power \(on ? "on" : "off") before start") }
        if !on {
            isPoweredOn = false
            completePendingFlipNow()
        }
        do { try device.blank(!on) } catch {
            isPoweredOn = !on
            throw error
        }
        isPoweredOn = on
        logger.info("framebuffer \(device.name): power \(on ? "on" : "off")")
    }

    /// Delivers a pending flip, then frees the staging buffers. The framebuffer keeps the last frame.
    public func stop() {
        guard loop != nil else { return }
        completePendingFlipNow()
        vsync = nil
        buffers = []
        states = []
        frontIndex = nil
        loop = nil
        onFlip = nil
        console = nil
    }

    private func finishFlip(_ event: FlipEvent) {
        guard pendingIndex == event.bufferIndex else { return }
        if let previous = frontIndex { states[previous] = .free }
        states[event.bufferIndex] = .front
        frontIndex = event.bufferIndex
        pendingIndex = nil
        onFlip?(event)
    }

    private func copy(_ buffer: MemoryPixelBuffer, damage: [Rect]?) {
        let bounds = Rect(size: buffer.size)
        let rects = (damage ?? [bounds]).map { $0.intersection(bounds) }.filter { !$0.isEmpty }
        for rect in rects {
            device.format.convert(rect, from: buffer.base, sourceStride: buffer.stride, to: device.frame,
                                  destinationStride: device.lineLength, scratch: scratch)
            bytesWritten += rect.width * rect.height * device.format.bytesPerPixel
        }
    }
}
