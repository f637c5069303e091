import CDRM
import Glibc
import CKioskShims
import KioskCore

/// A snapshot of a card's KMS objects, read once and kept as plain values. Lives on the main thread; being values,
/// snapshots may be handed elsewhere for reports.
public struct DRMResources: Sendable {
    public struct Mode: Sendable {
        /// The kernel's mode description, passed back verbatim in MODE_ID blobs and SetCrtc.
        public var raw: drmModeModeInfo
        public var mode: OutputMode
    }

    public enum ConnectionStatus: String, Sendable {
        case connected, disconnected, unknown
    }

    public struct Connector: Sendable {
        public var id: UInt32
        /// `HDMI-A-1`, `DSI-1`, `Virtual-1`: type name and per-type index, as the kernel and sysfs name it.
        public var name: String
        public var type: UInt32
        public var status: ConnectionStatus
        public var modes: [Mode]
        public var encoderIDs: [UInt32]
        /// The encoder currently routing this connector, if any.
        public var currentEncoderID: UInt32?
        public var properties: DRMPropertyTable
        public var isWriteback: Bool { type == UInt32(DRM_MODE_CONNECTOR_WRITEBACK) }
    }

    public struct Encoder: Sendable {
        public var id: UInt32
        public var crtcID: UInt32?
        /// Bit i set: the CRTC at index i of `crtcs` can be driven.
        public var possibleCRTCs: UInt32
    }

    public struct CRTC: Sendable {
        public var id: UInt32
        public var index: Int
        public var bufferID: UInt32?
        public var x: UInt32
        public var y: UInt32
        public var mode: Mode?
        public var properties: DRMPropertyTable
    }

    public enum PlaneType: String, Sendable {
        case primary, overlay, cursor, unknown
    }

    public struct Plane: Sendable {
        public var id: UInt32
        public var type: PlaneType
        public var possibleCRTCs: UInt32
        public var formats: [UInt32]
        public var crtcID: UInt32?
        public var bufferID: UInt32?
        public var properties: DRMPropertyTable
    }

    public var connectors: [Connector] = []
    public var encoders: [Encoder] = []
    public var crtcs: [CRTC] = []
    public var planes: [Plane] = []

    /// Fabricated resources, for tests of the selection rules.
    init(connectors: [Connector], encoders: [Encoder], crtcs: [CRTC], planes: [Plane]) {
        self.connectors = connectors; self.encoders = encoders; self.crtcs = crtcs; self.planes = planes
    }

