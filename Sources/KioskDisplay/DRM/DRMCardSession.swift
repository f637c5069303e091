import CDRM
import Glibc
import KioskCore
import Logging

/// What the outputs on one open card share. DRM master belongs to one open file description, so every
/// `DRMBackend` on a card uses the same `DRMCard` (`DRMCard.shared(path:)`), and through it this session: the
/// card's fd is watched on the main loop once (epoll takes a descriptor once), its events are read once per
/// wake-up with one `drmHandleEvent`, each page-flip event goes to the backend that asked for it, and a hang-up or
/// error on the fd reaches every backend on the card. It also keeps the KMS objects each output holds (`DRMClaim`),
/// so an output opened beside a running one chooses a connector, CRTC and planes the other does not use.
///
/// A page flip's user data is the backend's token, never its address: an event that arrives after its backend has
/// gone (a flip that outlived a timed-out `stop`) finds no member and is dropped, instead of reaching freed memory.
///
/// Owned by its `DRMCard`, so it lives exactly as long as the card's fd; lives on the main thread.
public final class DRMCardSession {
    private let fd: Int32
    private let path: String
    private let logger = Logger(label: "kioskd.drm")

    /// A backend on the card, held weakly: the card stays open while any backend (or a buffer) holds it, not while
    /// the session remembers it.
    private struct Member {
        weak var backend: DRMBackend?
        var isStarted = false
        /// Stopped (its CRTC restored) and not started again: what it holds no longer counts as taken.
        var hasStopped = false
    }

    private var members: [UInt64: Member] = [:]
    /// Never reused while the card is open, so a late event can never be taken for a newer backend's.
    private var nextToken: UInt64 = 1
    private var claims: [UInt64: DRMTakenObjects] = [:]
    /// Each claim's backend (its member token): the claims of a backend that has stopped, its planes' too, no
    /// longer count, so a stopped output that something still holds on to keeps no other output off its objects.
    private var claimOwners: [UInt64: UInt64] = [:]
    private var source: SourceHandle?
    private weak var loop: MainLoop?
    /// Page-flip events that arrived after their output had gone, dropped.
    public private(set) var lateFlipEvents = 0

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    // MARK: Members

    /// Adds a backend; returns its token, which its page flips carry as user data.
    func join(_ backend: DRMBackend) -> UInt64 {
        let token = nextToken
        nextToken += 1
        members[token] = Member(backend: backend)
        return token
    }

    func leave(_ token: UInt64) {
        stopped(token)
        members[token] = nil
    }

    /// How many backends use the card now.
    public var backendCount: Int { members.values.filter { $0.backend != nil }.count }

    /// The backend started on `loop`: the card's fd is watched there from the first started backend on.
    ///
    /// - Throws: `OutputError` when another backend on the card runs on another loop, or epoll refuses the fd.
    func started(_ token: UInt64, on loop: MainLoop) throws {
        if let current = self.loop, source != nil, current !== loop {
            throw OutputError("device \(path): its outputs must run on one main loop")
        }
        if source == nil {
            source = try loop.addSource(fd: fd, events: .readable) { [weak self] events in self?.cardReady(events) }
            self.loop = loop
        }
        members[token]?.isStarted = true
        members[token]?.hasStopped = false
    }

    /// The backend stopped (its CRTC restored) or went: once no backend on the card runs, the fd is no longer
    /// watched; once none is left that may still run, DRM master is given up, as closing the card would, so a
    /// stopped output that something in the process still holds never keeps another process off the card.
    func stopped(_ token: UInt64) {
        members[token]?.isStarted = false
        members[token]?.hasStopped = true
        if !members.values.contains(where: { $0.isStarted && $0.backend != nil }) {
            source?.cancel()
            source = nil
        }
        if !members.contains(where: { $0.key != token && $0.value.backend != nil && !$0.value.hasStopped }),
           drmIsMaster(fd) != 0 {
            if drmDropMaster(fd) == 0 {
                logger.debug("device \(path): no output left running; DRM master given up")
            } else {
                logger.warning("device \(path): giving DRM master up failed: \(errnoDescription(errno))")
            }
        }
    }

    private var startedBackends: [DRMBackend] {
        members.sorted { $0.key < $1.key }.compactMap { $0.value.isStarted ? $0.value.backend : nil }
    }

    // MARK: Events

    /// The card's fd is ready. A hang-up or error means the device is gone (unplugged, driver unbound): under
    /// level-triggered epoll it would be reported again at every turn of the loop, so the fd is unwatched at once
    /// and every backend on the card told.
    func cardReady(_ events: IOEvents) {
        guard events.isDisjoint(with: [.hangup, .error]) else {
            source?.cancel()
            source = nil
            let what = events.contains(.hangup) ? "EPOLLHUP" : "EPOLLERR"
            let error = OutputError("device \(path): \(what) on the DRM fd")
            logger.error("\(error.message)")
            for backend in startedBackends { backend.deviceLost(error) }
            return
        }
        dispatchEvents()
    }

