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
