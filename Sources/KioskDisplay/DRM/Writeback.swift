import CDRM
import Glibc
import KioskCore

/// A writeback connector routed to our CRTC: reads back what the CRTC actually produced (vkms has one; some
/// SoC display engines too). Plain value; the property ids are looked up once.
public struct WritebackConnector: Sendable {
    public let id: UInt32
    public let name: String
    let crtcIDProp: UInt32
    let fbIDProp: UInt32
    let fencePtrProp: UInt32

    static func find(in res: DRMResources, card: DRMCard, crtc: DRMResources.CRTC, size: Size) throws -> WritebackConnector {
        let all = res.connectors.filter(\.isWriteback)
        guard !all.isEmpty else {
            throw OutputError("device \(card.path) (\(card.driver)): no writeback connector (the driver has none, or the kernel refused DRM_CLIENT_CAP_WRITEBACK_CONNECTORS)")
        }
        for c in all {
            let reach = c.encoderIDs.reduce(UInt32(0)) { $0 | (res.encoder(id: $1)?.possibleCRTCs ?? 0) }
            guard reach & (1 << UInt32(crtc.index)) != 0 else { continue }
            let p = c.properties
            return WritebackConnector(
                id: c.id, name: c.name,
                crtcIDProp: try p.require("CRTC_ID", on: "connector \(c.name)"),
                fbIDProp: try p.require("WRITEBACK_FB_ID", on: "connector \(c.name)"),
                fencePtrProp: try p.require("WRITEBACK_OUT_FENCE_PTR", on: "connector \(c.name)"))
        }
        throw OutputError("writeback connectors \(all.map(\.name).joined(separator: ", ")) cannot reach CRTC \(crtc.id)")
    }

    /// Routing the connector changes the CRTC's connector set, which needs a modeset: so it is done once, in the
    /// modeset commit, and each capture only sets WRITEBACK_FB_ID (a one-shot property the kernel clears).
    func attach(to req: AtomicRequest, crtc: UInt32) {
        req.add(id, crtcIDProp, UInt64(crtc), what: "connector \(name) CRTC_ID")
    }

    func detach(from req: AtomicRequest) {
        req.add(id, crtcIDProp, 0, what: "connector \(name) CRTC_ID")
    }
}

/// One requested capture: a dumb buffer the CRTC's output is written into, and the out-fence that signals when it
/// has been. Owns both. Lives on the main thread.
public final class WritebackCapture {
    public let buffer: DumbBuffer
    private let connector: WritebackConnector
    /// The kernel writes the fence fd here during the commit; heap memory so its address is stable.
    private let fence: UnsafeMutablePointer<Int32>

    init(connector: WritebackConnector, card: DRMCard, size: Size) throws {
        self.connector = connector
        self.buffer = try DumbBuffer(card: card, size: size)
        self.fence = .allocate(capacity: 1)
        fence.pointee = -1
    }

    deinit {
        if fence.pointee >= 0 { close(fence.pointee) }
        fence.deallocate()
    }

    /// The out-fence as a file descriptor (pollable: readable once signalled), or nil before the commit.
    public var fenceFD: Int32? { fence.pointee >= 0 ? fence.pointee : nil }

    func addToRequest(_ req: AtomicRequest) {
        req.add(connector.id, connector.fbIDProp, UInt64(buffer.framebufferID), what: "connector \(connector.name) WRITEBACK_FB_ID")
        req.add(connector.id, connector.fencePtrProp, UInt64(UInt(bitPattern: fence)),
                what: "connector \(connector.name) WRITEBACK_OUT_FENCE_PTR")
    }

    /// Waits up to `timeoutMs` for the out-fence; true once the capture is complete.
    @discardableResult
    public func waitForFence(timeoutMs: Int32) -> Bool {
        guard let fd = fenceFD else { return false }
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        var rc: Int32
        repeat { rc = poll(&pfd, 1, timeoutMs) } while rc < 0 && errno == EINTR
        return rc > 0
    }

    /// Waits for the out-fence, then returns the captured pixels (XRGB8888, stride = width * 4).
    public func waitForPixels(timeoutMs: Int32 = 2000) throws -> [UInt8] {
        guard fenceFD != nil else { throw OutputError("connector \(connector.name): capture has no out-fence") }
        guard waitForFence(timeoutMs: timeoutMs) else {
            throw OutputError("connector \(connector.name): writeback fence not signalled within \(timeoutMs) ms")
        }
        return buffer.readPixels()
    }
}
