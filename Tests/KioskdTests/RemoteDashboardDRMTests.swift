import Foundation
import KioskCore
import KioskRender
import KioskTestSupport
import XCTest

/// The default dashboard (scenes/dashboard.yaml) on the vkms device with its logo and its ticker's headline from a
/// server on the VM's loopback: shown once fetched; with the server stopped (the network gone) frames keep flipping,
/// the screen still shows the cached logo and the last headline, and `stats` names the logo as stale.
final class RemoteDashboardDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    private static let dashboard = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scenes/dashboard.yaml")

    func testTheDashboardKeepsItsRemoteContentWhenTheServerStops() throws {
        let server = try FaultServer("remote-dashboard")
        var logo = [UInt8](repeating: 0, count: 16 * 16 * 4)
        for i in stride(from: 0, to: logo.count, by: 4) { logo[i] = 0xE0; logo[i + 1] = 0xC0; logo[i + 2] = 0x20; logo[i + 3] = 0xFF }  // B, G, R, X: 0x20C0E0
        try Data(try encodePNG(xrgb8888: logo, size: Size(width: 16, height: 16), stride: 64))
            .write(to: server.directory.appendingPathComponent("logo.png"))
        try server.write("feed.xml", "<rss><channel><item><title>Line 4 runs late</title></item></channel></rss>")

        // The dashboard as shipped, its logo and headline from the server.
        var scene = try String(contentsOf: Self.dashboard, encoding: .utf8)
        XCTAssertTrue(scene.contains("path: images/logo.png") && scene.contains("\npages:"), "the dashboard names its logo and pages")
        scene = scene.replacingOccurrences(of: "path: images/logo.png", with: "path: \"\(server.url("/files/logo.png"))\"\n        refresh: 5")
        scene = scene.replacingOccurrences(of: "\npages:", with: "\ndata_sources:\n  - {rss: '\(server.url("/files/feed.xml"))', every: 1s, key: headline, items: 1}\n\npages:")
        let dir = try KioskdProcess.scratchDirectory("remote-dashboard")
        let file = dir.appendingPathComponent("dashboard.yaml")
        try scene.write(to: file, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--backend", "drm", "--mode", "640x480", "--scene", file.path, "--screenshot-dir", dir.path],
                                          environment: ["CACHE_DIRECTORY": dir.appendingPathComponent("cache").path], readyTimeout: 120)
        defer { _ = daemon.stop() }
        let started = Date()
        var phases: [String] = []
        func phase(_ name: String) { phases.append(String(format: "%@ %.1f s", name, Date().timeIntervalSince(started))) }

        func logoShown() throws -> Bool {
            let shot = dir.appendingPathComponent("shot-\(UUID().uuidString).png")
            defer { try? FileManager.default.removeItem(at: shot) }
            let result = try daemon.result("screenshot", #"{"path": "\#(shot.path)"}"#)
            let width = result["width"] as? Int ?? 0, height = result["height"] as? Int ?? 0
            // The logo's box: x 84% to 96%, y 4% to 20%; its centre is the picture (fit: contain, square).
            return try PNGFile(contentsOf: shot).rgb(x: width * 90 / 100, y: height * 12 / 100) == 0x20C0E0
        }
        // The ticker's text template shows `headline`.
        func headline() throws -> String? {
            (try daemon.result("data.get", #"{"keys": ["headline"]}"#)["values"] as? [String: String])?["headline"]
        }

        // The cheap check first (`stats`), then screenshots, which cost an encode each under TCG.
        try Poll.until("the logo in the cache", timeout: 60, interval: 0.2) {
            let cache = try daemon.result("stats")["cache"] as? [String: Any]
            return cache?["entries"] as? Int == 1
        }
        phase("cached")
        try Poll.until("the remote logo on screen", timeout: 30, interval: 0.3) { try logoShown() }
        phase("shown")
        try Poll.until("the feed's headline in the ticker", reading: { try headline() }, satisfies: { $0 == "Line 4 runs late" })

        // The network gone; the logo revalidated now rather than at its next refresh.
        server.stop()
        _ = try daemon.result("cache.refresh")
        try Poll.until("the logo stale in stats", timeout: 30, interval: 0.5) {
            let stale = (try daemon.result("stats")["cache"] as? [String: Any])?["stale"] as? [[String: Any]] ?? []
            return stale.contains { $0["url"] as? String == server.url("/files/logo.png") }
        }
        phase("stale")
        let before = try daemon.framesFlipped()
        try Poll.until("frames flipping with the server gone", timeout: 30, interval: 0.2) { try daemon.framesFlipped() >= before + 30 }
        XCTAssertTrue(try logoShown(), "the cached logo is still on screen")
        XCTAssertEqual(try headline(), "Line 4 runs late", "the last headline is kept")
        XCTAssertTrue(daemon.isRunning)
        phase("checked")
        print("remote-dashboard: " + phases.joined(separator: ", "))
    }
}
