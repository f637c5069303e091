import CDRM
import CKioskShims
import Glibc
import KioskCore
import Logging

/// The output's overlay planes for layers scanned out directly (`OverlayPlanes`): the overlay planes that reach
/// the backend's CRTC, take ARGB8888 and stack above the primary (by zpos, where the driver has one). Each plane has
/// two ARGB8888 dumb buffers of its layer's size: the one on screen is never written; the layer's pixels are copied
/// into the other when the plane is added to a page flip. Layouts are checked with a TEST_ONLY atomic commit (a
/// quick ioctl; nothing blocks) when the engine offers them; the planes then ride along on the backend's atomic
/// page flips as a `DRMCommitHook`, like the cursor plane. A layer that only moves (the same surface at another
/// place: a page sliding) keeps the buffer on screen and only moves the plane, and a layer reaching past the
/// screen's edge shows its part on the screen (the source rectangle cut to match). Atomic commits only: after a
/// fallback to legacy commits every layer is composited.
///
/// Lives on the main thread with its backend, which holds it from `init` on.
public final class DRMOverlayPlanes: DRMCommitHook, OverlayPlanes {
    /// One overlay plane and its buffers.
    final class Plane {
        let id: UInt32
        let props: DRMPropertyTable
        var buffers: [DumbBuffer] = []
        /// The buffer on screen (or committed to be), nil while the plane is off.
        var front: Int?
        init(id: UInt32, props: DRMPropertyTable) { self.id = id; self.props = props }
    }

    /// What a plane shows: a layer's surface at a scene rectangle.
    struct Shown {
        let surface: LayerSurface
        let frame: Rect
    }

    public var planeIDs: [UInt32] { planes.map(\.id) }
    private weak var backend: DRMBackend?
    private let planes: [Plane]
    /// Holds the planes against the card's other outputs while this object lives.
    private let claim: DRMClaim
    private let rotation: OutputRotation
    private let logger = Logger(label: "kioskd.drm")
    /// Per plane (by index), what the next page flip should show; nil: off.
    private var wanted: [Shown?]
    /// Per plane, what the kernel was last given.
    private var committed: [Shown?]
    /// The flip being built, until it is committed or refused: per plane, the layout and the buffer written.
    private var building: [(shown: Shown?, buffer: Int?)]?

    /// Finds the overlay planes for the backend's CRTC and attaches to its commits.
    ///
    /// - Throws: `OutputError` when the backend does not use atomic commits or no overlay plane fits.
    public init(backend: DRMBackend, rotation: OutputRotation) throws {
        let name = backend.info.connector
        guard backend.commit.carriesHooks else {
            throw OutputError("connector \(name): overlay planes need atomic commits; every layer is composited")
        }
        let res = try DRMResources(card: backend.card)
        let crtcBit = UInt32(1) << UInt32(backend.plan.crtc.index)
        let argb = kiosk_fourcc_argb8888()
        let primaryZ = res.planes.first { $0.id == backend.plan.primaryPlane.id }?.properties["zpos"]?.value
        // Planes another output on the card holds are not used.
        let taken = backend.card.session.taken()
        let found = res.planes.filter { plane in
            guard plane.type == .overlay, plane.possibleCRTCs & crtcBit != 0, plane.formats.contains(argb),
                  taken.planes[plane.id] == nil else {
                return false
            }
            // Below the primary, the plane would need the primary transparent over it; those are not used.
            if let primaryZ, let z = plane.properties["zpos"]?.value, z <= primaryZ { return false }
            return true
        }
        guard !found.isEmpty else {
            throw OutputError("connector \(name): CRTC \(backend.plan.crtc.id) has no overlay plane above the primary taking ARGB8888")
        }
        planes = found.map { Plane(id: $0.id, props: $0.properties) }
        claim = backend.card.session.claim(DRMTakenObjects(planes: Dictionary(uniqueKeysWithValues: found.map {
            ($0.id, "connector \(name) (overlay)")
        })), owner: backend.token)
        wanted = Array(repeating: nil, count: found.count)
        committed = wanted
        self.rotation = rotation
        self.backend = backend
        backend.commitHooks.append(self)
    }

    // MARK: OverlayPlanes

    public var cropsAtScreenEdge: Bool { true }

