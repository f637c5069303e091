import Foundation
import Glibc
import KioskCore
import KioskRender
import KioskTestSupport
import XCTest

/// The asset cache of a running kioskd against the fault server: its figures in `stats`, the `cache` event and
/// `cache.refresh` / `cache.clear` (hostile arguments included); a download killed with SIGKILL halfway leaves no
/// partial asset and is fetched again after a restart; a 1 GiB body and a gzip bomb for an image are refused while
/// kioskd's memory stays flat and `ping` stays quick.
final class AssetCacheDaemonTests: XCTestCase {
    /// A solid 16x16 PNG of `rgb`.
    private func png(_ rgb: UInt32) throws -> Data {
        var bytes = [UInt8](repeating: 0, count: 16 * 16 * 4)
        for i in stride(from: 0, to: bytes.count, by: 4) {
            bytes[i] = UInt8(rgb & 0xFF); bytes[i + 1] = UInt8((rgb >> 8) & 0xFF); bytes[i + 2] = UInt8(rgb >> 16); bytes[i + 3] = 0xFF
        }
        return Data(try encodePNG(xrgb8888: bytes, size: Size(width: 16, height: 16), stride: 64))
    }

    private func centre(_ daemon: ControlledKioskd, in dir: URL) throws -> UInt32 {
        let file = dir.appendingPathComponent("shot-\(UUID().uuidString).png")
        _ = try daemon.result("screenshot", #"{"path": "\#(file.path)"}"#)
        defer { try? FileManager.default.removeItem(at: file) }
        return try PNGFile(contentsOf: file).rgb(x: 32, y: 24)
    }

    private func cacheStats(_ daemon: ControlledKioskd) throws -> [String: Any] {
        try XCTUnwrap(try daemon.result("stats")["cache"] as? [String: Any])
    }

    private func imageScene(_ url: String, refresh: Int = 60) -> String {
        """
        background: black
        widgets:
          - {type: image, path: "\(url)", refresh: \(refresh), fit: fill, x: 0, y: 0, width: 100%, height: 100%}
        """
    }

    private func start(_ dir: URL, scene: String, extra: [String] = []) throws -> ControlledKioskd {
        let file = dir.appendingPathComponent("scene.yaml")
        try scene.write(to: file, atomically: true, encoding: .utf8)
        return try ControlledKioskd(["run", "--backend", "headless", "--mode", "64x48@60", "--scene", file.path, "--screenshot-dir", dir.path] + extra,
                                    environment: ["CACHE_DIRECTORY": dir.appendingPathComponent("cache").path])
    }

    func testStatsEventsAndCommands() throws {
        let server = try FaultServer("cache-daemon")
        let picture = try png(0xFF0000)
        try picture.write(to: server.directory.appendingPathComponent("a.png"))
        let dir = try KioskdProcess.scratchDirectory("cache-daemon")
        let url = server.url("/files/a.png")
        let daemon = try start(dir, scene: imageScene(url))
        defer { _ = daemon.stop() }
        try Poll.until("the picture on screen", timeout: 30) { try centre(daemon, in: dir) == 0xFF0000 }
        var cache = try cacheStats(daemon)
        XCTAssertEqual(cache["open"] as? Bool, true)
        XCTAssertEqual(cache["entries"] as? Int, 1)
        XCTAssertEqual(cache["bytes"] as? Int, picture.count)
        XCTAssertEqual(cache["max_bytes"] as? Int, 1024 << 20)
        XCTAssertEqual(cache["max_asset_bytes"] as? Int, 256 << 20)
        XCTAssertGreaterThanOrEqual(cache["hits"] as? Int ?? 0, 1, "the image was shown from the cache")
        XCTAssertEqual(cache["failures"] as? [String: Int], [:])
        XCTAssertEqual((cache["stale"] as? [Any])?.count, 0)

        let events = try daemon.connect()
        XCTAssertEqual(events.request(#"{"id": 1, "cmd": "subscribe", "args": {"events": ["cache"]}}"#)?["ok"] as? Bool, true)

        // Revalidated now rather than in a minute: a 304.
        let refreshing = try daemon.result("cache.refresh")
        XCTAssertEqual(refreshing["refreshing"] as? [String], [url])
        try Poll.until("the revalidation", timeout: 10) { server.requests("/files/a.png", status: 304) == 1 }

        // Hostile arguments are named.
        XCTAssertEqual(try daemon.error("cache.refresh", #"{"url": 42}"#).message, "cache.refresh: 'url' must be a string, got number")
        let huge = "https://example.com/" + String(repeating: "a", count: 20000)
        let long = try daemon.error("cache.refresh", #"{"url": "\#(huge)"}"#)
        XCTAssertEqual(long.code, "invalid_argument")
        XCTAssertTrue(long.message.contains("bytes long; no asset URL is longer than 8192"), long.message)
        let unknown = try daemon.error("cache.refresh", #"{"url": "https://example.com/other.png"}"#)
        XCTAssertEqual(unknown.message, "cache.refresh: 'url' 'https://example.com/other.png' is not an asset of the scenes shown; they name \(url)")
        XCTAssertEqual(try daemon.error("cache.clear", #"{"all": true}"#).code, "invalid_argument")

        // The server gone: the copy stays on screen, stale since the failure, in stats and in a `cache` event.
        server.stop()
        XCTAssertEqual(try daemon.result("cache.refresh", #"{"url": "\#(url)"}"#)["refreshing"] as? [String], [url])
        var event: [String: Any]?
        try Poll.until("the cache event", timeout: 10) {
            if let object = events.readObject(deadline: Date().addingTimeInterval(0.2)), object["event"] as? String == "cache" { event = object }
            return event != nil
        }
        let data = try XCTUnwrap(event?["data"] as? [String: Any])
        XCTAssertEqual(data["url"] as? String, url)
        XCTAssertEqual(data["stale"] as? Bool, true)
        XCTAssertEqual(data["reason"] as? String, "connect")
        XCTAssertNotNil(data["since"] as? String)
        cache = try cacheStats(daemon)
        let stale = try XCTUnwrap((cache["stale"] as? [[String: Any]])?.first)
        XCTAssertEqual(stale["url"] as? String, url)
        XCTAssertEqual(stale["since"] as? String, data["since"] as? String)
        XCTAssertEqual((cache["failures"] as? [String: Int])?["connect"], 1)
        XCTAssertEqual(try centre(daemon, in: dir), 0xFF0000, "no error on screen: the cached copy")

        // Clearing keeps what is shown; once the scene no longer names it, it goes.
        let kept = try daemon.kioskctl(["cache", "clear"])
        XCTAssertEqual(kept.status, 0, kept.stderr)
        XCTAssertEqual(String(decoding: kept.stdout, as: UTF8.self), "freed 0 bytes in 0 assets\n")
        _ = try daemon.result("scene.load", #"{"yaml": "widgets: [{type: rect, width: 10, height: 10}]\n"}"#)
        let cleared = try daemon.result("cache.clear")
        XCTAssertEqual(cleared["entries_freed"] as? Int, 1)
        XCTAssertEqual(cleared["bytes_freed"] as? Int, picture.count)
        XCTAssertEqual(try cacheStats(daemon)["entries"] as? Int, 0)
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("cache/assets").path)
        XCTAssertEqual(left, [], "the files are gone")
    }

    /// At a restart with the server up: a copy fresh by its `max-age` is not asked for, a `no-cache` one is
    /// revalidated at once, and a `no-store` one was not kept, so it is fetched again.
    func testCacheControlDecidesWhatARestartAsksFor() throws {
        let server = try FaultServer("cache-control-daemon")
        for (name, header) in [("a", "max-age=600"), ("b", "no-cache"), ("c", "no-store")] {
            try png(0x102030).write(to: server.directory.appendingPathComponent("\(name).png"))
            try server.write("\(name).png.cache-control", header)
        }
        let dir = try KioskdProcess.scratchDirectory("cache-control-daemon")
        let scene = "widgets:\n" + ["a", "b", "c"].enumerated().map { index, name in
            "  - {type: image, path: \"\(server.url("/files/\(name).png"))\", refresh: 300, x: \(index * 10), width: 10, height: 10}\n"
        }.joined()
        var daemon = try start(dir, scene: scene)
        try Poll.until("three assets cached", timeout: 30) { try cacheStats(daemon)["entries"] as? Int == 3 }
        XCTAssertEqual(daemon.stop().status, 0)

        daemon = try start(dir, scene: scene)
        defer { _ = daemon.stop() }
        func asset(_ name: String) throws -> [String: Any] {
            let assets = try cacheStats(daemon)["assets"] as? [[String: Any]] ?? []
            return try XCTUnwrap(assets.first { $0["url"] as? String == server.url("/files/\(name).png") }, "\(assets)")
        }
        try Poll.until("b revalidated and c fetched again", timeout: 30) {
            let b = try asset("b"), c = try asset("c")
            return server.requests("/files/b.png", status: 304) == 1 && server.requests("/files/c.png", status: 200) == 2
                && b["next_check_s"] is Double && c["next_check_s"] is Double
        }
        let a = try asset("a")
        XCTAssertEqual(a["fetching"] as? Bool, false)
        XCTAssertEqual(a["cached"] as? Bool, true)
        let left = try XCTUnwrap(a["next_check_s"] as? Double, "\(a)")
        XCTAssertGreaterThan(left, 200, "fresh for what is left of refresh (300 s, under max-age 600)")
        XCTAssertLessThanOrEqual(left, 300)
        XCTAssertEqual(server.requests("/files/a.png", status: 304) + server.requests("/files/a.png", status: 200), 1,
                       "a fresh copy is not asked for at start")
        XCTAssertEqual(try cacheStats(daemon)["no_store_removed_at_open"] as? Int, 1)
    }

    /// The `cache:` section reaches the cache: its folder and limits in `stats`, and downloads through its proxy
    /// (here a closed port, so the server, up all along, is never asked).
    func testTheCacheSectionSetsTheFolderLimitsAndProxy() throws {
        let server = try FaultServer("cache-config")
        try png(0x102030).write(to: server.directory.appendingPathComponent("a.png"))
        let dir = try KioskdProcess.scratchDirectory("cache-config")
        let config = dir.appendingPathComponent("kioskd.yaml")
        let closed = try LoopbackPort.free()
        try "cache:\n  max_mb: 64\n  max_asset_mb: 4\n  dir: my-assets\n  proxy: http://127.0.0.1:\(closed)\n"
            .write(to: config, atomically: true, encoding: .utf8)
        let daemon = try start(dir, scene: imageScene(server.url("/files/a.png")), extra: ["--config", config.path])
        defer { _ = daemon.stop() }
        let missing = try Poll.until("the fetch through the proxy refused", timeout: 30, reading: {
            try cacheStats(daemon)["missing"] as? [[String: Any]] ?? []
        }, satisfies: { $0.count == 1 })
        XCTAssertEqual(missing.first?["reason"] as? String, "connect", "\(missing)")
        XCTAssertEqual(server.requests("/files/a.png", status: 200), 0, "the request went to the proxy")
        let cache = try cacheStats(daemon)
        XCTAssertEqual(cache["dir"] as? String, dir.appendingPathComponent("my-assets").path, "relative to the config file")
        XCTAssertEqual(cache["max_bytes"] as? Int, 64 << 20)
        XCTAssertEqual(cache["max_asset_bytes"] as? Int, 4 << 20)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("my-assets").path))
    }

    func testADownloadKilledHalfwayLeavesNoPartialAssetAndIsFetchedAgain() throws {
        let server = try FaultServer("cache-kill")
        try png(0x00FF00).write(to: server.directory.appendingPathComponent("a.png"))
        let dir = try KioskdProcess.scratchDirectory("cache-kill")
        let assets = dir.appendingPathComponent("cache/assets")
        let scene = imageScene(server.url("/stall/a.png"))
        var daemon = try start(dir, scene: scene)
        try Poll.until("half the image sent", timeout: 30) { server.log.contains("STALLED /stall/a.png") }
        try Poll.until("the download's temporary file", timeout: 10) {
            ((try? FileManager.default.contentsOfDirectory(atPath: assets.path)) ?? []).contains { $0.hasSuffix(".partial") }
        }
        daemon.process.signal(SIGKILL)
        _ = daemon.waitForExit(timeout: 30)
        XCTAssertFalse(daemon.isRunning)
        XCTAssertTrue(try FileManager.default.contentsOfDirectory(atPath: assets.path).contains { $0.hasSuffix(".partial") },
                      "killed in the middle of the download")

        // Restarted: the leftover is removed, the image fetched again in full and shown.
        try Data().write(to: server.directory.appendingPathComponent("a.png.release"))
        daemon = try start(dir, scene: scene)
        defer { _ = daemon.stop() }
        try Poll.until("the image fetched again and shown", timeout: 30) { try centre(daemon, in: dir) == 0x00FF00 }
        let names = try FileManager.default.contentsOfDirectory(atPath: assets.path)
        XCTAssertFalse(names.contains { $0.hasSuffix(".partial") }, "no partial file: \(names)")
        XCTAssertEqual(names.count, 2, "the image and its metadata: \(names)")
        XCTAssertEqual(server.requests("/stall/a.png", status: 200), 2)
        let cache = try cacheStats(daemon)
        XCTAssertGreaterThanOrEqual(cache["removed_at_open"] as? Int ?? 0, 1, "the temporary file was removed at start")
        XCTAssertEqual(cache["entries"] as? Int, 1)
    }

    func testAHugeBodyAndAGzipBombAreRefusedWithFlatMemoryAndQuickPings() throws {
        let server = try FaultServer("cache-hostile")
        let dir = try KioskdProcess.scratchDirectory("cache-hostile")
        let config = dir.appendingPathComponent("kioskd.yaml")
        // 2 MiB: the endless (1 GiB) body is cut there, the 64 MiB gzip bomb inflates past it, the 1 GiB one is
        // announced and refused before its body.
        try "cache:\n  max_asset_mb: 2\n".write(to: config, atomically: true, encoding: .utf8)
        // First a small image by URL, so libcurl, its TLS libraries and the fetcher's thread are in before the
        // baseline: the growth measured is what the bodies cost.
        try png(0x0000FF).write(to: server.directory.appendingPathComponent("ok.png"))
        let daemon = try start(dir, scene: imageScene(server.url("/files/ok.png")), extra: ["--config", config.path])
        defer { _ = daemon.stop() }
        try Poll.until("the small image shown", timeout: 30) { try centre(daemon, in: dir) == 0x0000FF }
        let socket = try daemon.connect()
        func ping() throws -> Double {
            let start = Date()
            guard socket.request(#"{"id": 1, "cmd": "ping"}"#)?["ok"] as? Bool == true else { throw ControlTestError("ping unanswered") }
            return Date().timeIntervalSince(start) * 1000
        }
        // Side by side: pings at the same pace with nothing downloading, the machine's own latency at this moment.
        var idle: [Double] = []
        for _ in 0..<100 {
            idle.append(try ping())
            usleep(10_000)
        }
        let baseline = try XCTUnwrap(residentKiB(of: daemon.pid))

        let scene = """
            widgets:
              - {type: image, path: "\(server.url("/big"))", width: 10, height: 10}
              - {type: image, path: "\(server.url("/big-declared"))", x: 10, width: 10, height: 10}
              - {type: image, path: "\(server.url("/gzip-bomb"))", x: 20, width: 10, height: 10}
            """
        let escaped = scene.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
        _ = try daemon.result("scene.load", #"{"yaml": "\#(escaped)"}"#)
        var pings: [Double] = [], peak = baseline, samples = 0
        try Poll.until("the three downloads refused", timeout: 120, interval: 0.01) {
            pings.append(try ping())
            peak = max(peak, residentKiB(of: daemon.pid) ?? 0)
            samples += 1
            // `stats` every tenth sample: the pings measure kioskd, not the test's own requests.
            guard samples % 10 == 0 else { return false }
            let missing = try cacheStats(daemon)["missing"] as? [[String: Any]] ?? []
            return missing.count == 3 && missing.allSatisfy { $0["reason"] as? String == "too_large" }
        }
        let cache = try cacheStats(daemon)
        XCTAssertEqual(cache["entries"] as? Int, 1, "nothing kept but the small image")
        XCTAssertGreaterThanOrEqual((cache["failures"] as? [String: Int])?["too_large"] ?? 0, 3)
        // Only the small image; a `.partial` may be a retry under way (backoff from 2 s), never a committed asset.
        let kept = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("cache/assets").path).filter { !$0.hasSuffix(".partial") }
        XCTAssertEqual(kept.count, 2, "the small image's data and metadata only: \(kept)")
        let sent = try Poll.until("the server's count of the endless body", reading: { server.sent("/big") }, satisfies: { $0 != nil })!
        XCTAssertGreaterThanOrEqual(sent, 2 << 20, "the endless body was read up to the limit")
        XCTAssertLessThan(sent, 1 << 30, "and not to its end")
        let growthMB = Double(peak - baseline) / 1024
        let idleMax = idle.max() ?? 0, busyMax = pings.max() ?? 0
        print(String(format: "cache-hostile: %d samples, RSS growth %.1f MB, ping max %.1f ms downloading, %.1f ms idle side by side",
                     samples, growthMB, busyMax, idleMax))
        XCTAssertLessThanOrEqual(growthMB, 16, "RSS grew by \(growthMB) MB")
        // 50 ms, unless the machine itself (another build on its cores) is slower than that with nothing
        // downloading: then no worse than twice its idle figure.
        XCTAssertLessThanOrEqual(busyMax, max(50, 2 * idleMax), "every ping within 50 ms: \(pings.sorted().suffix(5)), idle \(idleMax)")
        XCTAssertTrue(daemon.isRunning)
    }
}
