import KioskCore
import Yams

extension ConfigDecoder {
    /// The `video:` section. `allowed_schemes` is a list of scheme names, each in lowercase with RFC 3986's syntax
    /// and listed once; each bad entry is an error at its own line (`video.allowed_schemes[1]: 'RTSP': ...`). An
    /// empty list allows no video at all; an empty `video:` is no section.
    func video(_ node: Node) -> KioskConfig.Video {
        var video = KioskConfig.Video()
        if node.scalar != nil, scene.resolves(node, to: .null) { return video }
        guard let f = scene.fields(node, "video", allowed: Self.videoKeys, expected: "a mapping (allowed_schemes)") else {
            return video
        }
        if let entry = f["allowed_schemes"] {
            video.allowedSchemes = allowedSchemes(entry.value, "video.allowed_schemes")
        }
        return video
    }

    /// The list, or nil (the default) when any entry is wrong: a partial list would refuse what was meant.
    private func allowedSchemes(_ node: Node, _ path: String) -> [String]? {
        guard let items = node.sequence else {
            scene.error(node, path, "expected a list of URI schemes, such as [file, https, http]")
            return nil
        }
        var schemes: [String] = []
        var valid = true
        for (index, item) in items.enumerated() {
            let at = "\(path)[\(index)]"
            guard let name = scene.string(item, at) else { valid = false; continue }
            if let problem = VideoSchemes.problem(withEntry: name) {
                scene.error(item, at, problem)
                valid = false
            } else if schemes.contains(name) {
                scene.error(item, at, "'\(name)' is listed twice")
                valid = false
            } else {
                schemes.append(name)
            }
        }
        return valid ? schemes : nil
    }
}
