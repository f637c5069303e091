import Logging

private let logger = Logger(label: "kioskd.engine")

/// The engine's render traffic: the display observer dispatches a render per layer that asked (at most one in
/// flight per layer, the next one waiting for it), registered with the transaction group holding the layer; the
/// commit observer receives finished renders first, applying each unless its sentinel says it can never be shown,
/// and releases a group's results together once its first batch is complete. Main thread, like the engine.
extension LayerEngine {
    func dispatchRenders() {
        for layer in transaction.takeRenderRequests() { dispatchIfAsked(layer) }
        submitDispatched()
    }

    /// Whether the layer's recent renders all took longer than a frame (`RenderJobInfo.isLong`).
    private func rendersLong(_ layer: Layer) -> Bool {
        layer.recentRenderTimes.shortest.map { $0 > displayLink.frameDuration } ?? false
    }

    /// A long render waits when it would take the last worker not running a long render while a short render is in
    /// flight: that render's layer may have a request waiting for it to come back (at most one render per layer is
    /// in flight), which the worker would otherwise find taken for a whole long render. It waits until no short
    /// render is in flight, or a frame at most (`retryDeferredLongRenders`).
    private func defersLongRender(of layer: Layer) -> Bool {
        guard pool.workerCount > 0, layer.displaysAsynchronously, rendersLong(layer) else { return false }
        var longInFlight = 0, shortInFlight = false
        for request in inFlight.values where request.onPool {
            if request.isLong { longInFlight += 1 } else { shortInFlight = true }
        }
        return shortInFlight && longInFlight >= pool.workerCount - 1
    }

    /// Dispatches the long renders held back by `defersLongRender` once no short render is in flight or they have
    /// waited a frame, with the renders dispatched in the same pass.
    private func retryDeferredLongRenders() {
        guard !deferredLongRenders.isEmpty else { return }
        let shortInFlight = inFlight.values.contains { $0.onPool && !$0.isLong }
        let now = loop.now
        let due = deferredLongRenders.filter { !shortInFlight || now - $0.since >= displayLink.frameDuration }
        guard !due.isEmpty else { return }
        deferredLongRenders.removeAll { entry in due.contains { $0.layer === entry.layer } }
        for entry in due { dispatchIfAsked(entry.layer, mayDefer: false) }
    }

    /// Hands the renders dispatched in this pass to the pool in one submission, so the pool's order (short before
    /// long) decides among them rather than which was dispatched first.
    private func submitDispatched() {
        let jobs = dispatchedJobs
        dispatchedJobs.removeAll()
        pool.submit(jobs)
    }

    private func dispatchIfAsked(_ layer: Layer, mayDefer: Bool = true) {
        guard layer.host === self, layer.needsRender else { return }
        if layer.outermostRasterizingAncestor != nil {
            // Its pixels belong to the ancestor's surface, which was asked to render when the layer changed.
            layer.needsRender = false
            return
        }
        // At most one render per layer in flight; the request waits for it (see `receive`), so the render that
        // follows draws the newest data.
        if layer.renderInFlight != nil { return }
        // A purged subtree waits for `restoreSurfaces`, which renders the newest content.
        if layer.isInPurgedSubtree { return }
        if deferredLongRenders.contains(where: { $0.layer === layer }) { return }
        if mayDefer, defersLongRender(of: layer) {
            deferredLongRenders.append((layer, loop.now))
            return
        }
        dispatchRender(for: layer)
    }

    private func dispatchRender(for layer: Layer) {
        layer.willRender?(layer)
        // Cleared after `willRender`, which may set new content: that content is rendered now, not again later.
        layer.needsRender = false
        let size = Size(width: layer.frame.width, height: layer.frame.height)
        let work: RenderWork?
        if layer.isSurfaceless {
            work = nil
        } else if layer.rasterizesSubtree {
            work = .rasterized(RasterPlan(root: layer))
        } else if let content = layer.content {
            work = .content(content)
        } else {
            return
        }
        guard size.width > 0, size.height > 0 else {
            if layer.renderedSurface != nil {
                layer.renderedSurface = nil
                needsComposite = true
            }
            return
        }
        let capture = layer.sentinel.capture()
        lastRenderID += 1
        let renderID = lastRenderID
        let label = layer.name ?? work?.kind ?? layer.content?.kind ?? "fill"
        inFlight[renderID] = RenderRequest(id: renderID, layer: layer, capture: capture, kind: work?.kind ?? layer.content?.kind ?? "fill",
                                           groupID: joinGroup(of: layer, renderID: renderID), label: label,
                                           onPool: work != nil && layer.displaysAsynchronously, isLong: rendersLong(layer))
        layer.renderInFlight = renderID
        guard let work else {
            // A plain fill: done at once, received with this turn's renders (in its group, if one holds it).
            synchronousOutputs.append(RenderOutput(renderID: renderID, result: .drawnByCompositor, duration: .zero))
            return
        }
        counters.rendersStarted += 1
        let clock = renderClock
        if layer.displaysAsynchronously {
            let inbox = self.inbox
            // Known to be long when each of the layer's recent renders took longer than a frame: the pool runs it
            // after every render not known to be long.
            let isLong = inFlight[renderID]?.isLong ?? false
            dispatchedJobs.append((RenderJobInfo(label: label, kind: work.kind, priority: layer.drawingPriority, isLong: isLong), {
                inbox.deliver(RenderOutput.render(work, size: size, capture: capture, renderID: renderID, clock: clock))
            }))
        } else {
            synchronousOutputs.append(RenderOutput.render(work, size: size, capture: capture, renderID: renderID, clock: clock))
        }
    }