    /// Reads every object on the card. Universal planes (and writeback connectors, where the caller enabled the
    /// capability) must be enabled beforehand so that primary and cursor planes are listed at all.
    public init(card: DRMCard) throws {
        let fd = card.fd
        guard let res = drmModeGetResources(fd) else {
            throw OutputError("device \(card.path): drmModeGetResources failed: \(errnoDescription(errno)) (no KMS support?)")
        }
        defer { drmModeFreeResources(res) }

        for i in 0..<Int(res.pointee.count_crtcs) {
            let id = res.pointee.crtcs[i]
            guard let c = drmModeGetCrtc(fd, id) else { continue }
            defer { drmModeFreeCrtc(c) }
            crtcs.append(CRTC(
                id: id, index: i,
                bufferID: c.pointee.buffer_id == 0 ? nil : c.pointee.buffer_id,
                x: c.pointee.x, y: c.pointee.y,
                mode: c.pointee.mode_valid != 0 ? Self.makeMode(c.pointee.mode) : nil,
                properties: DRMPropertyTable(fd: fd, objectID: id, objectType: UInt32(DRM_MODE_OBJECT_CRTC))))
        }
        for i in 0..<Int(res.pointee.count_encoders) {
            guard let e = drmModeGetEncoder(fd, res.pointee.encoders[i]) else { continue }
            defer { drmModeFreeEncoder(e) }
            encoders.append(Encoder(
                id: e.pointee.encoder_id, crtcID: e.pointee.crtc_id == 0 ? nil : e.pointee.crtc_id,
                possibleCRTCs: e.pointee.possible_crtcs))
        }
        for i in 0..<Int(res.pointee.count_connectors) {
            let id = res.pointee.connectors[i]
            guard let c = drmModeGetConnector(fd, id) else { continue }
            defer { drmModeFreeConnector(c) }
            let typeName = drmModeGetConnectorTypeName(c.pointee.connector_type).map { String(cString: $0) } ?? "Unknown"
            let status: ConnectionStatus = switch c.pointee.connection {
            case DRM_MODE_CONNECTED: .connected
            case DRM_MODE_DISCONNECTED: .disconnected
            default: .unknown
            }
            let modes = (0..<Int(c.pointee.count_modes)).map { Self.makeMode(c.pointee.modes[$0]) }
            connectors.append(Connector(
                id: id, name: "\(typeName)-\(c.pointee.connector_type_id)", type: c.pointee.connector_type,
                status: status, modes: modes,
                encoderIDs: (0..<Int(c.pointee.count_encoders)).map { c.pointee.encoders[$0] },
                currentEncoderID: c.pointee.encoder_id == 0 ? nil : c.pointee.encoder_id,
                properties: DRMPropertyTable(fd: fd, objectID: id, objectType: UInt32(DRM_MODE_OBJECT_CONNECTOR))))
        }
        if let planeRes = drmModeGetPlaneResources(fd) {
            defer { drmModeFreePlaneResources(planeRes) }
            for i in 0..<Int(planeRes.pointee.count_planes) {
                let id = planeRes.pointee.planes[i]
                guard let p = drmModeGetPlane(fd, id) else { continue }
                defer { drmModeFreePlane(p) }
                let props = DRMPropertyTable(fd: fd, objectID: id, objectType: UInt32(DRM_MODE_OBJECT_PLANE))
                let type: PlaneType = switch props["type"]?.value {
                case UInt64(DRM_PLANE_TYPE_PRIMARY): .primary
                case UInt64(DRM_PLANE_TYPE_OVERLAY): .overlay
                case UInt64(DRM_PLANE_TYPE_CURSOR): .cursor
                default: .unknown
                }
                planes.append(Plane(
                    id: id, type: type, possibleCRTCs: p.pointee.possible_crtcs,
                    formats: (0..<Int(p.pointee.count_formats)).map { p.pointee.formats[$0] },
                    crtcID: p.pointee.crtc_id == 0 ? nil : p.pointee.crtc_id,
                    bufferID: p.pointee.fb_id == 0 ? nil : p.pointee.fb_id,
                    properties: props))
            }
        }
    }

    /// The timings of a kernel mode, for its exact refresh rate.
    public static func timing(of info: drmModeModeInfo) -> ModeTiming {
        ModeTiming(clockKHz: Int(info.clock), htotal: Int(info.htotal), vtotal: Int(info.vtotal), vscan: Int(info.vscan),
                   isInterlaced: info.flags & UInt32(DRM_MODE_FLAG_INTERLACE) != 0,
                   isDoubleScan: info.flags & UInt32(DRM_MODE_FLAG_DBLSCAN) != 0)
    }

    static func makeMode(_ info: drmModeModeInfo) -> Mode {
        // The nominal vrefresh field is rounded; the timings give the exact rate, so 59.94 stays 59.94.
        let rate = timing(of: info).refreshRate ?? Double(info.vrefresh)
        let name = withUnsafeBytes(of: info.name) { raw in
            String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
        }
        return Mode(raw: info, mode: OutputMode(
            width: Int(info.hdisplay), height: Int(info.vdisplay), refreshRate: rate, name: name,
            isPreferred: info.type & UInt32(DRM_MODE_TYPE_PREFERRED) != 0))
    }

    public func connector(id: UInt32) -> Connector? { connectors.first { $0.id == id } }
    public func encoder(id: UInt32) -> Encoder? { encoders.first { $0.id == id } }
    public func crtc(id: UInt32) -> CRTC? { crtcs.first { $0.id == id } }
}

/// `XR24` → the four characters of a fourcc code, as modetest prints them.
public func fourccString(_ code: UInt32) -> String {
    let chars = (0..<4).map { UInt8((code >> (8 * $0)) & 0xFF) }
    return String(decoding: chars.map { (32...126).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
}

/// DRM_FORMAT_XRGB8888, the only scanout format kioskd renders (Cairo's RGB24 on little-endian).
public let drmFormatXRGB8888: UInt32 = kiosk_fourcc_xrgb8888()
