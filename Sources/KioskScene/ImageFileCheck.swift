import Foundation
import KioskCore

/// Checks that an image a scene names exists, can be read, starts like a PNG, JPEG or SVG file, and declares no
/// more pixels than `memory.max_image_pixels` in its header. Decoding waits for rendering; this catches the mistakes
/// a scene author makes (a typo, a wrong file, permissions, a poster far too large) at validation time, and keeps a
/// decompression bomb out of `scene.load`. Synchronous file I/O (through `RegularFile`): use it off the main loop.
/// Stateless; any thread.
public enum ImageFileCheck {
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    static let jpegSignature: [UInt8] = [0xFF, 0xD8, 0xFF]

    /// nil when the file looks usable, otherwise why not. A path that is not a regular file (a FIFO, a device node,
    /// a socket, a directory) is refused unread, naming what it is.
    public static func problem(at path: String, named name: String,
                               maximumPixels: Int = ImagePixelLimit.defaultMaximum) -> String? {
        let shownPath = name == path ? "" : " (\(path))"
        let file: RegularFile
        do {
            file = try RegularFile(opening: path)
        } catch {
            switch error.reason {
            case .notFound: return "image '\(name)' not found (looked for \(path))"
            case .notRegular: return "image '\(name)' \(error.problem)\(shownPath)"
            case .system: return "cannot read image '\(name)'\(shownPath): \(error.problem)"
            }
        }
        let head: [UInt8]
        do { head = try file.bytes(at: 0, count: 1024) } catch {
            return "cannot read image '\(name)'\(shownPath): \(error.problem)"
        }
        if head.starts(with: pngSignature) || head.starts(with: jpegSignature) {
            // A header that cannot be read is left to the renderer, which refuses the file naming the problem:
            // the check looks at signatures, not at whole files.
            guard let header = try? ImageHeader.read(file) else { return nil }
            return ImagePixelLimit.problem(header, maximum: maximumPixels).map { "image '\(name)': \($0)" }
        }
        if looksLikeSVG(head) { return nil }
        return "'\(name)' is not a PNG, JPEG or SVG image (its first bytes match none of their signatures)"
    }

    /// SVG has no magic number: accept XML text whose first kilobyte opens an `<svg` element.
    static func looksLikeSVG(_ head: [UInt8]) -> Bool {
        let text = String(decoding: head, as: UTF8.self)
        let trimmed = text.drop { $0 == "\u{FEFF}" || $0.isWhitespace }
        return trimmed.hasPrefix("<") && trimmed.contains("<svg")
    }
}