    /// Registers a render with the transaction group holding the layer, if any; returns the group's id.
    ///
    /// A group only makes a *newly shown* subtree appear whole: once it has landed, changes inside it are applied
    /// one by one as they finish. And each layer joins with its first render only, so a layer updated again while
    /// the group waits cannot hold the group back; its newer render lands alone (and wins over the held one).
    private func joinGroup(of layer: Layer, renderID: UInt64) -> ObjectIdentifier? {
        guard let groupLayer = layer.outermostHoldingGroup, !groupLayer.groupHasLanded else { return nil }
        let id = ObjectIdentifier(groupLayer)
        let group: TransactionGroupState
        if let existing = groups[id], existing.layer === groupLayer {
            group = existing
        } else {
            group = TransactionGroupState(layer: groupLayer)
            groups[id] = group
        }
        guard group.members.insert(ObjectIdentifier(layer)).inserted else { return nil }
        group.pending.insert(renderID)
        return id
    }

    func receiveRenders() {
        let outputs = synchronousOutputs + inbox.drain()
        synchronousOutputs.removeAll()
        var waited: [Layer] = []
        for output in outputs {
            if let layer = receive(output) { waited.append(layer) }
        }
        for (id, group) in groups where group.canRelease {
            groups[id] = nil
            release(group)
        }
        // A request that waited for the render just received is dispatched now, before this turn composes and
        // presents, rather than at the next turn's display observer: the newest data is drawn that much sooner.
        // With a layout pending (it may resize the layer) it stays queued for the next turn, which lays out first.
        if transaction.pendingLayoutCount == 0 {
            retryDeferredLongRenders()
            for layer in waited { dispatchIfAsked(layer) }
            submitDispatched()
        }
    }

    /// Takes one finished render; returns its layer when a request made while it was in flight waits to be
    /// dispatched (it is queued in the transaction too).
    private func receive(_ output: RenderOutput) -> Layer? {
        guard let request = inFlight.removeValue(forKey: output.renderID) else { return nil }
        if case .drawnByCompositor = output.result {} else { counters.rendersCompleted += 1 }
        var waiting: Layer?
        if let layer = request.layer, layer.renderInFlight == request.id {
            layer.renderInFlight = nil
            // A request made while this render was in flight is dispatched once this turn's renders are received.
            if layer.needsRender, layer.host === self {
                transaction.requestRender(layer)
                waiting = layer
            }
        }
        var group = request.groupID.flatMap { groups[$0] }
        if group?.pending.remove(request.id) == nil { group = nil }
        let layer = request.layer
        switch output.result {
        case .failed(let message):
            counters.rendersFailed += 1
            logger.error("layer \(request.label): render failed: \(message)")
            renderFailedListeners.emit((layer: request.label, message: message))
            if let layer { layer.didRender?(layer, false) }
        case .cancelled:
            drop(request)
        case .surface(let surface):
            renderTimes[request.kind, default: LatencyRecorder(precision: .coarse)].record(output.duration)
            layer?.recentRenderTimes.record(output.duration)
            if let group {
                group.ready.append((request, surface))
            } else {
                apply(surface, for: request)
            }
        case .drawnByCompositor:
            if let group {
                group.ready.append((request, nil))
            } else {
                apply(nil, for: request)
            }
        }
        return waiting
    }

    /// Shows every result the group held, in one frame.
    private func release(_ group: TransactionGroupState) {
        group.layer?.groupHasLanded = true
        for (request, surface) in group.ready { apply(surface, for: request) }
        group.ready.removeAll()
        needsComposite = true
    }

    /// Applies a result unless it can never be shown (its layer is gone, its content removed) or a newer render of
    /// the layer is already shown. A result that newer requests have superseded is still applied: the newest
    /// finished render is what the layer shows.
    /// `surface` nil: a plain fill, which holds no surface.
    private func apply(_ surface: LayerSurface?, for request: RenderRequest) {
        guard let layer = request.layer, !request.capture.isCancelled(),
              layer.shownGeneration.map({ request.capture.value >= $0 }) ?? true else {
            drop(request)
            return
        }
        if surface != nil, !layer.isDrawable {
            // It stopped drawing while the render ran (a subtree flattened for a transition that has ended): the
            // surface would be held and never shown.
            drop(request)
            return
        }
        if layer.isInPurgedSubtree {
            // Purged while it rendered: drawn again, newest data, when the subtree is restored.
            layer.needsRender = true
            drop(request)
            return
        }
        layer.shownGeneration = request.capture.value
        // A plain fill's display (no surface) drops a surface left from an earlier content, but not an external
        // frame shown over it since (`showExternalSurface` moves `shownGeneration` past this request).
        layer.renderedSurface = surface
        needsComposite = true
        layer.didRender?(layer, true)
    }

    private func drop(_ request: RenderRequest) {
        counters.staleRendersDropped += 1
        if let layer = request.layer { layer.didRender?(layer, false) }
    }
}
