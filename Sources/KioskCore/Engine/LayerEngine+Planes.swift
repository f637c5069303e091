/// Overlay planes: at each composition the layers that prefer a plane (`Layer.prefersOverlayPlane`) and qualify are
/// offered to the output's `OverlayPlanes`; those it takes are left out of the flattened frame, so the compositor
/// never draws their pixels (the frame diff damages where such a layer was, and the primary plane shows what lies
/// under it, which the plane above covers). Everything else is composited as usual. A change of what the planes show
/// asks for a present even when the composition has no damage. Main thread, like the engine.
extension LayerEngine {
    /// `entries` (back to front) without the layers that go on planes; records each eligible layer's path.
    func leavingOutPlaneLayers(_ entries: [FrameDiff.Entry]) -> [FrameDiff.Entry] {
        let eligible = Self.planeEligibleLayers(in: rootLayer)
        guard !eligible.isEmpty || !planeLayout.isEmpty else {
            layerPaths = []
            return entries
        }
        var reasons: [ObjectIdentifier: String] = [:]
        var candidates: [OverlayCandidate] = []
        let names = eligible.isEmpty ? [:] : Self.layerNames(in: rootLayer)
        for (index, entry) in entries.enumerated() where eligible[entry.id] != nil {
            if let reason = disqualification(of: entry, at: index, in: entries, names: names) {
                reasons[entry.id] = reason
            } else if case .surface(let surface) = entry.item.source {
                candidates.append(OverlayCandidate(id: entry.id, name: names[entry.id] ?? "layer",
                                                   surface: surface, frame: entry.item.frame))
            }
        }
        var placed: [PlanePlacement] = []
        if let overlayPlanes {
            let answers = overlayPlanes.assign(candidates)
            for (candidate, answer) in zip(candidates, answers) {
                if let answer {
                    reasons[candidate.id] = answer
                } else {
                    placed.append(PlanePlacement(id: candidate.id, surface: candidate.surface, frame: candidate.frame))
                }
            }
        } else {
            for candidate in candidates { reasons[candidate.id] = "no overlay planes" }
        }
        if placed != planeLayout { presentRequested = true }
        planeLayout = placed
        let onPlanes = Set(placed.map(\.id))
        layerPaths = entries.compactMap { entry in
            guard eligible[entry.id] != nil else { return nil }
            let name = names[entry.id] ?? "layer"
            if onPlanes.contains(entry.id) { return LayerPathReport(layer: name, path: .plane) }
            return LayerPathReport(layer: name, path: .composited, reason: reasons[entry.id])
        }
        return onPlanes.isEmpty ? entries : entries.filter { !onPlanes.contains($0.id) }
    }

    /// Why the entry at `index` cannot go on a plane, or nil when it may be offered.
    private func disqualification(of entry: FrameDiff.Entry, at index: Int, in entries: [FrameDiff.Entry],
                                  names: [ObjectIdentifier: String]) -> String? {
        let item = entry.item
        guard case .surface = item.source else { return "no frame yet" }
        if item.transform != nil { return "transformed" }
        if item.shownOpacity < 1 { return "translucent" }
        if item.clip != nil { return "clipped" }
        if overlayPlanes?.cropsAtScreenEdge == true {
            guard !item.frame.intersection(screen).isEmpty else { return "off the screen" }
        } else {
            guard screen.encloses(item.frame) else { return "crosses the screen edge" }
        }
        // A plane above the primary covers whatever is composited over the layer, so anything drawn later that
        // touches it needs the layer composited.
        if let above = entries[(index + 1)...].first(where: { !$0.visible.intersection(entry.visible).isEmpty }) {
            return "overlapped by \(names[above.id] ?? "a layer")"
        }
        return nil
    }

    /// The frame on screen as a capture shows it: the compositor's copy of its shadow buffer with the layers on
    /// overlay planes drawn where the planes show them (the compositor never draws those). Planes are used on
    /// unrotated outputs only, so their frames are the panel's coordinates.
    func screenSnapshot(_ compositor: any Compositing) -> [UInt8] {
        var pixels = compositor.snapshot()
        let size = compositor.size
        for placement in planeLayout {
            let surface = placement.surface, frame = placement.frame
            guard surface.size.width == frame.width, surface.size.height == frame.height,
                  pixels.count >= size.width * size.height * 4 else { continue }
            let visible = frame.intersection(Rect(x: 0, y: 0, width: size.width, height: size.height))
            guard !visible.isEmpty else { continue }
            pixels.withUnsafeMutableBytes { out in
                guard let base = out.baseAddress else { return }
                for y in visible.y..<visible.y + visible.height {
                    let source = surface.bytes + (y - frame.y) * surface.stride + (visible.x - frame.x) * 4
                    (base + (y * size.width + visible.x) * 4).copyMemory(from: source, byteCount: visible.width * 4)
                }
            }
        }
        return pixels
    }

    /// The visible layers that prefer a plane, by identity.
    private static func planeEligibleLayers(in root: Layer) -> [ObjectIdentifier: Layer] {
        var found: [ObjectIdentifier: Layer] = [:]
        func walk(_ layer: Layer) {
            guard !layer.isHidden else { return }
            if layer.prefersOverlayPlane { found[ObjectIdentifier(layer)] = layer }
            guard !layer.rasterizesSubtree else { return }
            for child in layer.children { walk(child) }
        }
        walk(root)
        return found
    }

    /// Every layer's name (its nearest named ancestor's for an unnamed one), for the reasons `stats` gives.
    private static func layerNames(in root: Layer) -> [ObjectIdentifier: String] {
        var names: [ObjectIdentifier: String] = [:]
        func walk(_ layer: Layer, inherited: String) {
            let name = layer.name ?? inherited
            names[ObjectIdentifier(layer)] = name
            for child in layer.children { walk(child, inherited: name) }
        }
        walk(root, inherited: "root")
        return names
    }
}

/// A layer on an overlay plane: the surface the plane shows and where. A value, main thread.
struct PlanePlacement: Equatable {
    let id: ObjectIdentifier
    let surface: LayerSurface
    let frame: Rect

    static func == (a: PlanePlacement, b: PlanePlacement) -> Bool {
        a.id == b.id && a.surface === b.surface && a.frame == b.frame
    }
}