    public func assign(_ candidates: [OverlayCandidate]) -> [String?] {
        guard let backend else { return candidates.map { _ in "no output" } }
        guard backend.commit.carriesHooks else {
            wanted = wanted.map { _ in nil }
            return candidates.map { _ in "legacy commits" }
        }
        guard rotation == .degrees0 else {
            return candidates.map { _ in "rotated output" }
        }
        var answers: [String?] = candidates.map { _ in "no free plane" }
        var layout: [Shown?] = planes.map { _ in nil }
        for (index, candidate) in candidates.prefix(planes.count).enumerated() {
            do {
                try ensureBuffers(planes[index], size: candidate.surface.size, backend: backend)
                layout[index] = Shown(surface: candidate.surface, frame: candidate.frame)
                answers[index] = nil
            } catch {
                answers[index] = "\(error)"
            }
        }
        if layout.contains(where: { $0 != nil }) {
            // Only the layout is tried (which buffer shows does not matter to the check): the back buffers' ids.
            do {
                let request = try AtomicRequest()
                for (index, shown) in layout.enumerated() {
                    add(shown, plane: planes[index], buffer: shown == nil ? nil : 1 - (planes[index].front ?? 1),
                        to: request, crtc: backend.plan.crtc.id)
                }
                let flags = UInt32(DRM_MODE_ATOMIC_TEST_ONLY)
                if case .failure(let error) = request.commit(fd: backend.card.fd, flags: flags, userData: nil) {
                    let reason = "test-only refused: " + (error.errno.map(errnoName) ?? error.message)
                    for index in answers.indices where answers[index] == nil { answers[index] = reason }
                    layout = planes.map { _ in nil }
                }
            } catch {
                for index in answers.indices where answers[index] == nil { answers[index] = "\(error)" }
                layout = planes.map { _ in nil }
            }
        }
        wanted = layout
        return answers
    }

    /// Gives the plane buffers of `size`. A plane on screen at another size keeps its buffers (removing a
    /// framebuffer that is scanned out would make the kernel turn the plane off with a blocking commit): the layer
    /// is composited until the plane is off.
    private func ensureBuffers(_ plane: Plane, size: Size, backend: DRMBackend) throws {
        guard plane.buffers.first?.size != size else { return }
        guard plane.front == nil else {
            throw OutputError("overlay plane \(plane.id) is on screen at \(plane.buffers[0].size)")
        }
        let argb = kiosk_fourcc_argb8888()
        plane.buffers = try (0..<2).map { _ in try DumbBuffer(card: backend.card, size: size, format: argb) }
        plane.front = nil
    }

    /// Adds the plane's state to `request`: `buffer` at the scene rectangle of `shown`, or off.
    private func add(_ shown: Shown?, plane: Plane, buffer: Int?, to request: AtomicRequest, crtc: UInt32) {
        let p = plane.id, props = plane.props
        guard let shown, let buffer else {
            request.add(p, props["FB_ID"]?.id, 0, what: "overlay plane \(p) FB_ID")
            request.add(p, props["CRTC_ID"]?.id, 0, what: "overlay plane \(p) CRTC_ID")
            return
        }
        let fb = plane.buffers[buffer]
        // The part on the screen (a page sliding in reaches past its edge); `assign` offers none entirely off it.
        let screen = Rect(size: backend?.info.mode.size ?? shown.frame.size)
        guard let crop = shown.frame.planeCrop(bufferSize: fb.size, screen: screen) else {
            request.add(p, props["FB_ID"]?.id, 0, what: "overlay plane \(p) FB_ID")
            request.add(p, props["CRTC_ID"]?.id, 0, what: "overlay plane \(p) CRTC_ID")
            return
        }
        request.add(p, props["FB_ID"]?.id, UInt64(fb.framebufferID), what: "overlay plane \(p) FB_ID")
        request.add(p, props["CRTC_ID"]?.id, UInt64(crtc), what: "overlay plane \(p) CRTC_ID")
        // Source coordinates are 16.16 fixed point.
        request.add(p, props["SRC_X"]?.id, crop.source.x, what: "overlay plane \(p) SRC_X")
        request.add(p, props["SRC_Y"]?.id, crop.source.y, what: "overlay plane \(p) SRC_Y")
        request.add(p, props["SRC_W"]?.id, crop.source.width, what: "overlay plane \(p) SRC_W")
        request.add(p, props["SRC_H"]?.id, crop.source.height, what: "overlay plane \(p) SRC_H")
        request.add(p, props["CRTC_X"]?.id, UInt64(bitPattern: Int64(crop.onScreen.x)), what: "overlay plane \(p) CRTC_X")
        request.add(p, props["CRTC_Y"]?.id, UInt64(bitPattern: Int64(crop.onScreen.y)), what: "overlay plane \(p) CRTC_Y")
        request.add(p, props["CRTC_W"]?.id, UInt64(crop.onScreen.width), what: "overlay plane \(p) CRTC_W")
        request.add(p, props["CRTC_H"]?.id, UInt64(crop.onScreen.height), what: "overlay plane \(p) CRTC_H")
    }

