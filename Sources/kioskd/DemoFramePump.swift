import Dispatch
import KioskCore
import KioskRender
import Logging

/// Drives the built-in demo picture: each frame is drawn on a render thread into a buffer the display is not
/// showing, and presented from the main loop as soon as no flip is in flight. With three buffers the next frame
/// is drawn while the previous flip is pending, so drawing gets a whole refresh period.
///
/// Lives on the main thread; only `RenderJob` values and the completion box cross to the render thread.
final class DemoFramePump {
    /// A buffer handed to the render thread. The render thread has it exclusively from dispatch until it reports
    /// completion; the main thread touches neither the buffer nor its memory meanwhile.
    private struct RenderJob: @unchecked Sendable {
        let buffer: PixelBuffer
        let frame: Int
    }

    /// Finished renders, filled by the render thread and drained on the main thread.
    private final class Completions: Sendable {
        let finished = Lock<[(index: Int, error: String?)]>([])
    }

    private let loop: MainLoop
    private let backend: DisplayBackend
    private let scene: DemoScene
    private let frameLimit: Int?
    private let present: (PixelBuffer) throws -> Void
    private let queue = DispatchQueue(label: "kioskd.render", qos: .userInitiated)
    private let completions = Completions()
    private var waker: Waker?
    private let logger = Logger(label: "kioskd.demo")

    private var drawing: PixelBuffer?
    private var ready: PixelBuffer?
    private var framesDrawn = 0
    private var stopping = false
    private(set) var flips = FlipStatistics()
    private(set) var failure: String?
    /// Runs once, when the last frame has flipped or a stop request has been honoured.
    var onFinished: (() -> Void)?
    var onFirstFlip: (() -> Void)?

    init(loop: MainLoop, backend: DisplayBackend, scene: DemoScene = DemoScene(), frameLimit: Int?,
         present: @escaping (PixelBuffer) throws -> Void) {
        self.loop = loop
        self.backend = backend
        self.scene = scene
        self.frameLimit = frameLimit
        self.present = present
    }

    func start() throws {
        waker = try loop.makeWaker { [weak self] in self?.collectRenders() }
        pump()
    }

    /// Stop at a frame boundary: no new frames; finishes once no flip is pending.
    func requestStop() {
        stopping = true
        if !backend.isFlipPending { finish() }
    }

    /// Blocks until the render thread is idle, so buffers can be freed safely.
    func drainRenderThread() { queue.sync {} }

    func flipCompleted(_ event: FlipEvent) {
        flips.record(event)
        if flips.framesFlipped == 1 { onFirstFlip?() }
        if stopping || (frameLimit.map { flips.framesFlipped >= $0 } ?? false) {
            finish()
            return
        }
        pump()
    }

    private func finish() {
        guard let done = onFinished else { return }
        onFinished = nil
        stopping = true
        done()
    }

    private func pump() {
        guard !stopping else { return }
        if let buffer = ready, !backend.isFlipPending {
            ready = nil
            do {
                try present(buffer)
            } catch {
                failure = "\(error)"
                logger.error("\(error)")
                finish()
                return
            }
        }
        let wanted = frameLimit.map { framesDrawn < $0 } ?? true
        if drawing == nil, ready == nil, wanted, let buffer = backend.acquireBuffer() {
            drawing = buffer
            framesDrawn += 1
            let job = RenderJob(buffer: buffer, frame: framesDrawn)
            let scene = self.scene, mode = backend.info.mode, completions = self.completions, waker = self.waker
            queue.async {
                var message: String?
                do { try scene.draw(into: job.buffer, frame: job.frame, wallClock: .current(), mode: mode) } catch {
                    message = "\(error)"
                }
                completions.finished.withLock { $0.append((job.buffer.index, message)) }
                waker?.wake()
            }
        }
    }

    private func collectRenders() {
        let done = completions.finished.withLock { list in defer { list.removeAll() }; return list }
        for item in done {
            guard let buffer = drawing, buffer.index == item.index else { continue }
            drawing = nil
            if let error = item.error {
                failure = "render failed: \(error)"
                logger.error("render failed: \(error)")
                finish()
                return
            }
            ready = buffer
        }
        pump()
    }
}
