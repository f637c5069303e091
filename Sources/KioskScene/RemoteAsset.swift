import Foundation

/// An image widget's picture named by URL (`https://...`, `http://...`): fetched into the asset cache and shown
/// from there (kioskd's `RemoteAssetWiring`); until a copy is held the widget shows its background. A namespace.
public enum RemoteAsset {
    /// Whether `name` is written as a URL rather than a path: a scheme of letters, then `://`.
    public static func looksRemote(_ name: String) -> Bool {
        guard let colon = name.range(of: "://") else { return false }
        let scheme = name[..<colon.lowerBound]
        return !scheme.isEmpty && scheme.allSatisfy { $0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == "." }
    }

    /// Why `url` cannot be fetched (a scheme other than http and https, no host, not a URL), or nil.
    public static func problem(with url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            return "image '\(url)': not a URL"
        }
        guard scheme == "https" || scheme == "http" else {
            return "image '\(url)': scheme '\(scheme)' cannot be fetched; use https or http (or a file path)"
        }
        guard let host = components.host, !host.isEmpty else { return "image '\(url)': the URL names no host" }
        guard url.utf8.count <= 4096 else { return "image URL of \(url.utf8.count) bytes: at most 4096" }
        return nil
    }
}

extension Scene {
    /// The URLs the scene's image widgets name, each with the shortest `refresh` of the widgets that name it.
    public var remoteAssets: [String: Int] {
        var refresh: [String: Int] = [:]
        for widget in allWidgets {
            if case .image(let image) = widget.content, RemoteAsset.looksRemote(image.path) {
                refresh[image.path] = min(refresh[image.path] ?? .max, image.refreshSeconds)
            }
        }
        return refresh
    }
}
