import KioskCore

/// Whether a file is a font FreeType reads, by its first bytes: TrueType (`00 01 00 00`, `true`), OpenType
/// (`OTTO`), a collection (`ttcf`), WOFF (`wOFF`) or WOFF2 (`wOF2`). A scene's `fonts:` entries are checked so at
/// decoding, and the copy of a font named by URL when it arrives. Stateless; any thread.
public enum FontFileCheck {
    /// Why the file at `path` (written `name` in the scene) is no font, or nil when it starts as one.
    public static func problem(at path: String, named name: String) -> String? {
        let shownPath = name == path ? "" : " (\(path))"
        let head: [UInt8]
        do {
            let file = try RegularFile(opening: path)
            head = Array(try file.contents(maximumBytes: 4).prefix(4))
        } catch {
            switch error.reason {
            case .notFound: return "font '\(name)' not found (looked for \(path))"
            case .notRegular: return "font '\(name)' \(error.problem)\(shownPath)"
            case .system: return "cannot read font '\(name)'\(shownPath): \(error.problem)"
            }
        }
        return problem(withHead: head, named: name)
    }

    /// Why a file starting with `head` is no font, or nil.
    public static func problem(withHead head: [UInt8], named name: String) -> String? {
        let signatures: [[UInt8]] = [[0, 1, 0, 0], Array("true".utf8), Array("OTTO".utf8), Array("ttcf".utf8),
                                     Array("wOFF".utf8), Array("wOF2".utf8)]
        guard head.count == 4, signatures.contains(head) else {
            return "font '\(name)' is not a TrueType, OpenType or WOFF font"
        }
        return nil
    }
}
