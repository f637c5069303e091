import Foundation
import KioskCore
import Yams

/// The `video` widget and `duration: video` pages. A clip GStreamer cannot open is an error only at run time;
/// here a file must exist and be readable, and a URI must have a scheme that `video.allowed_schemes` allows. An
/// `https` or `http` item is downloaded whole into the asset cache and played from there, never streamed.
extension SceneDecoder {
    static let videoKeys = ["source", "playlist", "loop", "fit", "muted", "volume", "placeholder", "refresh"]
    static let playlistItemKeys = ["source", "when", "priority"]
    static let playlistItemExample = "{source: breakfast.mp4, when: {from: \"06:00\", to: \"11:00\"}, priority: 10}"

    func video(_ f: [String: (key: Node, value: Node)], node: Node, path: String) -> VideoProperties? {
        func key(_ k: String) -> String { Self.child(path, k) }
        var items: [VideoProperties.Item]?
        switch (f["source"], f["playlist"]) {
        case let (s?, p?):
            error(p.key, key("playlist"), "give 'source' (one clip) or 'playlist' (clips in turn), not both")
            items = videoSource(s.value, key("source")).map { [VideoProperties.Item(source: $0)] }
        case let (s?, nil):
            items = videoSource(s.value, key("source")).map { [VideoProperties.Item(source: $0)] }
        case let (nil, p?):
            if let list = p.value.sequence, !list.isEmpty {
                let decoded = list.enumerated().map { playlistItem($0.element, "\(key("playlist"))[\($0.offset)]") }
                items = decoded.allSatisfy { $0 != nil } ? decoded.compactMap { $0 } : nil
            } else {
                error(p.value, key("playlist"), "expected a list of at least one clip (file or URI)")
            }
        case (nil, nil):
            error(node, path, "a video widget needs 'source' (a file or URI) or 'playlist'")
        }
        let loop = f["loop"].map { bool($0.value, key("loop")) } ?? true
        let fit = f["fit"].map { choice($0.value, key("fit"), VideoFit.self) } ?? .contain
        let muted = f["muted"].map { bool($0.value, key("muted")) } ?? true
        let volume = f["volume"].map { number($0.value, key("volume"), in: 0...1) } ?? 1
        var placeholder: String?? = .some(nil)
        if let p = f["placeholder"] {
            if let name = p.value.scalar?.string, RemoteAsset.looksRemote(name) {
                error(p.value, key("placeholder"), "a video's placeholder is shown the moment its clip fails, so it must be a file on the board, not a URL ('\(name)')")
                placeholder = nil
            } else {
                placeholder = imagePath(p.value, key("placeholder"), remote: false).map { .some($0) }
            }
        }
        var refresh: Int? = ImageProperties.defaultRefreshSeconds
        if let r = f["refresh"] {
            refresh = integer(r.value, key("refresh"), in: ImageProperties.refreshRange)
            if let items, refresh != nil, !items.contains(where: { RemoteAsset.isFetched($0.source) }) {
                error(r.key, key("refresh"), "'refresh' is for clips named by an https or http URL, which play from the asset cache; this video has none")
                refresh = nil
            }
        }
        guard let items, let loop, let fit, let muted, let volume, let placeholder, let refresh else { return nil }
        return VideoProperties(items: items, loop: loop, fit: fit, muted: muted, volume: volume, placeholder: placeholder,
                               refreshSeconds: refresh)
    }

    /// A `playlist` entry: a clip (file or URI), or `{source: clip, when: rules, priority: n}` with the same rules as
    /// pages' `when:` (read in the scene's `timezone:`).
    func playlistItem(_ node: Node, _ path: String) -> VideoProperties.Item? {
        guard node.mapping != nil else { return videoSource(node, path).map { VideoProperties.Item(source: $0) } }
        guard let f = fields(node, path, allowed: Self.playlistItemKeys, expected: "a clip or \(Self.playlistItemExample)") else { return nil }
        guard let entry = f["source"] else {
            error(node, path, "a playlist item needs 'source' (a file or URI), as in \(Self.playlistItemExample)")
            return nil
        }
        var valid = true
        let source = videoSource(entry.value, Self.child(path, "source"))
        var item = VideoProperties.Item(source: source ?? "")
        if let entry = f["when"] {
            if let rules = rules(entry.value, Self.child(path, "when"), what: "the item") { item.rules = rules } else { valid = false }
        }
        if let entry = f["priority"] {
            if let priority = integer(entry.value, Self.child(path, "priority"), in: -1000...1000) { item.priority = priority } else { valid = false }
        }
        return valid && source != nil ? item : nil
    }

    /// A URI as written, or a file resolved against the scene's folder that exists and can be read. Its scheme (`file`
    /// for a path) must be one of `video.allowed_schemes` (`limits.videoSchemes`).
    func videoSource(_ node: Node, _ path: String) -> String? {
        guard var name = string(node, path) else { return nil }
        if VideoSchemes.parse(name) == .path {
            switch resolvedAgainstSceneURL(name) {
            case .failure(let problem)?:
                error(node, path, problem.message)
                return nil
            case .success(let url)?: name = url
            case nil: break
            }
        }
        if let refusal = limits.videoSchemes.refusal(of: name) {
            error(node, path, refusal.hasPrefix("'") ? refusal : "video '\(name)': \(refusal)")
            return nil
        }
        if RemoteAsset.isFetched(name), let problem = RemoteAsset.problem(with: name, kind: "video") {
            error(node, path, problem)
            return nil
        }
        guard let file = VideoSchemes.filePath(of: name) else { return name }
        if file != name { return videoFileProblem(file, named: name, node, path) ? nil : name }
        let resolved = name.hasPrefix("/") ? name : URL(fileURLWithPath: baseDirectory).appendingPathComponent(name).standardizedFileURL.path
        return videoFileProblem(resolved, named: name, node, path) ? nil : resolved
    }

    /// Records a diagnostic and returns true when the clip file is missing, unreadable, or not a regular file (a
    /// folder, a FIFO, a device node: GStreamer's file source would block on a FIFO or read a device forever).
    private func videoFileProblem(_ file: String, named name: String, _ node: Node, _ path: String) -> Bool {
        do {
            _ = try RegularFile(opening: file)
            return false
        } catch {
            let shownPath = name == file ? "" : " (\(file))"
            switch error.reason {
            case .notFound: self.error(node, path, "video '\(name)' not found (looked for \(file))")
            case .notRegular: self.error(node, path, "video '\(name)' \(error.problem)\(shownPath)")
            case .system: self.error(node, path, "cannot read video '\(name)'\(shownPath): \(error.problem)")
            }
            return true
        }
    }

    /// A page's `duration`: seconds, or `video` (handled by the caller).
    func pageDuration(_ node: Node, _ path: String) -> Double? {
        if isNumber(node) { return number(node, path, in: 0.1...86_400) }
        error(node, path, "expected seconds (0.1...86400) or 'video' (advance when the page's video ends)")
        return nil
    }

    /// `duration: video` on a page without a video would never advance.
    func checkHasVideo(_ page: Page, node: Node, path: String) {
        let hasVideo = page.widgets.flatMap(\.flattened).contains { $0.type == .video }
        if !hasVideo { error(node, path, "'duration: video' needs a video widget on the page") }
    }
}
