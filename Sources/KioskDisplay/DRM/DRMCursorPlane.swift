import CDRM
import CKioskShims
import Glibc
import KioskCore
import Logging

/// The pointer's cursor on the output's KMS cursor plane: a small ARGB8888 dumb buffer the image is written into
/// once, shown by setting the plane's FB_ID and CRTC_ID, moved by its CRTC_X/CRTC_Y, hidden by clearing FB_ID and
/// CRTC_ID. It rides along on the backend's atomic commits as a `DRMCommitHook`: a change is added to the next page
/// flip (the runtime asks the engine for one, `LayerEngine.setNeedsPresent`, which waits for a flip in flight), so
/// the main loop never makes a blocking or extra commit for it, and the one-flip-in-flight rule holds.
///
/// Atomic commits only. The legacy cursor calls (drmModeSetCursor2, drmModeMoveCursor) are not used: on a driver
/// built on the atomic helpers they become a blocking commit that waits for the flip in flight, which the main loop
/// must never do. An output that falls back to legacy commits takes the cursor off the plane once and reports
/// `isUsable` false, and the runtime composites it from then on.
///
/// Lives on the main thread with its backend, which holds it from `init` on.
public final class DRMCursorPlane: DRMCommitHook, CursorPlane {
    public let planeID: UInt32
    public let maximumImageSize: Size
    private weak var backend: DRMBackend?
    private let props: DRMPropertyTable
    private let buffer: DumbBuffer
    /// Holds the plane against the card's other outputs while this object lives.
    private let claim: DRMClaim
    private let logger = Logger(label: "kioskd.drm")
    /// Where the image should be, nil: hidden.
    private var wanted: (x: Int, y: Int)?
    /// What the kernel was last given (through a committed flip or a modeset); nil: hidden.
    private var committed: (x: Int, y: Int)?
    /// What the flip being built adds, until it is committed or refused.
    private var building: (x: Int, y: Int)??
    private var imageSet = false
    private var takenOffAfterFallback = false

    /// Finds a cursor plane that can reach the backend's CRTC and takes ARGB8888, allocates its buffer (the size
    /// the driver gives as DRM_CAP_CURSOR_WIDTH/HEIGHT, 64x64 where it gives none) and attaches to the backend's
    /// commits.
    ///
    /// - Throws: `OutputError` when the backend does not use atomic commits or the card has no such plane.
    public init(backend: DRMBackend) throws {
        let name = backend.info.connector
        guard backend.commit.carriesHooks else {
            throw OutputError("connector \(name): a cursor plane needs atomic commits; the cursor is composited")
        }
        let res = try DRMResources(card: backend.card)
        let crtcBit = UInt32(1) << UInt32(backend.plan.crtc.index)
        let argb = kiosk_fourcc_argb8888()
        // A cursor plane another output on the card holds is not used.
        let taken = backend.card.session.taken()
        guard let plane = res.planes.first(where: {
            $0.type == .cursor && $0.possibleCRTCs & crtcBit != 0 && $0.formats.contains(argb) && taken.planes[$0.id] == nil
        }) else {
            throw OutputError("connector \(name): CRTC \(backend.plan.crtc.id) has no cursor plane taking ARGB8888")
        }
        func cap(_ which: Int32) -> Int {
            var value: UInt64 = 0
            return drmGetCap(backend.card.fd, UInt64(which), &value) == 0 && value > 0 ? Int(value) : 64
        }
        maximumImageSize = Size(width: cap(DRM_CAP_CURSOR_WIDTH), height: cap(DRM_CAP_CURSOR_HEIGHT))
        buffer = try DumbBuffer(card: backend.card, size: maximumImageSize, format: argb)
        memset(buffer.base, 0, buffer.byteCount)
        planeID = plane.id
        props = plane.properties
        claim = backend.card.session.claim(DRMTakenObjects(planes: [plane.id: "connector \(name) (cursor)"]), owner: backend.token)
        self.backend = backend
        backend.commitHooks.append(self)
    }

    public var name: String { "plane \(planeID)" }

    public var isUsable: Bool { backend?.commit.carriesHooks == true }