    /// Reads the card's pending events once and hands each page flip to the backend whose token it carries.
    func dispatchEvents() {
        var ctx = drmEventContext()
        // Version 3 is the first with page_flip_handler2, which adds the CRTC id.
        ctx.version = 3
        ctx.page_flip_handler2 = { fd, sequence, sec, usec, crtcID, userData in
            let token = UInt64(UInt(bitPattern: userData))
            guard let session = DRMCard.openCard(fd: fd)?.session else { return }
            let ns = UInt64(sec) * 1_000_000_000 + UInt64(usec) * 1000
            session.deliverFlip(token: token, sequence: sequence, timestamp: MonotonicInstant(nanoseconds: ns), crtcID: crtcID)
        }
        if drmHandleEvent(fd, &ctx) != 0 {
            logger.error("device \(path): reading DRM events failed: \(errnoDescription(errno))")
        }
    }

    private func deliverFlip(token: UInt64, sequence: UInt32, timestamp: MonotonicInstant, crtcID: UInt32) {
        guard let backend = members[token]?.backend else {
            lateFlipEvents += 1
            logger.debug("device \(path): page-flip event on CRTC \(crtcID) for an output that has gone; dropped")
            return
        }
        backend.flipCompleted(sequence: sequence, timestamp: timestamp, crtcID: crtcID)
    }

    /// The user data a page flip of the backend with `token` carries.
    static func userData(for token: UInt64) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: UInt(token))
    }

    // MARK: Master

    /// Gives DRM master up for every output on the card: each pending flip completes first (a flip of another
    /// output is delivered to it), then master is dropped once. Dropping it again, for the card's next output, is
    /// not an error.
    func dropMaster() throws {
        for backend in startedBackends { backend.settleBeforeDroppingMaster() }
        guard drmIsMaster(fd) != 0 else { return }
        if drmDropMaster(fd) != 0 {
            let e = errno
            throw OutputError("device \(path): dropping DRM master failed: \(errnoDescription(e))", errno: e)
        }
        logger.notice("device \(path): DRM master dropped")
    }

    // MARK: Claims

    /// Records the KMS objects an output holds until the returned claim goes away.
    /// Records the KMS objects the backend `owner` (its member token) holds, for itself or its planes, until the
    /// returned claim goes away or the backend stops. A claim with no owner holds until it goes away.
    func claim(_ objects: DRMTakenObjects, owner: UInt64? = nil) -> DRMClaim {
        let token = nextToken
        nextToken += 1
        claims[token] = objects
        claimOwners[token] = owner
        return DRMClaim(token: token, session: self)
    }

    func release(_ token: UInt64) {
        claims[token] = nil
        claimOwners[token] = nil
    }

    /// Whether a claim counts: its backend is still there and has not stopped.
    private func isLive(claim token: UInt64) -> Bool {
        guard let owner = claimOwners[token] else { return true }
        guard let member = members[owner], member.backend != nil else { return false }
        return !member.hasStopped
    }

    /// The connectors, CRTCs and planes other outputs on the card hold (all but `own`'s).
    public func taken(except own: DRMClaim? = nil) -> DRMTakenObjects {
        claims.sorted { $0.key < $1.key }.reduce(into: DRMTakenObjects()) { all, entry in
            if entry.key != own?.token, isLive(claim: entry.key) { all.merge(entry.value) }
        }
    }
}

/// KMS objects an output holds, each with who holds it (`connector Virtual-1`), for choosing around them and for
/// error messages. A plain value.
public struct DRMTakenObjects: Sendable, Equatable {
    public var connectors: [UInt32: String] = [:]
    public var crtcs: [UInt32: String] = [:]
    public var planes: [UInt32: String] = [:]

    public init(connectors: [UInt32: String] = [:], crtcs: [UInt32: String] = [:], planes: [UInt32: String] = [:]) {
        self.connectors = connectors; self.crtcs = crtcs; self.planes = planes
    }

    public var isEmpty: Bool { connectors.isEmpty && crtcs.isEmpty && planes.isEmpty }

    mutating func merge(_ other: DRMTakenObjects) {
        connectors.merge(other.connectors) { a, _ in a }
        crtcs.merge(other.crtcs) { a, _ in a }
        planes.merge(other.planes) { a, _ in a }
    }
}

/// An output's hold on KMS objects of its card (`DRMCardSession.claim`); released when it goes away. Main thread.
public final class DRMClaim {
    let token: UInt64
    private weak var session: DRMCardSession?

    init(token: UInt64, session: DRMCardSession) {
        self.token = token
        self.session = session
    }

    deinit { session?.release(token) }
}
