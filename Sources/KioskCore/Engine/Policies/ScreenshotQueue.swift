/// The bookkeeping behind `LayerEngine.captureScreen`: requests waiting for the next present, and the copy taken
/// for the pending flip with the requests it answers when that flip completes. It decides nothing about the
/// engine's state; the engine says when a frame was presented or flipped and hands it the pixels to use.
///
/// Lives on the main thread, owned by its engine. Completions are called after its own state is updated, so one
/// may ask for another screenshot at once.
final class ScreenshotQueue {
    typealias Completion = ([UInt8]?) -> Void

    private var awaitingPresent: [Completion] = []
    private var takenForFlip: (pixels: [UInt8], waiting: [Completion])?

    /// Answers `completion` at the next present's flip.
    func waitForNextPresent(_ completion: @escaping Completion) {
        awaitingPresent.append(completion)
    }

    /// Answers `completion` at the pending flip, whose frame the shadow buffer still holds: copied now (or the copy
    /// already taken for that flip reused).
    func waitForPendingFlip(_ completion: @escaping Completion, shadow: () -> [UInt8]) {
        let pixels = takenForFlip?.pixels ?? shadow()
        takenForFlip = (pixels, (takenForFlip?.waiting ?? []) + [completion])
    }

    /// A frame was just copied for scanout: the shadow buffer holds it, so requests waiting for a present take
    /// their copy now and receive it at its flip.
    func framePresented(shadow: () -> [UInt8]) {
        guard !awaitingPresent.isEmpty else { return }
        takenForFlip = (shadow(), (takenForFlip?.waiting ?? []) + awaitingPresent)
        awaitingPresent = []
    }

    /// Hands requests their frame when it reaches the screen; with `frontBuffer` (no flip is coming: the output
    /// went dark or the engine stopped), requests still waiting for a present get what it returns.
    func frameFlipped(frontBuffer: (() -> [UInt8]?)? = nil) {
        if let (pixels, waiting) = takenForFlip {
            takenForFlip = nil
            for completion in waiting { completion(pixels) }
        }
        if let frontBuffer, !awaitingPresent.isEmpty {
            let pixels = frontBuffer(), waiting = awaitingPresent
            awaitingPresent = []
            for completion in waiting { completion(pixels) }
        }
    }
}

/// Captures of the frame on screen at the vblank nearest a given time (`LayerEngine.captureScreen(atVblankNearest:)`):
/// from three refresh periods before that time, the frame of each present is copied from the shadow buffer, and
/// at its flip it becomes the frame on screen at that flip's vblank; the first flip more than half a period past the
/// time answers with the last such frame (the one on screen at the vblank nearest the time). At its deadline (the
/// engine's timer, when no flip came after the time) a request is answered with the last frame it saw, or with the
/// frame on screen then: nothing flipped near the time, so that frame was on screen at it.
///
/// Lives on the main thread, owned by its engine.
final class TimedScreenshots {
    typealias Completion = (_ pixels: [UInt8]?, _ vblank: MonotonicInstant?) -> Void
    typealias Deadline = (_ id: Int) -> TimerHandle

    private struct Request {
        let id: Int
        let instant: MonotonicInstant
        let completion: Completion
        var onScreen: (pixels: [UInt8], vblank: MonotonicInstant?)?
        var deadline: TimerHandle?
    }

    private var requests: [Request] = []
    private var nextID = 0
    /// The copy of the frame presented last and when it was presented, for its flip.
    private var presented: (pixels: [UInt8], at: MonotonicInstant)?

    /// Adds a request for `instant`; `deadline` arms the timer that calls `expire` with the id given.
    func add(at instant: MonotonicInstant, completion: @escaping Completion, deadline: (Int) -> TimerHandle) {
        nextID += 1
        requests.append(Request(id: nextID, instant: instant, completion: completion))
        let timer = deadline(nextID)
        if let index = requests.firstIndex(where: { $0.id == nextID }) { requests[index].deadline = timer }
    }

    /// The frame on screen when request `id`'s window opens (three periods before its time), for a screen that does
    /// not flip again before the time; its vblank is not known.
    func seed(_ id: Int, pixels: [UInt8]?) {
        guard let pixels, let index = requests.firstIndex(where: { $0.id == id }), requests[index].onScreen == nil else { return }
        requests[index].onScreen = (pixels, nil)
    }

    /// A frame was copied for scanout at `now`: the shadow buffer holds it.
    func framePresented(now: MonotonicInstant, period: Duration, shadow: () -> [UInt8]) {
        presented = requests.contains { now + period * 3 >= $0.instant } ? (shadow(), now) : nil
    }

    /// The frame presented last reached the screen at `vblank`. A frame presented after a time's nearest vblank
    /// was not on screen then, whatever vblank its flip reports (a timer-paced flip that came late, on a stalled
    /// loop, reports the tick it was due at).
    func frameFlipped(at reported: MonotonicInstant, period: Duration) {
        let copy = presented?.pixels
        let vblank = max(reported, presented?.at ?? reported)
        presented = nil
        var finished: [Request] = []
        for index in requests.indices.reversed() {
            if vblank <= requests[index].instant + period / 2 {
                if let copy { requests[index].onScreen = (copy, vblank) }
            } else if requests[index].onScreen != nil {
                finished.append(requests.remove(at: index))
            }
        }
        for request in finished.reversed() { Self.answer(request, fallback: nil) }
    }

    /// The deadline of request `id` passed: answered with the last frame it saw, or `fallback()`.
    func expire(_ id: Int, fallback: () -> [UInt8]?) {
        guard let index = requests.firstIndex(where: { $0.id == id }) else { return }
        let request = requests.remove(at: index)
        Self.answer(request, fallback: request.onScreen == nil ? fallback() : nil)
    }

    /// Answers every request with what each saw, or nil (the engine stopped).
    func cancelAll() {
        let all = requests
        requests = []
        for request in all { Self.answer(request, fallback: nil) }
    }

    private static func answer(_ request: Request, fallback: [UInt8]?) {
        request.deadline?.cancel()
        if let seen = request.onScreen {
            request.completion(seen.pixels, seen.vblank)
        } else {
            request.completion(fallback, nil)
        }
    }
}
