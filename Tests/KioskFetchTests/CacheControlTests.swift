import Foundation
import KioskCore
@testable import KioskFetch
import KioskTestSupport
import XCTest

/// `Cache-Control` as the asset cache reads it and the rule for the next check; then against the fault server:
/// the header kept in the metadata (and updated by a 304), `no-store` dropped when the cache is opened again,
/// failed fetches counted by reason with the stale URL and since when, and `clear` sparing the assets on screen.
final class CacheControlTests: XCTestCase {
    func testDirectivesAreRead() {
        XCTAssertEqual(CacheControl(header: nil), CacheControl())
        XCTAssertEqual(CacheControl(header: "public, max-age=600"), CacheControl(maxAge: 600))
        XCTAssertEqual(CacheControl(header: "Max-Age=\"60\", No-Cache"), CacheControl(maxAge: 60, noCache: true))
        XCTAssertEqual(CacheControl(header: "no-store"), CacheControl(noStore: true))
        XCTAssertEqual(CacheControl(header: "max-age=-5, max-age, max-age=ten, private"), CacheControl(), "malformed directives are ignored")
        XCTAssertTrue(CacheControl(header: "max-age=0").alwaysRevalidate)
    }

    func testTheNextCheckIsMaxAgeBoundedByRefresh() {
        XCTAssertEqual(CacheControl().secondsToNextCheck(refresh: 300), 300, "no header: every refresh")
        XCTAssertEqual(CacheControl(maxAge: 3600).secondsToNextCheck(refresh: 300), 300, "never later than refresh")
        XCTAssertEqual(CacheControl(maxAge: 60).secondsToNextCheck(refresh: 300), 60, "sooner when the server asks")
        XCTAssertEqual(CacheControl(maxAge: 2).secondsToNextCheck(refresh: 300), CacheControl.minimumMaxAgeSeconds, "never below the floor")
        XCTAssertEqual(CacheControl(maxAge: 60, noCache: true).secondsToNextCheck(refresh: 300), 300)

        // Fresh at start only under a max-age, and only for what is left of it.
        XCTAssertEqual(CacheControl(maxAge: 120).freshSeconds(fetchedAt: 1000, now: 1030, refresh: 300), 90)
        XCTAssertEqual(CacheControl(maxAge: 120).freshSeconds(fetchedAt: 1000, now: 1200, refresh: 300), 0, "expired")
        XCTAssertEqual(CacheControl(maxAge: 600).freshSeconds(fetchedAt: 1000, now: 1030, refresh: 60), 30, "bounded by refresh")
        XCTAssertEqual(CacheControl().freshSeconds(fetchedAt: 1000, now: 1001, refresh: 300), 0, "no max-age: revalidated at once")
        XCTAssertEqual(CacheControl(noCache: true).freshSeconds(fetchedAt: 1000, now: 1001, refresh: 300), 0)
        XCTAssertEqual(CacheControl(maxAge: 120).freshSeconds(fetchedAt: 5000, now: 1000, refresh: 300), 0, "a clock that went back")
    }

    func testFailureReasonsAreFamilies() {
        XCTAssertEqual(FetchFailure.http(500).reason, "http_status")
        XCTAssertEqual(FetchFailure.decompressedTooLarge(limit: 1).reason, "too_large")
        XCTAssertEqual(FetchFailure.transfer(code: 6, message: "").reason, "dns")
        XCTAssertEqual(FetchFailure.transfer(code: 7, message: "").reason, "connect")
        XCTAssertEqual(FetchFailure.transfer(code: 60, message: "").reason, "tls")
        XCTAssertEqual(FetchFailure.transfer(code: 18, message: "").reason, "truncated")
        XCTAssertEqual(FetchFailure.refused("sha256 ab does not match the pin sha256:cd").reason, "pin_mismatch")
        XCTAssertEqual(FetchFailure.refused("not a feed").reason, "refused")
    }

    // MARK: Against the fault server

    private var loop: MainLoop!
    private var fetcher: Fetcher!
    private let ticks = Lock(1000.0)

    override func setUpWithError() throws {
        loop = try MainLoop.epoll()
        fetcher = try Fetcher(loop: loop)
    }

    override func tearDown() {
        fetcher = nil
        loop = nil
    }

    private func open(_ folder: URL) throws -> AssetCache {
        try AssetCache(directory: folder.path, clock: { [ticks] in ticks.withLock { $0 += 1; return $0 } })
    }

