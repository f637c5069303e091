/// What a response's `Cache-Control` header asks of the asset cache, and the rule kioskd follows for it. A plain
/// value; any thread.
///
/// - `max-age=N` (N > 0): the copy is fresh for N seconds after it was fetched: no revalidation request is made
///   before then, not even at start, but never later than the asset's `refresh` either. The next check is
///   `min(max(N, 10 s), refresh)`: a server may ask for more frequent checks than `refresh` (down to 10 s), never
///   for rarer ones, so a change on the server is on screen within `refresh` whatever the header says.
/// - `no-cache`, or `max-age=0`: every check is a revalidation request (every `refresh`, and at once at start); the
///   copy is shown meanwhile.
/// - `no-store`: the asset is shown (a screen stays blank for no header), but not kept across restarts: opening
///   the cache removes it, so a kiosk restarted offline shows the placeholder for it, as it would for an asset
///   never fetched.
/// - Anything else (`private`, `public`, `must-revalidate`, ...) changes nothing.
public struct CacheControl: Sendable, Equatable, Codable {
    public var maxAge: Int?
    public var noCache: Bool
    public var noStore: Bool

    /// The fewest seconds between two checks a `max-age` may ask for.
    public static let minimumMaxAgeSeconds = 10

    public init(maxAge: Int? = nil, noCache: Bool = false, noStore: Bool = false) {
        self.maxAge = maxAge
        self.noCache = noCache
        self.noStore = noStore
    }

    /// The directives of a `Cache-Control` value (nil: no header). Unknown or malformed directives are ignored,
    /// as HTTP caches do; names are case-insensitive, `max-age` may be quoted.
    public init(header: String?) {
        self.init()
        guard let header else { return }
        for part in header.split(separator: ",") {
            let directive = String(part).trimmingScalars(" \t")
            let pieces = directive.split(separator: "=", maxSplits: 1)
            guard let first = pieces.first else { continue }
            switch first.lowercased() {
            case "no-cache": noCache = true
            case "no-store": noStore = true
            case "max-age":
                guard pieces.count == 2 else { continue }
                let value = String(pieces[1]).trimmingScalars("\" \t")
                if let seconds = Int(value), seconds >= 0 { maxAge = seconds }
            default: continue
            }
        }
    }

    /// Whether every check must ask the server (`no-cache`, `max-age=0`).
    public var alwaysRevalidate: Bool { noCache || maxAge == 0 }

    /// Seconds from a successful fetch to the next check, for an asset refreshed every `refresh` seconds.
    public func secondsToNextCheck(refresh: Int) -> Int {
        guard !alwaysRevalidate, let maxAge else { return refresh }
        return min(max(maxAge, Self.minimumMaxAgeSeconds), refresh)
    }

    /// Seconds the copy fetched at `fetchedAt` stays fresh at `now` (wall clock): 0 when a check is due. Without
    /// `max-age` a copy is never fresh at start: it is revalidated at once.
    public func freshSeconds(fetchedAt: Double, now: Double, refresh: Int) -> Int {
        guard !alwaysRevalidate, maxAge != nil else { return 0 }
        let left = fetchedAt + Double(secondsToNextCheck(refresh: refresh)) - now
        // A clock that went backwards (the RTC set at boot) makes nothing fresh for longer than one interval.
        guard left > 0, left <= Double(secondsToNextCheck(refresh: refresh)) else { return 0 }
        return Int(left.rounded(.up))
    }
}
