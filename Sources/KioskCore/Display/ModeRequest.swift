/// What a user asked for with `--mode`: `WxH` or `WxH@Hz`.
public struct ModeRequest: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public var refreshHz: Int?

    public init(width: Int, height: Int, refreshHz: Int? = nil) {
        self.width = width; self.height = height; self.refreshHz = refreshHz
    }

    /// Parses `1024x768` or `1920x1080@60`; nil when the text is not of that form.
    public init?(parsing text: String) {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        let dims = parts[0].lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard dims.count == 2, let w = Int(dims[0]), let h = Int(dims[1]), w > 0, h > 0 else { return nil }
        var hz: Int?
        if parts.count == 2 {
            guard let r = Int(parts[1]), r > 0 else { return nil }
            hz = r
        }
        self.init(width: w, height: h, refreshHz: hz)
    }

    public func matches(_ mode: DisplayMode) -> Bool {
        mode.width == width && mode.height == height && (refreshHz.map { $0 == mode.refreshHz } ?? true)
    }

    public var description: String { refreshHz.map { "\(width)x\(height)@\($0)" } ?? "\(width)x\(height)" }
}

extension Array where Element == DisplayMode {
    /// The mode a request selects: among matches the preferred one, else the highest refresh. Without a request,
    /// the connector's preferred mode, else its first.
    public func select(_ request: ModeRequest?) -> DisplayMode? {
        guard let request else { return first { $0.isPreferred } ?? first }
        let matches = filter { request.matches($0) }
        return matches.first { $0.isPreferred } ?? matches.max { $0.refreshMilliHz < $1.refreshMilliHz }
    }

    /// Distinct `WxH@Hz` names in connector order, for error messages.
    public var distinctDescriptions: [String] {
        var seen = Set<String>()
        return compactMap { seen.insert($0.description).inserted ? $0.description : nil }
    }
}
