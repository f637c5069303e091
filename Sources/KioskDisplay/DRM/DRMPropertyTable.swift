import CDRM
import KioskCore

/// The properties of one KMS object (connector, CRTC or plane): name → id and current value, read once so that
/// commits never look a property up by name on the hot path.
public struct DRMPropertyTable: Sendable {
    public struct Property: Sendable {
        public var id: UInt32
        public var name: String
        public var value: UInt64
        /// Enum names by value, for enum and bitmask properties (plane `type`, connector `DPMS`).
        public var enumNames: [UInt64: String]
        public var isImmutable: Bool

        public init(id: UInt32, name: String, value: UInt64 = 0, enumNames: [UInt64: String] = [:], isImmutable: Bool = false) {
            self.id = id; self.name = name; self.value = value; self.enumNames = enumNames; self.isImmutable = isImmutable
        }
    }

    public private(set) var byName: [String: Property] = [:]

    /// A table with the given properties, for fabricated resources in tests.
    public init(_ properties: [Property] = []) {
        for p in properties { byName[p.name] = p }
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
            byName[name] = Property(
                id: prop.pointee.prop_id, name: name, value: props.pointee.prop_values[i], enumNames: enums,
                isImmutable: prop.pointee.flags & UInt32(DRM_MODE_PROP_IMMUTABLE) != 0)
        }
    }

    public subscript(name: String) -> Property? { byName[name] }

    /// The id of a property the caller cannot work without; the error names the object.
    public func require(_ name: String, on object: String) throws -> UInt32 {
        guard let p = byName[name] else { throw DisplayError("\(object): no \(name) property") }
        return p.id
    }
}