    /// Copies `surface` (premultiplied ARGB32, as ARGB8888 scans out) into `buffer`, row by row.
    private static func copy(_ surface: LayerSurface, into buffer: DumbBuffer) {
        surface.copyPixels(into: buffer.base, stride: buffer.stride, size: buffer.size)
    }

    private static func same(_ a: Shown?, _ b: Shown?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case let (a?, b?): a.surface === b.surface && a.frame == b.frame
        default: false
        }
    }

    // MARK: DRMCommitHook

    func modesetting(_ request: AtomicRequest, buffer: DumbBuffer, modeBlobID: UInt32, backend: DRMBackend) throws {
        // The front buffers still hold what the planes showed; a modeset keeps them on.
        for (index, plane) in planes.enumerated() {
            let shown = plane.front == nil ? nil : committed[index]
            add(shown, plane: plane, buffer: plane.front, to: request, crtc: backend.plan.crtc.id)
        }
    }

    func flipping(_ request: AtomicRequest, backend: DRMBackend) throws -> UInt32 {
        var build: [(shown: Shown?, buffer: Int?)] = []
        var changed = false
        for (index, plane) in planes.enumerated() {
            let shown = wanted[index]
            if Self.same(shown, committed[index]) {
                build.append((committed[index], plane.front))
                continue
            }
            changed = true
            guard let shown, !plane.buffers.isEmpty else {
                add(nil, plane: plane, buffer: nil, to: request, crtc: 0)
                build.append((nil, nil))
                continue
            }
            if let front = plane.front, committed[index]?.surface === shown.surface {
                // The same pixels elsewhere: the plane moves, the buffer on screen stays.
                add(shown, plane: plane, buffer: front, to: request, crtc: backend.plan.crtc.id)
                build.append((shown, front))
                continue
            }
            // The previous flip has completed (one flip in flight), so the buffer not in front is free to write.
            let back = 1 - (plane.front ?? 1)
            Self.copy(shown.surface, into: plane.buffers[back])
            add(shown, plane: plane, buffer: back, to: request, crtc: backend.plan.crtc.id)
            build.append((shown, back))
        }
        building = changed ? build : nil
        return 0
    }

    func flipCommitted(_ committed: Bool) {
        defer { building = nil }
        if let backend, !backend.commit.carriesHooks {
            takeOffAfterFallback(backend)
            return
        }
        guard committed, let building else { return }
        for (index, entry) in building.enumerated() {
            self.committed[index] = entry.shown
            planes[index].front = entry.buffer
        }
    }

    /// The output fell back to legacy commits, which leave other planes as they are: the planes come off once, with
    /// legacy SetPlane calls (blocking, made once on a fault path that has just made a blocking SetCrtc).
    private func takeOffAfterFallback(_ backend: DRMBackend) {
        wanted = wanted.map { _ in nil }
        for (index, plane) in planes.enumerated() where committed[index] != nil {
            committed[index] = nil
            plane.front = nil
            do {
                try backend.commit.takeOff(plane: plane.id, properties: plane.props, backend: backend)
            } catch {
                logger.error("overlay plane \(plane.id): taking it off after the fallback to legacy commits failed: \(error)")
            }
        }
    }

    func turningOff(_ request: AtomicRequest) {
        for (index, plane) in planes.enumerated() {
            add(nil, plane: plane, buffer: nil, to: request, crtc: 0)
            committed[index] = nil
            plane.front = nil
        }
    }

    func restoring(_ request: AtomicRequest) {
        turningOff(request)
    }

    /// What `stats` and the VM tests read back: per plane, the framebuffer on it (0: off).
    public var frontFramebufferIDs: [UInt32] {
        planes.map { plane in plane.front.map { plane.buffers[$0].framebufferID } ?? 0 }
    }
}
