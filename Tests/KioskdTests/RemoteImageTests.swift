import Foundation
import KioskCore
import KioskRender
import KioskTestSupport
import XCTest

/// An image widget whose `path` is a URL, against a real HTTP server on loopback: the picture is shown once fetched,
/// a new version on the server replaces it within `refresh` with no frame of the background in between, and with
/// the server gone a restarted kiosk shows the cached copy at once, the same picture to the byte.
final class RemoteImageTests: XCTestCase {
    /// A solid PNG of 16x16 in `rgb`.
    private func png(_ rgb: UInt32) throws -> Data {
        let size = Size(width: 16, height: 16)
        var bytes = [UInt8](repeating: 0, count: 16 * 16 * 4)
        for i in stride(from: 0, to: bytes.count, by: 4) {
            bytes[i] = UInt8(rgb & 0xFF); bytes[i + 1] = UInt8((rgb >> 8) & 0xFF); bytes[i + 2] = UInt8(rgb >> 16); bytes[i + 3] = 0xFF
        }
        return Data(try encodePNG(xrgb8888: bytes, size: size, stride: 64))
    }

    /// The screen's centre pixel (0xRRGGBB) and the screenshot's PNG bytes.
    private func centre(_ daemon: ControlledKioskd, in dir: URL) throws -> (rgb: UInt32, png: Data) {
        let file = dir.appendingPathComponent("shot-\(UUID().uuidString).png")
        _ = try daemon.result("screenshot", #"{"path": "\#(file.path)"}"#)
        defer { try? FileManager.default.removeItem(at: file) }
        return (try PNGFile(contentsOf: file).rgb(x: 32, y: 24), try Data(contentsOf: file))
    }

    func testAnImageFromAURLIsShownRenewedAndKeptOffline() throws {
        let server = try FaultServer("remote-image")
        try png(0xFF0000).write(to: server.directory.appendingPathComponent("a.png"))
        let dir = try KioskdProcess.scratchDirectory("remote-image")
        let scene = dir.appendingPathComponent("scene.yaml")
        try """
            background: black
            widgets:
              - {type: image, path: "\(server.url("/files/a.png"))", refresh: 5, fit: fill, x: 0, y: 0, width: 100%, height: 100%}
            """.write(to: scene, atomically: true, encoding: .utf8)
        let arguments = ["run", "--backend", "headless", "--mode", "64x48@60", "--scene", scene.path, "--screenshot-dir", dir.path]
        let environment = ["CACHE_DIRECTORY": dir.appendingPathComponent("cache").path]
        var daemon: ControlledKioskd? = try ControlledKioskd(arguments, environment: environment)
        try Poll.until("the fetched picture on screen", timeout: 30) { try centre(daemon!, in: dir).rgb == 0xFF0000 }

        // A new version: shown within `refresh`; every screenshot meanwhile is the old picture or the new one.
        try png(0x0000FF).write(to: server.directory.appendingPathComponent("a.png"))
        var seen: Set<UInt32> = []
        try Poll.until("the new version on screen", timeout: 30, interval: 0.1) {
            let shown = try centre(daemon!, in: dir).rgb
            seen.insert(shown)
            return shown == 0x0000FF
        }
        XCTAssertEqual(seen.subtracting([0xFF0000, 0x0000FF]), [], "only the old and the new picture were shown: \(seen.map { String($0, radix: 16) })")
        XCTAssertGreaterThanOrEqual(server.requests("/files/a.png", status: 200), 2)
        let online = try centre(daemon!, in: dir).png
        XCTAssertEqual(daemon!.stop().status, 0)
        daemon = nil

        // The server gone: a new kiosk shows the cached copy, the same screenshot.
        server.stop()
        daemon = try ControlledKioskd(arguments, environment: environment)
        defer { daemon?.stop() }
        var offline = Data()
        try Poll.until("the cached picture on screen with the server gone", timeout: 30) {
            let shot = try centre(daemon!, in: dir)
            offline = shot.png
            return shot.rgb == 0x0000FF
        }
        XCTAssertEqual(offline, online, "the cached scene's screenshot is byte-identical")
        XCTAssertTrue(daemon!.isRunning)
    }

    func testAURLThatCannotBeFetchedIsRefusedWithItsReason() throws {
        let dir = try KioskdProcess.scratchDirectory("remote-image-bad")
        let scene = dir.appendingPathComponent("scene.yaml")
        try png(0x00FF00).write(to: dir.appendingPathComponent("local.png"))
        try """
            widgets:
              - {type: image, path: "ftp://example.com/a.png"}
              - {type: image, path: "https:///a.png", y: 10}
              - {type: image, path: "local.png", refresh: 10, y: 20}
              - {type: video, source: "/nowhere/a.webm", placeholder: "https://example.com/p.png", y: 30}
            """.write(to: scene, atomically: true, encoding: .utf8)
        let check = try KioskdProcess.run(["check", scene.path])
        XCTAssertNotEqual(check.status, 0)
        for words in ["scheme 'ftp' cannot be fetched", "the URL names no host", "'refresh' is for an image named by URL",
                      "placeholder is shown the moment its clip fails"] {
            XCTAssertTrue(check.stderr.contains(words) || check.stdout.contains(words), "\(words): \(check.stderr)")
        }
    }

    /// The scene's `background: {image: URL}`: the colour until the copy is whole, then the picture, the same
    /// screenshot to the byte as the same scene naming the file on the board.
    func testABackgroundImageByURLMatchesTheSameImageFromAFile() throws {
        let server = try FaultServer("remote-background")
        let picture = try png(0x20A040)
        try picture.write(to: server.directory.appendingPathComponent("bg.png"))
        let dir = try KioskdProcess.scratchDirectory("remote-background")
        try picture.write(to: dir.appendingPathComponent("bg.png"))
        func shot(_ image: String) throws -> Data {
            let scene = dir.appendingPathComponent("scene-\(UUID().uuidString).yaml")
            try """
                background: {image: "\(image)", fit: fill, colour: "#000000"}
                widgets:
                  - {type: rect, x: 8, y: 8, width: 8, height: 8, background: "#FFFFFF"}
                """.write(to: scene, atomically: true, encoding: .utf8)
            let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "64x48@60", "--scene", scene.path, "--screenshot-dir", dir.path],
                                              environment: ["CACHE_DIRECTORY": dir.appendingPathComponent("cache").path])
            defer { daemon.stop() }
            var last = Data()
            try Poll.until("the background picture \(image) on screen", timeout: 30) {
                let shot = try centre(daemon, in: dir)
                last = shot.png
                return shot.rgb == 0x20A040
            }
            return last
        }
        let fromFile = try shot("bg.png")
        let fromURL = try shot(server.url("/files/bg.png"))
        XCTAssertEqual(fromURL, fromFile, "the background by URL renders as the same picture from a file")
        XCTAssertEqual(server.requests("/files/bg.png", status: 200), 1)
    }

    func testAnImageBackgroundIsTheScenesOnly() throws {
        let dir = try KioskdProcess.scratchDirectory("remote-background-bad")
        let scene = dir.appendingPathComponent("scene.yaml")
        try png(0x00FF00).write(to: dir.appendingPathComponent("local.png"))
        try """
            background: {image: local.png, refresh: 10, fit: sideways}
            widgets:
              - {type: rect, background: {image: "https://example.com/a.png"}}
            """.write(to: scene, atomically: true, encoding: .utf8)
        let check = try KioskdProcess.run(["check", scene.path])
        XCTAssertNotEqual(check.status, 0)
        for words in ["1:32: background.refresh: 'refresh' is for an image named by URL", "background.fit",
                      "widgets[0].background: an image background is for the whole scene"] {
            XCTAssertTrue(check.stderr.contains(words), "\(words): \(check.stderr)")
        }
    }
}
