/// A display mode as the connector reports it.
public struct OutputMode: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    /// Vertical refresh in millihertz, computed from the pixel clock and totals where the backend knows them.
    public var refreshMilliHz: Int
    /// Vertical refresh in hertz, unrounded (`ModeTiming.refreshRate` where the backend knows the timings).
    public var refreshRate: Double
    /// The kernel's mode name (`1024x768`), or a synthesised one.
    public var name: String
    public var isPreferred: Bool

    public init(width: Int, height: Int, refreshMilliHz: Int, name: String? = nil, isPreferred: Bool = false) {
        self.init(width: width, height: height, refreshRate: Double(refreshMilliHz) / 1000, name: name, isPreferred: isPreferred)
    }

    public init(width: Int, height: Int, refreshRate: Double, name: String? = nil, isPreferred: Bool = false) {
        self.width = width; self.height = height
        self.refreshRate = refreshRate; self.refreshMilliHz = Int((refreshRate * 1000).rounded())
        self.name = name ?? "\(width)x\(height)"; self.isPreferred = isPreferred
    }

    public var size: Size { Size(width: width, height: height) }
    /// Refresh rounded to whole hertz, as users write it (`@60`).
    public var refreshHz: Int { (refreshMilliHz + 500) / 1000 }
    /// `1024x768@60`: the form `--mode` accepts and stats report.
    public var description: String { "\(width)x\(height)@\(refreshHz)" }
    /// `1920x1200@59.95`: the exact refresh with two decimals, so modes that round to the same hertz stay apart.
    public var exactDescription: String { "\(width)x\(height)@\(ModeTiming.formatHz(refreshRate))" }
    /// One frame at this refresh rate.
    public var frameDuration: Duration {
        .nanoseconds(Int64(1_000_000_000_000 / Int64(max(refreshMilliHz, 1))))
    }
}

/// How a backend puts a frame on screen.
public enum CommitAPI: String, Sendable, CaseIterable {
    /// DRM atomic modesetting (DRM_IOCTL_MODE_ATOMIC).
    case atomic
    /// DRM legacy SetCrtc + PageFlip.
    case legacy
    /// No display: memory buffers and simulated vblank.
    case headless
    /// A Linux framebuffer device: damage converted into the mapped framebuffer, flips paced by a timer.
    case fbdev
}

/// Describes the output a backend drives; a plain value for stats and logs.
public struct OutputInfo: Sendable, Equatable {
    public var device: String
    public var driver: String
    public var connector: String
    public var mode: OutputMode
    public var commitAPI: CommitAPI
    public var bufferCount: Int

    public init(device: String, driver: String, connector: String, mode: OutputMode, commitAPI: CommitAPI, bufferCount: Int) {
        self.device = device; self.driver = driver; self.connector = connector
        self.mode = mode; self.commitAPI = commitAPI; self.bufferCount = bufferCount
    }
}

/// A completed page flip: the vblank at which `bufferIndex` became the scanned-out buffer.
public struct FlipEvent: Sendable, Equatable {
    /// The CRTC's vblank counter at the flip (drmEventContext page_flip_handler2 `sequence`).
    public var sequence: UInt64
    /// When that vblank happened, on CLOCK_MONOTONIC.
    public var timestamp: MonotonicInstant
    /// Which buffer is now on screen.
    public var bufferIndex: Int

    public init(sequence: UInt64, timestamp: MonotonicInstant, bufferIndex: Int) {
        self.sequence = sequence; self.timestamp = timestamp; self.bufferIndex = bufferIndex
    }
}

/// A writable XRGB8888 buffer that is not being scanned out. Valid from `acquireBuffer()` until it is passed to
/// `present` (after which the backend owns it again); the memory belongs to the backend.
public struct PixelBuffer {
    public let index: Int
    public let base: UnsafeMutableRawPointer
    public let size: Size
    /// Bytes per row.
    public let stride: Int

    public init(index: Int, base: UnsafeMutableRawPointer, size: Size, stride: Int) {
        self.index = index; self.base = base; self.size = size; self.stride = stride
    }

    public var byteCount: Int { stride * size.height }
}

/// Errors any backend can raise; the message names the object and, where there is one, the errno.
public struct OutputError: Error, CustomStringConvertible, Sendable {
    public var message: String
    /// The errno of the system call that failed, when one did: `PresentFailure` classifies by it.
    public var errno: Int32?
    public init(_ message: String, errno: Int32? = nil) {
        self.message = message
        self.errno = errno
    }
    public var description: String { message }
}

