/// What a user asked for with `--mode`: `WxH`, `WxH@Hz` or `WxH@59.94`. A plain value, used on any thread.
public struct ModeRequest: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    /// The requested refresh in millihertz (`@59.94` is 59 940), nil for any.
    public var refreshMilliHz: Int?
    /// The requested refresh rounded to whole hertz.
    public var refreshHz: Int? { refreshMilliHz.map { ($0 + 500) / 1000 } }

    /// How far a connector's mode may be from the requested refresh and still be chosen: `@60` picks a
    /// 59.94 Hz mode when that is the nearest, but never a 50 Hz one.
    public static let refreshToleranceMilliHz = 1000

    public init(width: Int, height: Int, refreshHz: Int? = nil) {
        self.init(width: width, height: height, refreshMilliHz: refreshHz.map { $0 * 1000 })
    }

    public init(width: Int, height: Int, refreshMilliHz: Int?) {
        self.width = width; self.height = height; self.refreshMilliHz = refreshMilliHz
    }

    /// Parses `1024x768`, `1920x1080@60` or `1920x1080@59.94` (up to three decimals); the error says which part
    /// is wrong.
    public init(validating text: String) throws {
        func fail(_ problem: String) -> ModeRequestError {
            ModeRequestError("mode '\(text)': \(problem); expected WIDTHxHEIGHT or WIDTHxHEIGHT@HZ, e.g. 1920x1080 or 1920x1080@59.94")
        }
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { throw fail("more than one '@'") }
        let dims = parts[0].lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard dims.count == 2 else { throw fail("no 'x' between width and height") }
        guard let w = Int(dims[0]), w > 0 else { throw fail("width '\(dims[0])' is not a positive integer") }
        guard let h = Int(dims[1]), h > 0 else { throw fail("height '\(dims[1])' is not a positive integer") }
        var milliHz: Int?
        if parts.count == 2 {
            guard let m = Self.parseMilliHz(parts[1]), m > 0 else {
                throw fail("refresh '\(parts[1])' is not a positive number of hertz with at most three decimals")
            }
            milliHz = m
        }
        self.init(width: w, height: h, refreshMilliHz: milliHz)
    }

    /// Parses like `init(validating:)`; nil when the text is not of that form.
    public init?(parsing text: String) {
        guard let request = try? ModeRequest(validating: text) else { return nil }
        self = request
    }

    /// `59.94` → 59 940; nil unless digits with an optional fraction of at most three digits.
    private static func parseMilliHz(_ text: Substring) -> Int? {
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        guard pieces.count <= 2, !pieces[0].isEmpty, pieces[0].allSatisfy(\.isASCIIDigit),
              let whole = Int(pieces[0]), whole < 10_000 else { return nil }
        var fraction = 0
        if pieces.count == 2 {
            let digits = pieces[1]
            guard (1...3).contains(digits.count), digits.allSatisfy(\.isASCIIDigit), let f = Int(digits) else { return nil }
            fraction = f * [100, 10, 1][digits.count - 1]
        }
        return whole * 1000 + fraction
    }

    /// Same size, and (when a refresh is requested) within `refreshToleranceMilliHz` of it.
    public func matches(_ mode: OutputMode) -> Bool {
        guard mode.width == width, mode.height == height else { return false }
        guard let refreshMilliHz else { return true }
        return abs(mode.refreshMilliHz - refreshMilliHz) <= Self.refreshToleranceMilliHz
    }

    /// `1920x1080`, `1920x1080@60`, `1920x1080@59.94`: the form it was written in.
    public var description: String {
        guard let refreshMilliHz else { return "\(width)x\(height)" }
        var rate = "\(refreshMilliHz / 1000)"
        if refreshMilliHz % 1000 != 0 {
            var fraction = String(refreshMilliHz % 1000)
            fraction = String(repeating: "0", count: 3 - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            rate += "." + fraction
        }
        return "\(width)x\(height)@\(rate)"
    }
}

/// A `--mode` or board-file mode that is not of the form `WxH[@Hz]`; the message quotes it and says why.
public struct ModeRequestError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

extension Array where Element == OutputMode {
    /// The mode a request selects. With a refresh: among modes of that size within the tolerance, the one whose
    /// exact refresh is nearest (the preferred one on a tie). Without: among modes of that size the preferred one,
    /// else the highest refresh. Without a request: the connector's preferred mode, else its first.
    public func select(_ request: ModeRequest?) -> OutputMode? {
        guard let request else { return first { $0.isPreferred } ?? first }
        let matches = filter { request.matches($0) }
        guard let target = request.refreshMilliHz else {
            return matches.first { $0.isPreferred } ?? matches.max { $0.refreshRate < $1.refreshRate }
        }
        let wanted = Double(target) / 1000
        return matches.min { a, b in
            let da = abs(a.refreshRate - wanted), db = abs(b.refreshRate - wanted)
            return da != db ? da < db : (a.isPreferred && !b.isPreferred)
        }
    }

    /// Distinct `WxH@59.94` names in connector order, for error messages.
    public var distinctDescriptions: [String] {
        var seen = Set<String>()
        return compactMap { seen.insert($0.exactDescription).inserted ? $0.exactDescription : nil }
    }
}
