import CDRM
import KioskCore

/// The properties of one KMS object (connector, CRTC or plane): name → id and current value, read once so that
/// commits never look a property up by name on the hot path.
public struct DRMPropertyTable: Sendable {
    /// What a property's value means (the kernel's DRM_MODE_PROP_* type).
    public enum Kind: Sendable, Equatable {
        case range(min: UInt64, max: UInt64)
        case signedRange(min: Int64, max: Int64)
        /// One of `enumNames`.
        case enumeration
        /// A set of `enumNames` bits (the names are bit numbers).
        case bitmask
        /// A blob id (0: none).
        case blob
        /// The id of a KMS object (a CRTC, a framebuffer).
        case object
        case unknown
    }

    public struct Property: Sendable {
        public var id: UInt32
        public var name: String
        public var value: UInt64
        /// Enum names by value, for enum and bitmask properties (plane `type`, connector `DPMS`); for a bitmask the
        /// value is the bit number.
        public var enumNames: [UInt64: String]
        public var isImmutable: Bool
        public var kind: Kind

        public init(id: UInt32, name: String, value: UInt64 = 0, enumNames: [UInt64: String] = [:], isImmutable: Bool = false,
                    kind: Kind = .unknown) {
            self.id = id; self.name = name; self.value = value; self.enumNames = enumNames; self.isImmutable = isImmutable
            self.kind = kind
        }
    }

    public private(set) var byName: [String: Property] = [:]
    /// Every property in the order the kernel lists them, for reports.
    public private(set) var all: [Property] = []

    /// A table with the given properties, for fabricated resources in tests.
    public init(_ properties: [Property] = []) {
        for p in properties { byName[p.name] = p }
        all = properties
    }

    public init(fd: Int32, objectID: UInt32, objectType: UInt32) {
        guard let props = drmModeObjectGetProperties(fd, objectID, objectType) else { return }
        defer { drmModeFreeObjectProperties(props) }
        for i in 0..<Int(props.pointee.count_props) {
            guard let prop = drmModeGetProperty(fd, props.pointee.props[i]) else { continue }
            defer { drmModeFreeProperty(prop) }
            let name = withUnsafeBytes(of: prop.pointee.name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            var enums: [UInt64: String] = [:]
            if prop.pointee.flags & UInt32(DRM_MODE_PROP_ENUM | DRM_MODE_PROP_BITMASK) != 0 {
                for e in 0..<Int(prop.pointee.count_enums) {
                    let entry = prop.pointee.enums[e]
                    enums[entry.value] = withUnsafeBytes(of: entry.name) { raw in
                        String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
                    }
                }
            }
            let property = Property(
                id: prop.pointee.prop_id, name: name, value: props.pointee.prop_values[i], enumNames: enums,
                isImmutable: prop.pointee.flags & UInt32(DRM_MODE_PROP_IMMUTABLE) != 0, kind: Self.kind(of: prop.pointee))
            byName[name] = property
            all.append(property)
        }
    }

    private static func kind(of prop: drmModePropertyRes) -> Kind {
        let values = (0..<Int(prop.count_values)).map { prop.values[$0] }
        if prop.flags & UInt32(DRM_MODE_PROP_RANGE) != 0, values.count == 2 { return .range(min: values[0], max: values[1]) }
        if prop.flags & UInt32(DRM_MODE_PROP_ENUM) != 0 { return .enumeration }
        if prop.flags & UInt32(DRM_MODE_PROP_BITMASK) != 0 { return .bitmask }
        if prop.flags & UInt32(DRM_MODE_PROP_BLOB) != 0 { return .blob }
        // The extended types are a numbered field, not flags. DRM_MODE_PROP_OBJECT and _SIGNED_RANGE are
        // DRM_MODE_PROP_TYPE(1) and (2), function-like macros that Swift does not import.
        switch prop.flags & UInt32(DRM_MODE_PROP_EXTENDED_TYPE) {
        case 1 << 6: return .object
        case 2 << 6 where values.count == 2:
            return .signedRange(min: Int64(bitPattern: values[0]), max: Int64(bitPattern: values[1]))
        default: return .unknown
        }
    }

    public subscript(name: String) -> Property? { byName[name] }

    /// The id of a property the caller cannot work without; the error names the object.
    public func require(_ name: String, on object: String) throws -> UInt32 {
        guard let p = byName[name] else { throw OutputError("\(object): no \(name) property") }
        return p.id
    }
}