    private func fetch(_ cache: AssetCache, _ url: String, pin: String? = nil) throws -> Result<CachedAsset, FetchError> {
        var outcome: Result<CachedAsset, FetchError>?
        cache.fetch(url, pin: pin, fetcher: fetcher) { outcome = $0 }
        try Poll.until("the cache's fetch of \(url)", timeout: 10, turning: loop) { outcome != nil }
        return outcome!
    }

    func testTheHeaderIsKeptAndNoStoreIsNotKeptAcrossAnOpening() throws {
        let server = try FaultServer("cache-control")
        try server.write("menu.png", "menu v1")
        try server.write("menu.png.cache-control", "public, max-age=600")
        try server.write("offer.png", "offer")
        try server.write("offer.png.cache-control", "no-store")
        let folder = try KioskdProcess.scratchDirectory("cache-control")
        var cache = try open(folder)
        let menu = try fetch(cache, server.url("/files/menu.png")).get()
        XCTAssertEqual(menu.metadata.cacheControl, CacheControl(maxAge: 600))
        XCTAssertTrue(try fetch(cache, server.url("/files/offer.png")).get().metadata.cacheControl?.noStore == true)

        // A 304 carries the server's new header.
        try server.write("menu.png.cache-control", "no-cache")
        let revalidated = try fetch(cache, server.url("/files/menu.png")).get()
        XCTAssertEqual(server.requests("/files/menu.png", status: 304), 1)
        XCTAssertEqual(revalidated.metadata.cacheControl, CacheControl(noCache: true))
        XCTAssertEqual(cache.figures.entries, 2, "no-store is shown while the kiosk runs")

        // Opened again (a restart): the no-store asset and its file are gone, the other one is there.
        cache = try open(folder)
        XCTAssertNil(cache.peek(server.url("/files/offer.png")))
        XCTAssertNotNil(cache.peek(server.url("/files/menu.png")))
        XCTAssertEqual(cache.figures.noStoreRemovedAtOpen, 1)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        XCTAssertEqual(names.count, 2, "the menu's data and metadata only: \(names)")
    }

    func testFailuresAreCountedByReasonAndAStaleURLSaysSinceWhen() throws {
        let server = try FaultServer("cache-failures")
        try server.write("a.png", "picture")
        let folder = try KioskdProcess.scratchDirectory("cache-failures")
        let cache = try open(folder)
        let url = server.url("/files/a.png")
        _ = try fetch(cache, url).get()
        XCTAssertNil(cache.failing(url))

        // A new version whose pin does not match: refused, the copy kept, the URL stale since this failure.
        try server.write("a.png", "another picture")
        guard case .failure = try fetch(cache, url, pin: String(repeating: "0", count: 64)) else { return XCTFail("a wrong pin is refused") }
        let first = try XCTUnwrap(cache.failing(url))
        XCTAssertEqual(first.reason, "pin_mismatch")
        // The server gone: another reason, the same since.
        server.stop()
        guard case .failure = try fetch(cache, url) else { return XCTFail("no server, no fetch") }
        let second = try XCTUnwrap(cache.failing(url))
        XCTAssertEqual(second.reason, "connect")
        XCTAssertEqual(second.since, first.since, "stale since the first failure in a row")
        let missingURL = server.url("/files/never.png")
        _ = try fetch(cache, missingURL)

        let figures = cache.figures
        XCTAssertEqual(figures.failures, ["pin_mismatch": 1, "connect": 2])
        XCTAssertEqual(figures.stale.map(\.url), [url], "a copy is held and shown")
        XCTAssertEqual(figures.missing.map(\.url), [missingURL], "nothing held")
    }

    func testClearRemovesAllButTheAssetsKept() throws {
        let server = try FaultServer("cache-clear")
        for name in ["a", "b", "c"] { try server.write("\(name).png", String(repeating: name, count: 1000)) }
        let folder = try KioskdProcess.scratchDirectory("cache-clear")
        let cache = try open(folder)
        for name in ["a", "b", "c"] { _ = try fetch(cache, server.url("/files/\(name).png")).get() }
        let freed = cache.clear(keeping: [server.url("/files/b.png")])
        XCTAssertEqual(freed.entries, 2)
        XCTAssertEqual(freed.bytes, 2000)
        XCTAssertEqual(cache.figures.entries, 1)
        XCTAssertEqual(cache.figures.cleared, 2)
        XCTAssertNotNil(cache.peek(server.url("/files/b.png")))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path).count, 2, "b's data and metadata")
        XCTAssertEqual(try open(folder).figures.entries, 1, "the removal is on disk")
    }
}
