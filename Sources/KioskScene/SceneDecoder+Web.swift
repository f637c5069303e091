import Foundation
import KioskCore
import Yams

/// What a `web` widget shows: a page of WPE WebKit, composed like any other layer. An immutable value; any thread.
public struct WebProperties: Sendable, Equatable {
    /// `https://`, `http://` or `file://` (an absolute path).
    public var url: String
    /// 1 is the page's own size (0.25...5).
    public var zoom: Double
    /// A user agent in place of WebKit's own.
    public var userAgent: String?
    /// Loads the page again every this many seconds (10...86400); nil never does.
    public var reloadEverySeconds: Int?
    /// Origins (`scheme://host[:port]`) the page may navigate to beside its own; nil allows any.
    public var allowedOrigins: [String]?
    /// An image file shown until the page's first frame (else the widget's background).
    public var placeholder: String?
    /// Whether the page draws its scrollbars (off: a kiosk page is not scrolled by hand).
    public var scrollbars: Bool
    /// The badge's text over the last frame while the page cannot be shown afresh; nil shows none.
    public var offlineBadge: String?
    /// `bridge`: the page gets `window.kioskd` (the scene's data, `on`, `emit`) at its own origin and the allowed ones.
    public var bridge: Bool

    public init(url: String, zoom: Double = 1, userAgent: String? = nil, reloadEverySeconds: Int? = nil,
                allowedOrigins: [String]? = nil, placeholder: String? = nil, scrollbars: Bool = false,
                offlineBadge: String? = "offline", bridge: Bool = false) {
        self.url = url
        self.zoom = zoom
        self.userAgent = userAgent
        self.reloadEverySeconds = reloadEverySeconds
        self.allowedOrigins = allowedOrigins
        self.placeholder = placeholder
        self.scrollbars = scrollbars
        self.offlineBadge = offlineBadge
        self.bridge = bridge
    }

    public static let zoomRange: ClosedRange<Double> = 0.25...5
    public static let reloadRange: ClosedRange<Int> = 10...86_400
    /// The longest URL, origin or user agent a scene may give.
    public static let maximumTextLength = 8192

    /// Why `url` cannot be a page's address; nil when it can.
    public static func problem(withURL url: String) -> String? {
        guard url.utf8.count <= maximumTextLength else { return "the URL is longer than \(maximumTextLength) bytes" }
        guard !url.contains(where: { $0.isWhitespace || $0.asciiValue.map { $0 < 0x20 || $0 == 0x7F } == true }) else {
            return "'\(url)' has spaces or control characters (encode them as %20 and so on)"
        }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            return "'\(url)' is not a URL (expected https://..., http://... or file:///absolute/path)"
        }
        switch scheme {
        case "https", "http":
            guard let host = components.host, !host.isEmpty else { return "'\(url)' has no host" }
            return nil
        case "file":
            guard components.path.hasPrefix("/") else { return "'\(url)': a file URL needs an absolute path (file:///...)" }
            return nil
        default:
            return "'\(url)': the scheme '\(scheme)' is not allowed for a web widget (https, http or file)"
        }
    }

    /// `scheme://host[:port]` of an `allowed_origins` entry, normalised; nil when it is not one.
    public static func origin(_ text: String) -> String? {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              scheme == "https" || scheme == "http", let host = components.host?.lowercased(), !host.isEmpty,
              components.path.isEmpty || components.path == "/", components.query == nil, components.fragment == nil,
              components.user == nil else { return nil }
        return "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
    }
}

/// The `web` widget: a web page shown as a layer.
extension SceneDecoder {
    static let webKeys = ["url", "zoom", "user_agent", "reload_every", "allowed_origins", "placeholder", "scrollbars", "offline_badge", "bridge"]

    func web(_ f: [String: (key: Node, value: Node)], node: Node, path: String) -> WebProperties? {
        func key(_ k: String) -> String { Self.child(path, k) }
        var url: String?
        if let u = f["url"] {
            url = string(u.value, key("url"))
            if let text = url, let problem = WebProperties.problem(withURL: text) {
                error(u.value, key("url"), problem)
                url = nil
            }
        } else {
            error(node, path, "a web widget needs 'url' (https://..., http://... or file:///absolute/path)")
        }
        let zoom = f["zoom"].map { number($0.value, key("zoom"), in: WebProperties.zoomRange) } ?? 1
        var userAgent: String?? = .some(nil)
        if let u = f["user_agent"] {
            let text = string(u.value, key("user_agent"))
            if let text, text.utf8.count > WebProperties.maximumTextLength || text.contains(where: { $0.isNewline }) {
                error(u.value, key("user_agent"), "a user agent is one line of at most \(WebProperties.maximumTextLength) bytes")
                userAgent = nil
            } else {
                userAgent = text.map { .some($0) }
            }
        }
        var reload: Int?? = .some(nil)
        if let r = f["reload_every"] {
            reload = integer(r.value, key("reload_every"), in: WebProperties.reloadRange).map { .some($0) }
        }
        var origins: [String]?? = .some(nil)
        if let o = f["allowed_origins"] {
            if let list = o.value.sequence {
                var found: [String] = []
                var valid = true
                for (index, item) in list.enumerated() {
                    let itemPath = "\(key("allowed_origins"))[\(index)]"
                    guard let text = string(item, itemPath) else { valid = false; continue }
                    if let origin = WebProperties.origin(text) {
                        found.append(origin)
                    } else {
                        error(item, itemPath, "'\(text)' is not an origin (expected https://host or https://host:port, with no path)")
                        valid = false
                    }
                }
                origins = valid ? .some(found) : nil
            } else {
                error(o.value, key("allowed_origins"), "expected a list of origins, as in [https://example.com, https://cdn.example.com:8443]")
                origins = nil
            }
        }
        var placeholder: String?? = .some(nil)
        if let p = f["placeholder"] {
            if let name = p.value.scalar?.string, RemoteAsset.looksRemote(name) {
                error(p.value, key("placeholder"), "a web widget's placeholder is shown while its page cannot be, so it must be a file on the board, not a URL ('\(name)')")
                placeholder = nil
            } else {
                placeholder = imagePath(p.value, key("placeholder")).map { .some($0) }
            }
        }
        let scrollbars = f["scrollbars"].map { bool($0.value, key("scrollbars")) } ?? false
        // `offline_badge`: its text (one short line), or false for none.
        var badge: String?? = .some("offline")
        if let b = f["offline_badge"] {
            if let scalar = b.value.scalar, let off = YAMLTree.bool(scalar), !off {
                badge = .some(nil)
            } else if let text = string(b.value, key("offline_badge")) {
                if text.isEmpty || text.count > 32 || text.contains(where: { $0.isNewline }) {
                    error(b.value, key("offline_badge"), "the badge is one line of 1 to 32 characters, or false for none")
                    badge = nil
                } else {
                    badge = .some(text)
                }
            } else {
                badge = nil
            }
        }
        let bridge = f["bridge"].map { bool($0.value, key("bridge")) } ?? false
        guard let url, let zoom, let userAgent, let reload, let origins, let placeholder, let scrollbars, let badge, let bridge else { return nil }
        return WebProperties(url: url, zoom: zoom, userAgent: userAgent, reloadEverySeconds: reload,
                             allowedOrigins: origins, placeholder: placeholder, scrollbars: scrollbars, offlineBadge: badge,
                             bridge: bridge)
    }
}
