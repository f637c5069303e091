import Foundation

/// The URI schemes a video source may use (`video.allowed_schemes`), and how a source's scheme is read. A video
/// source is a URI when it begins with an RFC 3986 scheme and a colon (`https://...`, `rtsp://...`, `data:...`);
/// anything else is a file path, which counts as `file`. Schemes compare case-insensitively (`FILE:///x` is
/// `file`). GStreamer's playbin opens whatever its plugins can reach (cameras through `v4l2://`, any host through
/// `rtsp://`, inline data through `data:`): a kiosk plays only what its configuration lets it.
///
/// Every entry of a video into the kiosk checks it: the scene decoder (scene files, `scene.load`, reloads), the
/// `video.load` command (from the socket and from MQTT alike), and the video widget before it opens an item.
/// An immutable value; any thread.
public struct VideoSchemes: Sendable, Equatable {
    /// `file`, `https` and `http`: local clips and plain web servers.
    public static let defaultAllowed = ["file", "https", "http"]

    /// Lowercase scheme names, in the order the configuration gave them.
    public let allowed: [String]

    /// - Parameter allowed: scheme names already validated (`problem(withEntry:)`); they are lowercased here.
    public init(_ allowed: [String] = VideoSchemes.defaultAllowed) {
        self.allowed = allowed.map { $0.lowercased() }
    }

    /// What a source is, as far as its scheme goes.
    public enum Parsed: Sendable, Equatable {
        /// A file path (absolute or relative): scheme `file`.
        case path
        /// A URI with its scheme, lowercased.
        case uri(scheme: String)
        /// Text with `://` whose part before it is no scheme: the problem, for an error message.
        case malformed(String)

        /// The scheme that decides whether the source is allowed: `file` for a path.
        public var scheme: String? {
            switch self {
            case .path: "file"
            case .uri(let scheme): scheme
            case .malformed: nil
            }
        }
    }

    /// The scheme of `source` (RFC 3986: a letter, then letters, digits, `+`, `-` or `.`, then `:`). A path never
    /// starts with a letter followed by such characters and a colon unless it was meant as a URI; a relative file
    /// whose name has a colon before any slash can be written `./name`.
    public static func parse(_ source: String) -> Parsed {
        if let colon = source.firstIndex(of: ":") {
            let head = source[..<colon]
            if isSchemeName(head) { return .uri(scheme: head.lowercased()) }
        }
        guard let separator = source.range(of: "://") else { return .path }
        let head = source[..<separator.lowerBound]
        if head.isEmpty { return .malformed("'\(source)' is not a URI (no scheme before '://')") }
        return .malformed("'\(source)' is not a URI ('\(head)' is no scheme: a letter, then letters, digits, '+', '-' or '.')")
    }

    /// Whether `name` has RFC 3986's scheme syntax (in any case).
    public static func isSchemeName<S: StringProtocol>(_ name: S) -> Bool {
        guard let first = name.unicodeScalars.first, first.isASCIILetter else { return false }
        return name.unicodeScalars.dropFirst().allSatisfy { $0.isASCIILetter || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0) }
    }

    /// Why a configuration entry cannot be a scheme name, or nil when it can: a scheme alone, in lowercase.
    public static func problem(withEntry entry: String) -> String? {
        if entry.isEmpty { return "expected a scheme name such as 'https', got an empty string" }
        let bare = entry.hasSuffix("://") ? String(entry.dropLast(3)) : entry.hasSuffix(":") ? String(entry.dropLast()) : entry
        if bare != entry, isSchemeName(bare) { return "'\(entry)' is a scheme with its separator: write '\(bare.lowercased())'" }
        guard isSchemeName(entry) else {
            return "'\(entry)' is not a URI scheme (RFC 3986: a letter, then letters, digits, '+', '-' or '.')"
        }
        if entry != entry.lowercased() { return "'\(entry)': scheme names are written in lowercase: '\(entry.lowercased())'" }
        return nil
    }

    /// The scheme of `source` and whether it is allowed: nil when it is, else the problem, naming the scheme and
    /// the allowed list (`scheme 'rtsp' is not allowed (video.allowed_schemes: file, https, http)`).
    public func refusal(of source: String) -> String? {
        switch Self.parse(source) {
        case .malformed(let problem):
            return problem
        case let parsed:
            guard let scheme = parsed.scheme, !allowed.contains(scheme) else { return nil }
            let list = allowed.isEmpty ? "empty: no video is allowed" : allowed.joined(separator: ", ")
            return "scheme '\(scheme)' is not allowed (video.allowed_schemes: \(list))"
        }
    }

    /// The file a `file` URI names (`file:///a%20b.mp4` is `/a b.mp4`, whatever the case of the scheme), the path
    /// itself for a path, or nil for any other scheme.
    public static func filePath(of source: String) -> String? {
        switch parse(source) {
        case .path, .malformed:
            return source
        case .uri(scheme: "file"):
            let rest = source.dropFirst("file:".count)
            let path = rest.hasPrefix("//") ? String(rest.dropFirst(2)) : String(rest)
            return path.removingPercentEncoding ?? path
        case .uri:
            return nil
        }
    }

    /// Whether `source` is reached over a network (any scheme but `file`): such an item that fails may succeed
    /// later (the network or the server comes up), so it is tried again with backoff; a file that failed would
    /// fail again the same way.
    public static func isNetworkSource(_ source: String) -> Bool {
        switch parse(source) {
        case .path, .malformed: false
        case .uri(let scheme): scheme != "file"
        }
    }
}

private extension Unicode.Scalar {
    var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}
