import Foundation
import KioskCore

/// What an SVG document refers to, checked before librsvg loads it. librsvg (2.54, Debian 12) loads the files a
/// document names (`<image>`, `<use>`, `xi:include`, ...) only from the document's folder and below, and decodes the
/// rasters it embeds or names with no size limit of its own, opening a named file with a plain blocking open. So,
/// before it runs: every raster the document embeds (a `data:` URI) or names in its folder must declare no more
/// pixels than `memory.max_image_pixels` in its header, and every file it names in its folder must be a regular
/// file (a FIFO there would block the render worker for good). Files outside the folder are left alone: librsvg
/// refuses them unread.
///
/// A bounded scan of the document's text for `href` attribute values (`href`, `xlink:href`, any prefix), as
/// `FlowDepthScan` is for YAML: not an XML parser. It does not see references made through CSS (`url()` in a
/// style, `@import`), nor markup hidden in a DTD entity by character references; those still meet librsvg's own
/// folder rule. Stateless; render worker.
enum SVGReferences {
    /// The most of an SVG file read for the scan; a larger document is refused (`memory.max_image_pixels` could not
    /// be held to otherwise).
    static let maximumDocumentBytes = 64 << 20
    /// How much of an embedded raster is decoded to find its header: a JPEG's frame header lies within its first
    /// MiB (`ImageHeader.jpegSearchLimit`), whose base64 is 4/3 as long.
    static let embeddedHeaderCharacters = (ImageHeader.jpegSearchLimit / 3 + 1) * 4

    /// nil when every reference is acceptable, else the sentence saying which one is not and why.
    static func problem(in text: [UInt8], folder: String, maxPixels: Int) -> String? {
        for value in hrefValues(in: text) {
            if let problem = problem(of: value, folder: folder, maxPixels: maxPixels) { return problem }
        }
        return nil
    }

    private static func problem(of value: String, folder: String, maxPixels: Int) -> String? {
        let reference = value.trimmingCharacters(in: .whitespacesAndNewlines)
        if reference.isEmpty || reference.hasPrefix("#") { return nil }
        if reference.lowercased().hasPrefix("data:") {
            guard let bytes = embeddedBytes(reference),
                  let header = try? ImageHeader.read(bytes: bytes),
                  let problem = ImagePixelLimit.problem(header, maximum: maxPixels) else { return nil }
            return "embedded image (data: URI): \(problem)"
        }
        var name = reference
        if name.hasPrefix("file://") { name = String(name.dropFirst("file://".count)) } else if name.contains("://") { return nil }
        if let fragment = name.firstIndex(of: "#") { name = String(name[..<fragment]) }
        name = name.removingPercentEncoding ?? name
        guard !name.isEmpty else { return nil }
        let path = PathNames.normalized(name.hasPrefix("/") ? name : folder + "/" + name)
        guard path.hasPrefix(folder == "/" ? "/" : folder + "/") else { return nil }
        let file: RegularFile
        do {
            file = try RegularFile(opening: path)
        } catch {
            if case .notRegular = error.reason { return "reference '\(reference)': \(error)" }
            return nil  // missing or unreadable: librsvg leaves it out and draws the rest
        }
        guard let header = try? ImageHeader.read(file), let problem = ImagePixelLimit.problem(header, maximum: maxPixels) else {
            return nil
        }
        return "image '\(reference)' \(problem)"
    }

    /// The first bytes of a `data:` URI's payload (base64 or percent-encoded), enough for an image header.
    private static func embeddedBytes(_ uri: String) -> [UInt8]? {
        guard let comma = uri.firstIndex(of: ",") else { return nil }
        let metadata = uri[..<comma].lowercased(), payload = uri[uri.index(after: comma)...]
        guard metadata.hasSuffix(";base64") else {
            return Array((String(payload.prefix(ImageHeader.jpegSearchLimit)).removingPercentEncoding ?? "").utf8)
        }
        var characters = payload.lazy.filter { !$0.isWhitespace }.prefix(embeddedHeaderCharacters)
            .map { $0 }
        characters.removeLast(characters.count % 4)
        return Data(base64Encoded: String(characters)).map { [UInt8]($0) }
    }

    /// The values of every attribute named `href` or `<prefix>:href`, quotes removed and the five XML entities
    /// expanded.
    static func hrefValues(in text: [UInt8]) -> [String] {
        let name = Array("href".utf8)
        var values: [String] = []
        var i = 0
        while let start = find(name, in: text, from: i) {
            i = start + name.count
            // An attribute name starts after white space or a namespace prefix's colon.
            guard start > 0, [UInt8(ascii: " "), 0x09, 0x0A, 0x0D, UInt8(ascii: ":")].contains(text[start - 1]) else { continue }
            var j = i
            while j < text.count, [UInt8(ascii: " "), 0x09, 0x0A, 0x0D].contains(text[j]) { j += 1 }
            guard j < text.count, text[j] == UInt8(ascii: "=") else { continue }
            j += 1
            while j < text.count, [UInt8(ascii: " "), 0x09, 0x0A, 0x0D].contains(text[j]) { j += 1 }
            guard j < text.count, text[j] == UInt8(ascii: "\"") || text[j] == UInt8(ascii: "'") else { continue }
            let quote = text[j]
            guard let end = text[(j + 1)...].firstIndex(of: quote) else { break }
            values.append(unescaped(String(decoding: text[(j + 1)..<end], as: UTF8.self)))
            i = end + 1
        }
        return values
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        var i = start
        while i + needle.count <= haystack.count {
            if haystack[i] == needle[0], haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }

    private static func unescaped(_ value: String) -> String {
        guard value.contains("&") else { return value }
        return value.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
