import Foundation
import KioskCore
@testable import KioskFetch
import KioskTestSupport
import XCTest

final class AssetCacheTests: XCTestCase {
    private var loop: MainLoop!
    private var fetcher: Fetcher!
    /// The cache's wall clock: one second later at each reading, so least recently used is well ordered.
    private let ticks = Lock(1000.0)

    override func setUpWithError() throws {
        loop = try MainLoop.epoll()
        fetcher = try Fetcher(loop: loop)
    }

    override func tearDown() {
        fetcher = nil
        loop = nil
    }

    private func open(_ folder: URL, limits: CacheLimits = CacheLimits()) throws -> AssetCache {
        try AssetCache(directory: folder.path, limits: limits, clock: { [ticks] in ticks.withLock { $0 += 1; return $0 } })
    }

    private func fetch(_ cache: AssetCache, _ url: String, pin: String? = nil, protected: Set<String> = []) throws -> Result<CachedAsset, FetchError> {
        var outcome: Result<CachedAsset, FetchError>?
        cache.fetch(url, pin: pin, protected: protected, fetcher: fetcher) { outcome = $0 }
        try Poll.until("the cache's fetch of \(url)", timeout: 10, turning: loop) { outcome != nil }
        return outcome!
    }

    private func files(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    func testTheDefaultFolderIsTheUnitsCacheDirectory() {
        XCTAssertEqual(AssetCache.defaultDirectory(environment: ["CACHE_DIRECTORY": "/var/cache/kioskd"]), "/var/cache/kioskd/assets")
        XCTAssertEqual(AssetCache.defaultDirectory(environment: [:], root: true), "/var/cache/kioskd/assets")
        XCTAssertEqual(AssetCache.defaultDirectory(environment: ["HOME": "/home/shop"], root: false), "/home/shop/.cache/kioskd/assets")
        XCTAssertEqual(AssetCache.defaultDirectory(environment: ["HOME": "/home/shop", "XDG_CACHE_HOME": "/tmp/c"], root: false), "/tmp/c/kioskd/assets")
        XCTAssertEqual(AssetCache.defaultDirectory(environment: ["CACHE_DIRECTORY": "/var/cache/kioskd", "HOME": "/home/shop"], root: false), "/var/cache/kioskd/assets")
        XCTAssertEqual(AssetCache.defaultDirectory(environment: ["CACHE_DIRECTORY": "/a:/b"]), "/a/assets")
    }

    func testAnAssetIsStoredWithItsMetadataAndRevalidatedWith304() throws {
        let server = try FaultServer("cache-store")
        let folder = server.directory.appendingPathComponent("cache")
        try server.write("logo.png", "first version")
        let cache = try open(folder)
        let url = server.url("/files/logo.png")
        let stored = try fetch(cache, url).get()
        XCTAssertEqual(try String(contentsOfFile: stored.path, encoding: .utf8), "first version")
        XCTAssertEqual(stored.metadata.size, 13)
        XCTAssertEqual(stored.metadata.sha256, SHA256.hex(Array("first version".utf8)))
        XCTAssertNotNil(stored.metadata.etag)
        let key = AssetCache.key(url)
        XCTAssertEqual(try files(folder), ["\(key).\(stored.metadata.sha256)", "\(key).json"])

        let again = try fetch(cache, url).get()
        XCTAssertEqual(again.path, stored.path)
        XCTAssertEqual(server.requests("/files/logo.png", status: 304), 1)
        XCTAssertGreaterThan(again.metadata.fetchedAt, stored.metadata.fetchedAt)

        // A new version replaces the old file.
        try server.write("logo.png", "second version")
        let second = try fetch(cache, url).get()
        XCTAssertEqual(try String(contentsOfFile: second.path, encoding: .utf8), "second version")
        XCTAssertEqual(try files(folder), ["\(key).\(second.metadata.sha256)", "\(key).json"])

        // Reopened, as after a restart: the same asset, found without the network.
        server.stop()
        let reopened = try open(folder)
        XCTAssertEqual(reopened.lookup(url)?.path, second.path)
        XCTAssertEqual(reopened.figures.hits, 1)
    }

    func testAPinThatDoesNotMatchIsRefusedAndTheOldVersionKept() throws {
        let server = try FaultServer("cache-pin")
        let folder = server.directory.appendingPathComponent("cache")
        try server.write("menu.png", "good")
        let cache = try open(folder)
        let url = server.url("/files/menu.png")
        let pin = "sha256:" + SHA256.hex(Array("good".utf8))
        let good = try fetch(cache, url, pin: pin).get()

        try server.write("menu.png", "tampered")
        guard case .failure(let error) = try fetch(cache, url, pin: pin) else { return XCTFail("a mismatching download was accepted") }
        XCTAssertEqual(error.failure.key, "refused")
        XCTAssertTrue(error.description.contains("does not match the pin \(pin)"), error.description)
        XCTAssertEqual(cache.peek(url), good)
        XCTAssertEqual(try String(contentsOfFile: good.path, encoding: .utf8), "good")
        XCTAssertFalse(try files(folder).contains { $0.hasSuffix(".partial") }, "the refused download is removed")
    }

    func testOpeningRemovesLeftoversOfACrash() throws {
        let folder = try KioskdProcess.scratchDirectory("fetch-cache-crash")
        let url = "http://127.0.0.1:1/a.png"
        let key = AssetCache.key(url)
        let data = "asset"
        let sha = SHA256.hex(Array(data.utf8))
        try Data(data.utf8).write(to: folder.appendingPathComponent("\(key).\(sha)"))
        let metadata = AssetMetadata(url: url, file: "\(key).\(sha)", etag: nil, lastModified: nil, contentType: nil,
                                     fetchedAt: 1, size: 5, sha256: sha, lastUsed: 1)
        try JSONEncoder().encode(metadata).write(to: folder.appendingPathComponent("\(key).json"))
        // A download cut off by kill -9, an old version whose metadata was already replaced, metadata whose file
        // is gone, and metadata that is not JSON.
        try Data("half".utf8).write(to: folder.appendingPathComponent(".\(key).1234.partial"))
        try Data("old".utf8).write(to: folder.appendingPathComponent("\(key).0000"))
        let lost = AssetCache.key("http://127.0.0.1:1/lost.png")
        try JSONEncoder().encode(AssetMetadata(url: "http://127.0.0.1:1/lost.png", file: "\(lost).ff", etag: nil, lastModified: nil,
                                               contentType: nil, fetchedAt: 1, size: 3, sha256: "ff", lastUsed: 1))
            .write(to: folder.appendingPathComponent("\(lost).json"))
        try Data("{".utf8).write(to: folder.appendingPathComponent("ffff.json"))

        let cache = try open(folder)
        XCTAssertEqual(try files(folder), ["\(key).\(sha)", "\(key).json"])
        XCTAssertEqual(cache.figures.removedAtOpen, 4)
        XCTAssertEqual(cache.figures.entries, 1)
        XCTAssertEqual(cache.lookup(url)?.metadata.sha256, sha)
    }

    func testLeastRecentlyUsedAssetsAreEvictedButNeverProtectedOnes() throws {
        let server = try FaultServer("cache-evict")
        let folder = server.directory.appendingPathComponent("cache")
        for name in ["a", "b", "c", "d"] { try server.write("\(name).png", String(repeating: name, count: 40)) }
        let cache = try open(folder, limits: CacheLimits(maxAssetBytes: 100, maxTotalBytes: 100))
        let a = server.url("/files/a.png"), b = server.url("/files/b.png"), c = server.url("/files/c.png"), d = server.url("/files/d.png")
        _ = try fetch(cache, a).get()
        _ = try fetch(cache, b).get()
        // a is the least recently used, but protected (on screen): b goes instead.
        _ = try fetch(cache, c, protected: [a]).get()
        XCTAssertNotNil(cache.peek(a))
        XCTAssertNil(cache.peek(b))
        XCTAssertNotNil(cache.peek(c))
        // Used since: a is now more recent than c, so c goes when d arrives.
        XCTAssertNotNil(cache.lookup(a))
        _ = try fetch(cache, d).get()
        XCTAssertNotNil(cache.peek(a))
        XCTAssertNil(cache.peek(c))
        XCTAssertEqual(cache.figures.evictions, 2)
        XCTAssertEqual(cache.figures.bytes, 80)
        XCTAssertEqual(try files(folder).count, 4, "two assets, each a data file and its metadata")
    }

    func testAnAssetOverTheLimitIsRefusedAndLeavesNoFile() throws {
        let server = try FaultServer("cache-big")
        let folder = server.directory.appendingPathComponent("cache")
        let cache = try open(folder, limits: CacheLimits(maxAssetBytes: 1 << 20, maxTotalBytes: 4 << 20))
        guard case .failure(let error) = try fetch(cache, server.url("/big")) else { return XCTFail("an endless body was cached") }
        XCTAssertEqual(error.failure, .tooLarge(limit: 1 << 20))
        XCTAssertEqual(try files(folder), [])
    }
}
