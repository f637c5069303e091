import Foundation
import KioskTestSupport
import XCTest

/// A scene's `fonts:` entry named by URL, against a real HTTP server on loopback: the font is fetched, cached and
/// registered, and text in its family renders as that font does (the same screenshot, to the byte, as the same
/// glyphs from the system's copy), where without it the family falls back to another font. The font served is
/// DejaVu Serif with its family renamed, so no installed font answers to that family.
final class RemoteFontTests: XCTestCase {
    /// A family no installed font has, as long as "DejaVu Serif" so the file keeps its layout.
    private let family = "KioskTestSrf"

    /// DejaVu Serif (fonts-dejavu-core) with its family name replaced by `family` in the name table's ASCII and
    /// UTF-16BE strings; FreeType does not check table checksums.
    private func renamedFont() throws -> Data {
        let match = try RunningProcess(path: "/usr/bin/fc-match", arguments: ["-f", "%{file}", "DejaVu Serif"]).finish(timeout: 30)
        let path = match.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard match.status == 0, path.hasSuffix("DejaVuSerif.ttf") else {
            throw ControlTestError("DejaVu Serif is not installed (fonts-dejavu-core, scripts/setup-host): fc-match gave '\(path)'")
        }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var replaced = 0
        for (from, to) in [("DejaVu Serif", family)] {
            for encode in [{ (s: String) in Array(s.utf8) }, { (s: String) in s.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } }] {
                let (old, new) = (encode(from), encode(to))
                var i = 0
                while i + old.count <= bytes.count {
                    if bytes[i..<i + old.count].elementsEqual(old) {
                        bytes.replaceSubrange(i..<i + old.count, with: new)
                        replaced += 1
                        i += old.count
                    } else {
                        i += 1
                    }
                }
            }
        }
        guard replaced > 0 else { throw ControlTestError("\(path): no family name to replace") }
        return Data(bytes)
    }

    /// The screenshot of "Wg" in `fontFamily` on white, with `fonts` (YAML list) in the scene, once `ready` holds
    /// for it (or at once).
    private func shot(fontFamily: String, fonts: String?, in dir: URL, seen: ((Data) -> Void)? = nil,
                      until ready: ((Data) -> Bool)? = nil) throws -> Data {
        let scene = dir.appendingPathComponent("scene-\(UUID().uuidString).yaml")
        try """
            background: "#FFFFFF"
            \(fonts.map { "fonts: \($0)" } ?? "")
            widgets:
              - {type: text, text: "Wg", x: 0, y: 0, width: 100%, height: 100%, foreground: "#000000", font: {family: "\(fontFamily)", size: 40}}
            """.write(to: scene, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "96x64@60", "--scene", scene.path, "--screenshot-dir", dir.path],
                                          environment: ["CACHE_DIRECTORY": dir.appendingPathComponent("cache").path])
        defer { daemon.stop() }
        /// The screenshot, and whether it shows the scene's text: the white background with dark pixels on it (a
        /// frame before the scene appeared is all black).
        func take() throws -> (png: Data, text: Bool) {
            let file = dir.appendingPathComponent("shot-\(UUID().uuidString).png")
            _ = try daemon.result("screenshot", #"{"path": "\#(file.path)"}"#)
            defer { try? FileManager.default.removeItem(at: file) }
            let image = try PNGFile(contentsOf: file)
            let pixels = (0..<image.height).flatMap { y in (0..<image.width).map { x in image.rgb(x: x, y: y) } }
            let text = pixels.contains { $0 & 0xFF < 0x40 } && pixels.contains { $0 == 0xFFFFFF }
            return (try Data(contentsOf: file), text)
        }
        var last = Data()
        try Poll.until("the text in \(fontFamily) on screen\(ready == nil ? "" : " as expected")", timeout: 30) {
            let shot = try take()
            if shot.text { seen?(shot.png) }
            defer { last = shot.png }
            // The same twice in a row: no frame of the scene still coming in is taken.
            return shot.text && shot.png == last && (ready?(shot.png) ?? true)
        }
        return last
    }

    func testAFontByURLIsFetchedRegisteredAndUsed() throws {
        let server = try FaultServer("remote-font")
        try renamedFont().write(to: server.directory.appendingPathComponent("brand.ttf"))
        let dir = try KioskdProcess.scratchDirectory("remote-font")
        let reference = try shot(fontFamily: "DejaVu Serif", fonts: nil, in: dir)
        let fallback = try shot(fontFamily: family, fonts: nil, in: dir)
        XCTAssertNotEqual(fallback, reference, "without the font, its family falls back to another font")
        let fetched = try shot(fontFamily: family, fonts: "[\"\(server.url("/files/brand.ttf"))\"]", in: dir, until: { $0 == reference })
        XCTAssertEqual(fetched, reference)
        XCTAssertEqual(server.requests("/files/brand.ttf", status: 200), 1)

        // The server gone: a new kiosk registers the cached copy before its first text renders.
        server.stop()
        var shown: Set<Data> = []
        let offline = try shot(fontFamily: family, fonts: "[\"\(server.url("/files/brand.ttf"))\"]", in: dir, seen: { shown.insert($0) })
        XCTAssertEqual(offline, reference)
        XCTAssertEqual(shown, [reference], "no screenshot showed the fallback font")
    }

    func testAFontFileThatIsNoFontIsRefusedWhereItIsNamed() throws {
        let dir = try KioskdProcess.scratchDirectory("remote-font-bad")
        try "not a font".write(to: dir.appendingPathComponent("notes.ttf"), atomically: true, encoding: .utf8)
        let scene = dir.appendingPathComponent("scene.yaml")
        try """
            fonts: [notes.ttf, missing.otf, "ftp://host/a.ttf"]
            widgets: []
            """.write(to: scene, atomically: true, encoding: .utf8)
        let check = try KioskdProcess.run(["check", scene.path])
        XCTAssertNotEqual(check.status, 0)
        for words in ["fonts[0]: font 'notes.ttf' is not a TrueType, OpenType or WOFF font", "fonts[1]: font 'missing.otf' not found",
                      "fonts[2]: font 'ftp://host/a.ttf': scheme 'ftp' cannot be fetched"] {
            XCTAssertTrue(check.stderr.contains(words), "\(words): \(check.stderr)")
        }
    }
}
