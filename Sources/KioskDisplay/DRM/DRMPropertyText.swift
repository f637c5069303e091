extension DRMPropertyTable.Property {
    /// The value as modetest shows it: enum values by name, bitmasks as their names, blobs and objects by id,
    /// ranges with their range, and `immutable` where the kernel sets it.
    public var valueDescription: String {
        var text: String
        switch kind {
        case let .range(min, max):
            text = "\(value) (range \(min)..\(max))"
        case let .signedRange(min, max):
            text = "\(Int64(bitPattern: value)) (range \(min)..\(max))"
        case .enumeration:
            let choices = enumNames.sorted { $0.key < $1.key }.map(\.value).joined(separator: ", ")
            text = "\(enumNames[value] ?? "\(value)") (enum: \(choices))"
        case .bitmask:
            let set = enumNames.sorted { $0.key < $1.key }.filter { $0.key < 64 && value & (1 << $0.key) != 0 }
            let choices = enumNames.sorted { $0.key < $1.key }.map(\.value).joined(separator: ", ")
            text = (set.isEmpty ? "0" : set.map(\.value).joined(separator: "|")) + " (bitmask: \(choices))"
        case .blob:
            text = value == 0 ? "no blob" : "blob \(value)"
        case .object:
            text = value == 0 ? "no object" : "object \(value)"
        case .unknown:
            text = "\(value)"
        }
        return isImmutable ? text + ", immutable" : text
    }
}

extension DRMPropertyTable {
    /// One line per property, `name [id N]: value`, each indented by `indent`.
    public func lines(indent: String) -> String {
        all.map { "\(indent)\($0.name) [id \($0.id)]: \($0.valueDescription)\n" }.joined()
    }
}
