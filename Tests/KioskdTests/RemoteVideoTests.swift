import Foundation
import KioskTestSupport
import XCTest

/// A video playlist item named by URL, against a real HTTP server on loopback: the clip is downloaded whole into the
/// asset cache and played from there (frames counted), a restarted kiosk with the server gone plays the cached copy,
/// an item with no copy yet waits (the placeholder, `waiting` naming the download) and plays once it is fetched,
/// and a corrupt download fails as a corrupt local clip does.
final class RemoteVideoTests: XCTestCase {
    private var daemon: ControlledKioskd?

    override func tearDownWithError() throws {
        daemon?.stop()
        daemon = nil
    }

    /// A headless kiosk waiting on a plain page, its video widget (`id: clip`, `video` YAML keys) on page `main`,
    /// with its asset cache in `cache`; `main` is shown once subscribed to `video` events.
    private func start(_ video: String, in dir: URL, cache: URL) throws -> (ControlledKioskd, ControlEventStream) {
        let scene = dir.appendingPathComponent("scene.yaml")
        try VideoTestScene.yaml(widgets: ["{id: clip, type: video, \(video), fit: fill, x: 0, y: 0, width: 100%, height: 100%}"],
                                header: "background: black\n").write(to: scene, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "160x120@60", "--scene", scene.path],
                                          environment: ["CACHE_DIRECTORY": cache.path])
        self.daemon = daemon
        let events = try ControlEventStream(socketPath: daemon.socketPath, events: ["video", "error"])
        _ = try daemon.result("page.show", #"{"name": "main"}"#)
        return (daemon, events)
    }

    private func framesShown(_ daemon: ControlledKioskd) throws -> Int {
        try XCTUnwrap(try daemon.result("video.state")["frames_shown"] as? Int)
    }

    func testAClipByURLIsDownloadedThenPlaysAndPlaysOfflineFromTheCache() throws {
        let server = try FaultServer("remote-video")
        let clip = try TestClips.clip(.vp9, width: 160, height: 120, frames: 30)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: clip))
        try bytes.write(to: server.directory.appendingPathComponent("clip.webm"))
        let url = server.url("/files/clip.webm")
        let dir = try KioskdProcess.scratchDirectory("remote-video")
        let cache = dir.appendingPathComponent("cache")

        var (daemon, events) = try start("source: \"\(url)\", loop: true", in: dir, cache: cache)
        let started = try events.waitFor("the clip by URL started", timeout: 30) { $0.name == "video" && $0.string("kind") == "started" }
        XCTAssertEqual(started.string("source"), url, "events name the item as written")
        try Poll.until("frames of the clip by URL shown", timeout: 20) { try framesShown(daemon) >= 30 }
        XCTAssertEqual(server.requests("/files/clip.webm", status: 200), 1, "one whole download, no streaming requests")
        let held = try FileManager.default.contentsOfDirectory(atPath: cache.appendingPathComponent("assets").path)
            .filter { !$0.hasSuffix(".json") }
        XCTAssertEqual(held.count, 1, "the clip's copy in the cache: \(held)")
        XCTAssertEqual(try Data(contentsOf: cache.appendingPathComponent("assets/\(held[0])")), bytes)
        XCTAssertEqual(daemon.stop().status, 0)
        self.daemon = nil

        // The server gone: a new kiosk plays the cached copy.
        server.stop()
        (daemon, events) = try start("source: \"\(url)\", loop: true", in: dir, cache: cache)
        _ = try events.waitFor("the cached clip started offline", timeout: 30) { $0.name == "video" && $0.string("kind") == "started" }
        try Poll.until("frames of the cached clip shown offline", timeout: 20) { try framesShown(daemon) >= 30 }
        XCTAssertEqual(try daemon.result("video.state")["source"] as? String, url)
    }

    /// Nothing on the server yet: the item waits on its placeholder (no `video` error, `waiting` names the
    /// download), the clip after it in the playlist plays meanwhile, and once the server has the clip it plays.
    func testAnItemWithNoCopyYetWaitsAndPlaysOnceFetched() throws {
        let server = try FaultServer("remote-video-late")
        let clip = try TestClips.clip(.vp9, width: 160, height: 120, frames: 30)
        let url = server.url("/files/late.webm")
        let dir = try KioskdProcess.scratchDirectory("remote-video-late")
        let (daemon, events) = try start("source: \"\(url)\", loop: true, refresh: 5", in: dir, cache: dir.appendingPathComponent("cache"))
        try Poll.until("the item waiting for its download", timeout: 20) {
            try daemon.result("video.state")["state"] as? String == "waiting"
        }
        let state = try daemon.result("video.state")
        XCTAssertEqual(state["waiting"] as? String, "waiting for the download of \(url)")
        XCTAssertEqual(state["frames_shown"] as? Int, 0)
        let refused = try events.waitFor("the failed fetch reported", timeout: 20) { $0.name == "error" && $0.string("code") == "remote_asset" }
        XCTAssertTrue(refused.string("message")?.contains("video \(url)") == true, "\(refused.data)")

        try FileManager.default.copyItem(atPath: clip, toPath: server.directory.appendingPathComponent("late.webm").path)
        let started = try events.waitFor("the clip started once fetched", timeout: 30) { $0.name == "video" && $0.string("kind") == "started" }
        XCTAssertEqual(started.string("source"), url)
        try Poll.until("frames shown", timeout: 20) { try framesShown(daemon) > 0 }
    }

    /// A download that is no clip fails as a broken local file does: a `video` error event for the item, the
    /// placeholder, and no retry of the same bytes.
    func testACorruptDownloadFailsAsACorruptLocalClip() throws {
        let server = try FaultServer("remote-video-corrupt")
        try Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(to: server.directory.appendingPathComponent("bad.webm"))
        let url = server.url("/files/bad.webm")
        let dir = try KioskdProcess.scratchDirectory("remote-video-corrupt")
        let (daemon, events) = try start("source: \"\(url)\"", in: dir, cache: dir.appendingPathComponent("cache"))
        let failed = try events.waitFor("the corrupt clip's error", timeout: 30) { $0.name == "video" && $0.string("kind") == "error" }
        XCTAssertEqual(failed.string("source"), url)
        XCTAssertFalse(failed.string("message")?.isEmpty ?? true)
        let state = try daemon.result("video.state")
        XCTAssertEqual(state["state"] as? String, "failed")
        XCTAssertTrue(state["retry_in"] is NSNull, "the same bytes are not tried again: \(state)")
    }
}
