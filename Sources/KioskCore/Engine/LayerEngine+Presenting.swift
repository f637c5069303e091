import Logging

private let logger = Logger(label: "kioskd.engine")

/// How the engine turns the tree into frames on screen: the commit observer flattens the tree and diffs it with
/// the previous frame into damage (`LayerFlattener`, `FrameDiff`), the compositor composes that damage into the
/// shadow buffer, and, with no flip pending, the damage is copied into a free scanout buffer and presented. A
/// completed flip ticks the display link (through the animations observer), answers screenshots and presents the
/// composition that waited for it. Failed presents go to the fault policies (`FrameFaults.swift`). Main thread,
/// like the engine.
extension LayerEngine {
    func composeFrame() {
        needsComposite = false
        let flattened = LayerFlattener.flatten(rootLayer, screen: screen) { [self] layer in isAwaitingFirstBatch(layer) }
        let entries = leavingOutPlaneLayers(flattened)
        let frame = FrameDiff.diff(entries, against: lastFrame, forcedDamage: forcedDamage, screen: screen)
        forcedDamage = []
        lastFrame = frame.record
        guard !frame.damage.isEmpty, let compositor else { return }
        compositor.compose(frame.items, damage: frame.damage)
        composedHasVisibleContent = Self.hasVisibleContent(frame.items, screen: screen)
        counters.framesComposed += 1
        if compositionAwaitingPresent { counters.compositionsReplaced += 1 }
        compositionAwaitingPresent = true
    }

    func isAwaitingFirstBatch(_ layer: Layer) -> Bool {
        guard layer.holdsChildrenUntilReady, !layer.groupHasLanded, let group = groups[ObjectIdentifier(layer)] else {
            return false
        }
        return group.layer === layer
    }

    /// Presents the composition waiting for a buffer, if no flip is pending. Outside a flip callback, also presents
    /// the unchanged frame while something animates, because only flips tick the display link. While something
    /// animates and a repaint window is set, the present waits for it before the next vblank (`RepaintWindow.swift`).
    func presentIfPossible(atFlip: Bool) {
        guard state == .running, presentsEnabled, !presentsHeldByFault, let backend, !backend.isFlipPending else { return }
        let unchanged: Bool
        if compositionAwaitingPresent {
            unchanged = false
        } else if !atFlip, displayLink.isActive || presentRequested {
            unchanged = true
        } else {
            return
        }
        if presentWaitsForRepaintWindow() { return }
        present(unchanged: unchanged, on: backend)
    }

    private func present(unchanged: Bool, on backend: any DisplayBackend) {
        guard let compositor else { return }
        guard let buffer = backend.acquireBuffer() else {
            // Every buffer is on screen or queued; the next flip frees one and presents from its callback.
            logger.debug("\(backend.info.connector): no free buffer to present into")
            return
        }
        let copied = compositor.copy(into: buffer)
        do {
            try backend.present(buffer, damage: copied.rects)
        } catch {
            backend.releaseBuffer(buffer)
            // The buffer's contents are unknown from here on; copy it whole next time.
            compositor.invalidateBuffers()
            presentFailed(error)
            return
        }
        armFlipDeadline()
        repaintPresented()
        presentedFrame = composedHasVisibleContent.flatMap { content in
            compositor.fingerprint.map { ShownFrame(fingerprint: $0, hasVisibleContent: content) }
        }
        compositionAwaitingPresent = false
        presentRequested = false
        screenshots.framePresented(shadow: { self.screenSnapshot(compositor) })
        timedScreenshots.framePresented(now: loop.now, period: displayLink.frameDuration, shadow: { self.screenSnapshot(compositor) })
        counters.framesPresented += 1
        if unchanged { counters.unchangedFramesPresented += 1 }
        externalFramesPresented()
        bytesCopied.record(copied.bytes)
        if !unchanged { presentListeners.emit(copied.rects) }
    }

    func flipCompleted(_ event: FlipEvent) {
        disarmFlipDeadline()
        counters.framesFlipped += 1
        framesFlippedOnOutput += 1
        fpsCounter.record(event.timestamp)
        // Only a flip made while something animates starts a repaint window: from an idle output a present goes
        // out at once, as no flip of its own can be holding back what lands before the vblank.
        repaint.flipped(at: event.timestamp, frame: displayLink.frameDuration)
        repaint.lastVblank = displayLink.isActive ? event.timestamp : nil
        lastFlipTime = event.timestamp
        pendingTick = event
        screenFlipped(presentedFrame)
        flipListeners.emit(event)
        screenshots.frameFlipped()
        timedScreenshots.frameFlipped(at: event.timestamp, period: displayLink.frameDuration)
        // The newest composition goes out now, one refresh after the frame before it.
        presentIfPossible(atFlip: true)
    }
}
