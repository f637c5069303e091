import Foundation

/// An asset named by URL (`https://...`, `http://...`): an image widget's picture, or a video playlist item. It is
/// fetched into the asset cache and shown from there (kioskd's `RemoteAssetWiring`); until a copy is held an image
/// widget shows its background and a video item is passed over. A namespace.
public enum RemoteAsset {
    /// Whether `source` is fetched into the asset cache rather than read or streamed: an `https` or `http` URL.
    public static func isFetched(_ source: String) -> Bool {
        guard let colon = source.firstIndex(of: ":") else { return false }
        let scheme = source[..<colon].lowercased()
        return (scheme == "https" || scheme == "http") && source[colon...].hasPrefix("://")
    }

    /// Whether `name` is written as a URL rather than a path: a scheme of letters, then `://`.
    public static func looksRemote(_ name: String) -> Bool {
        guard let colon = name.range(of: "://") else { return false }
        let scheme = name[..<colon.lowerBound]
        return !scheme.isEmpty && scheme.allSatisfy { $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }
    }

    /// Why `url` cannot be fetched (a scheme other than http and https, no host, not a URL), or nil.
    /// `kind` names the asset in the message: "image", "video", "scene".
    public static func problem(with url: String, kind: String = "image") -> String? {
        guard url.utf8.count <= 4096 else { return "\(kind) URL of \(url.utf8.count) bytes: at most 4096" }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            return "\(kind) '\(url)': not a URL"
        }
        guard scheme == "https" || scheme == "http" else {
            return "\(kind) '\(url)': scheme '\(scheme)' cannot be fetched; use https or http (or a file path)"
        }
        guard let host = components.host, !host.isEmpty else { return "\(kind) '\(url)': the URL names no host" }
        return nil
    }
}

extension Scene {
    /// The URLs the scene's image widgets and video playlist items name, each with the shortest `refresh` of the
    /// widgets that name it.
    public var remoteAssets: [String: Int] {
        var refresh: [String: Int] = [:]
        if let image = backgroundImage, RemoteAsset.looksRemote(image.path) { refresh[image.path] = image.refreshSeconds }
        for font in fonts where RemoteAsset.looksRemote(font) {
            refresh[font] = min(refresh[font] ?? .max, ImageProperties.defaultRefreshSeconds)
        }
        for widget in allWidgets {
            switch widget.content {
            case .image(let image) where RemoteAsset.looksRemote(image.path):
                refresh[image.path] = min(refresh[image.path] ?? .max, image.refreshSeconds)
            case .video(let video):
                for source in video.sources where RemoteAsset.isFetched(source) {
                    refresh[source] = min(refresh[source] ?? .max, video.refreshSeconds)
                }
            default: break
            }
        }
        return refresh
    }
}