    public func setImage(_ image: CursorImage) throws {
        guard image.size.width <= maximumImageSize.width, image.size.height <= maximumImageSize.height else {
            throw OutputError("cursor \(name): image \(image.size) is larger than the plane's \(maximumImageSize)")
        }
        // The buffer is shown whole (its transparent rest included), so the plane's size never changes.
        memset(buffer.base, 0, buffer.byteCount)
        image.pixels.withUnsafeBytes { src in
            let row = image.size.width * 4
            for y in 0..<image.size.height {
                memcpy(buffer.base + y * buffer.stride, src.baseAddress! + y * row, row)
            }
        }
        imageSet = true
    }

    public func place(at origin: (x: Int, y: Int)?) {
        wanted = imageSet ? origin : nil
    }

    /// Adds the plane's state to `request`: the image at `origin`, or off.
    private func add(_ origin: (x: Int, y: Int)?, to request: AtomicRequest, crtc: UInt32) {
        let p = planeID
        guard let origin else {
            request.add(p, props["FB_ID"]?.id, 0, what: "cursor plane \(p) FB_ID")
            request.add(p, props["CRTC_ID"]?.id, 0, what: "cursor plane \(p) CRTC_ID")
            return
        }
        let w = UInt64(maximumImageSize.width), h = UInt64(maximumImageSize.height)
        request.add(p, props["FB_ID"]?.id, UInt64(buffer.framebufferID), what: "cursor plane \(p) FB_ID")
        request.add(p, props["CRTC_ID"]?.id, UInt64(crtc), what: "cursor plane \(p) CRTC_ID")
        request.add(p, props["SRC_X"]?.id, 0, what: "cursor plane \(p) SRC_X")
        request.add(p, props["SRC_Y"]?.id, 0, what: "cursor plane \(p) SRC_Y")
        // Source coordinates are 16.16 fixed point; CRTC_X/Y are signed, so the image may hang off the panel's edge.
        request.add(p, props["SRC_W"]?.id, w << 16, what: "cursor plane \(p) SRC_W")
        request.add(p, props["SRC_H"]?.id, h << 16, what: "cursor plane \(p) SRC_H")
        request.add(p, props["CRTC_X"]?.id, UInt64(bitPattern: Int64(origin.x)), what: "cursor plane \(p) CRTC_X")
        request.add(p, props["CRTC_Y"]?.id, UInt64(bitPattern: Int64(origin.y)), what: "cursor plane \(p) CRTC_Y")
        request.add(p, props["CRTC_W"]?.id, w, what: "cursor plane \(p) CRTC_W")
        request.add(p, props["CRTC_H"]?.id, h, what: "cursor plane \(p) CRTC_H")
    }

    private static func same(_ a: (x: Int, y: Int)?, _ b: (x: Int, y: Int)?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case let (a?, b?): a == b
        default: false
        }
    }

    // MARK: DRMCommitHook

    func modesetting(_ request: AtomicRequest, buffer: DumbBuffer, modeBlobID: UInt32, backend: DRMBackend) throws {
        add(wanted, to: request, crtc: backend.plan.crtc.id)
        committed = wanted
    }

    func flipping(_ request: AtomicRequest, backend: DRMBackend) throws -> UInt32 {
        building = nil
        guard !Self.same(wanted, committed) else { return 0 }
        add(wanted, to: request, crtc: backend.plan.crtc.id)
        building = .some(wanted)
        return 0
    }

    func flipCommitted(_ committed: Bool) {
        defer { building = nil }
        if let backend, !backend.commit.carriesHooks {
            takeOffAfterFallback(backend)
            return
        }
        if committed, let building { self.committed = building }
    }

    func turningOff(_ request: AtomicRequest) {
        add(nil, to: request, crtc: 0)
        committed = nil
    }

    func restoring(_ request: AtomicRequest) {
        turningOff(request)
    }

    /// The output fell back to legacy commits, which leave other planes as they are: the cursor comes off once,
    /// with a legacy SetPlane (a blocking call, made once on a fault path that has just made a blocking SetCrtc).
    private func takeOffAfterFallback(_ backend: DRMBackend) {
        guard !takenOffAfterFallback else { return }
        takenOffAfterFallback = true
        wanted = nil
        guard committed != nil else { return }
        committed = nil
        do {
            try backend.commit.takeOff(plane: planeID, properties: props, backend: backend)
            logger.warning("cursor \(name): the output fell back to legacy commits; the cursor is composited from now on")
        } catch {
            logger.error("cursor \(name): taking it off after the fallback to legacy commits failed: \(error)")
        }
    }
}
