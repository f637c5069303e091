import KioskCore

/// `ScanoutReadback` through a writeback connector (`WritebackCapturer`): the next present is captured, its
/// out-fence is watched on the main loop (a readable fd, never a blocking wait), and once it signals the pixels are
/// copied out of the capture's dumb buffer on a background queue. A fence that has not signalled within the timeout
/// gives up (`completion` with the reason) and stops watching.
///
/// Lives on the main thread with the output's backend. The capture (its dumb buffer and fence) is kept alive by
/// the copy until it is done, so a readback let go meanwhile (the output unplugged) cannot unmap memory being read.
public final class WritebackReadback: ScanoutReadback {
    public let capturer: WritebackCapturer
    private let loop: MainLoop
    private let jobs: BackgroundJobs
    private let outputName: String
    /// Captures whose fence is watched or whose pixels are being copied, by number.
    private var pending: [Int: Pending] = [:]
    private var nextNumber = 0

    private struct Pending {
        let capture: WritebackCapture
        var source: SourceHandle?
        var timeout: TimerHandle?
        let completion: (Result<[UInt8], OutputError>) -> Void
    }

    public init(capturer: WritebackCapturer, loop: MainLoop, outputName: String) throws {
        self.capturer = capturer
        self.loop = loop
        self.outputName = outputName
        jobs = try BackgroundJobs(loop: loop, label: "kioskd.writeback-readback")
    }

    deinit {
        for entry in pending.values {
            entry.source?.cancel()
            entry.timeout?.cancel()
        }
    }

    public func readBackNextPresent(timeout: Duration, _ completion: @escaping (Result<[UInt8], OutputError>) -> Void) throws {
        let name = outputName
        try capturer.captureNextPresent { [weak self] capture in
            guard let self else { return }
            guard let capture else {
                return completion(.failure(OutputError("connector \(name): the present carrying the writeback capture was refused")))
            }
            watch(capture, timeout: timeout, completion: completion)
        }
    }

    private func watch(_ capture: WritebackCapture, timeout: Duration, completion: @escaping (Result<[UInt8], OutputError>) -> Void) {
        guard let fd = capture.fenceFD else {
            return completion(.failure(OutputError("connector \(capturer.connector.name): the writeback capture has no out-fence")))
        }
        let number = nextNumber
        nextNumber += 1
        pending[number] = Pending(capture: capture, completion: completion)
        do {
            pending[number]?.source = try loop.addSource(fd: fd, events: .readable) { [weak self] _ in self?.signalled(number) }
        } catch {
            pending[number] = nil
            return completion(.failure(OutputError("connector \(capturer.connector.name): cannot watch the writeback out-fence: \(error)")))
        }
        pending[number]?.timeout = loop.addTimer(after: timeout) { [weak self] in self?.gaveUp(number, after: timeout) }
    }

    private func signalled(_ number: Int) {
        guard let entry = pending[number] else { return }
        entry.source?.cancel()
        entry.timeout?.cancel()
        pending[number]?.source = nil
        pending[number]?.timeout = nil
        let memory = MappedFrame(capture: entry.capture)
        jobs.run({ memory.copy() }, then: { [weak self] pixels in
            guard let self, let entry = pending.removeValue(forKey: number) else { return }
            capturer.forget(entry.capture)
            entry.completion(.success(pixels))
        })
    }

    private func gaveUp(_ number: Int, after timeout: Duration) {
        guard let entry = pending.removeValue(forKey: number) else { return }
        entry.source?.cancel()
        entry.completion(.failure(OutputError("connector \(capturer.connector.name): writeback fence not signalled within \(timeout)")))
    }
}

/// A signalled capture's mapped memory, read on a background queue. Nothing writes into it any more (the kernel
/// has written the frame, and a capture's buffer is its own); it holds the capture so the mapping outlives the read.
private struct MappedFrame: @unchecked Sendable {
    let capture: WritebackCapture
    var base: UnsafeMutableRawPointer { capture.buffer.base }
    var size: Size { capture.buffer.size }
    var stride: Int { capture.buffer.stride }

    func copy() -> [UInt8] {
        let rowBytes = size.width * 4
        var out = [UInt8](repeating: 0, count: rowBytes * size.height)
        out.withUnsafeMutableBytes { dst in
            for y in 0..<size.height {
                (dst.baseAddress! + y * rowBytes).copyMemory(from: base + y * stride, byteCount: rowBytes)
            }
        }
        return out
    }
}