/// One display output (a CRTC with its connector and primary plane, or a headless stand-in). Lives on the main
/// thread: it is driven from the main loop, and its flip callback runs there.
///
/// Buffer lifecycle: `acquireBuffer()` hands out a buffer that is neither on screen nor queued; the caller draws
/// into it and passes it to `present`, or gives it back with `releaseBuffer` (always, when `present` threw). At
/// most one flip is in flight: `present` while `isFlipPending` throws. When the flip completes, `onFlip` runs on
/// the main thread and the buffer shown before becomes free again.
///
/// Faults: `present` throws a `OutputError` carrying the errno (see `PresentFailure` for what each class means).
/// `reacquire` takes the output back after master was lost or a flip never completed; `fallBack` answers a
/// configuration the kernel refused; `onDeviceLost` reports a device that is gone (a hang-up on its fd).
public protocol DisplayBackend: AnyObject {
    var info: OutputInfo { get }
    /// True between a successful `present` and the flip event that completes it.
    var isFlipPending: Bool { get }
    /// Set the mode and show a first (black) buffer; from then on flip completions call `onFlip`.
    func start(on loop: MainLoop, onFlip: @escaping (FlipEvent) -> Void) throws
    /// A buffer that may be drawn into now, or nil when every free buffer is taken.
    func acquireBuffer() -> PixelBuffer?
    /// Queue `buffer` to be scanned out at the next vblank. `damage` lists the rectangles that changed since the
    /// buffer was last shown (nil = everything); backends that can pass them to the kernel do.
    func present(_ buffer: PixelBuffer, damage: [Rect]?) throws
    /// Gives an acquired buffer back without showing it: after a failed `present`, or when nothing is to be shown.
    func releaseBuffer(_ buffer: PixelBuffer)
    /// Takes the output back: DRM master where the device has one, then the mode set again showing the front
    /// buffer. A pending flip is forgotten (its buffer is free again). Throws, naming the device and errno, while
    /// another process holds master.
    func reacquire() throws
    /// After a present failed with an invalid configuration (EINVAL, ENOSPC): probes with TEST_ONLY and falls back
    /// (atomic to legacy commits, the requested mode to the preferred one). Returns what was chosen, for the log;
    /// throws when nothing is left to fall back to.
    func fallBack(after failure: PresentFailure) throws -> String
    /// Called on the main thread when the device is gone (EPOLLHUP or EPOLLERR on its fd); the backend has stopped
    /// watching the fd by then.
    var onDeviceLost: ((OutputError) -> Void)? { get set }
    /// Copy of the buffer most recently put on screen by a completed flip (XRGB8888, `stride` = width * 4).
    func frontBufferSnapshot() -> [UInt8]?
    /// Stop at a frame boundary: wait for a pending flip, restore what was on the CRTC before `start`, free buffers.
    func stop()
    /// Whether the output is lit. False after `setPower(false)`: the CRTC is inactive, no flips complete and
    /// `present` throws.
    var isPoweredOn: Bool { get }
    /// Blank (`false`) or light (`true`) the output: the CRTC's ACTIVE property under atomic, the connector's DPMS
    /// property under legacy. Waits for a pending flip first (its flip event is still delivered). Lighting the
    /// output shows the buffer that was on screen when it went dark; the next `present` flips as usual. Setting the
    /// state the output is already in does nothing.
    func setPower(_ on: Bool) throws
    /// Whether completed flips follow the driver's vblank or a timer at the mode's refresh (`FlipPacer`).
    var flipPacing: FlipPacing { get }
    /// The output's vblank counter now, as the driver counts it; nil where there is none to read. The flip deadline
    /// uses it to tell a flip stuck while vblanks go on from a machine too starved to run its vblanks at all.
    var vblankCounter: UInt64? { get }
    /// Reads the flip events already waiting on the device, without blocking: `onFlip` runs for a completed flip.
    /// The flip deadline calls it first, since a loop that wakes late may run the deadline's timer before it reads
    /// the event that came in time.
    func readPendingEvents()
}

extension DisplayBackend {
    /// A backend with its own vblank (headless simulates one) paces by it.
    public var flipPacing: FlipPacing { .vblank }
    /// No counter to read: the flip deadline is wall-clock time alone.
    public var vblankCounter: UInt64? { nil }
    /// Events arrive through the loop alone.
    public func readPendingEvents() {}
}
