import Foundation
import KioskCore
@testable import KioskFetch
import KioskTestSupport
import XCTest

final class FetcherTests: XCTestCase {
    private var loop: MainLoop!
    private var fetcher: Fetcher!

    override func setUpWithError() throws {
        loop = try MainLoop.epoll()
        fetcher = try Fetcher(loop: loop)
    }

    override func tearDown() {
        fetcher = nil
        loop = nil
    }

    /// Fetches `request` and turns the loop until its outcome arrives; the peak RSS seen while waiting.
    private func get(_ request: FetchRequest, timeout: Double = 10) throws -> (Result<FetchResponse, FetchError>, peakRssKib: Int) {
        var outcome: Result<FetchResponse, FetchError>?
        fetcher.fetch(request) { outcome = $0 }
        var peak = 0
        try Poll.until("the outcome of GET \(request.url)", timeout: timeout, turning: loop) {
            peak = max(peak, ProcessMemory.current().rssKib ?? 0)
            return outcome != nil
        }
        return (outcome!, peak)
    }

    /// How much RSS a bounded transfer may add: its limit and the transfer's buffers, with room for the test
    /// process's own noise; ThreadSanitizer's shadow memory grows with every byte touched.
    private var memoryBoundKiB: Int { Instrumentation.isInstrumented ? 64 << 10 : 16 << 10 }

    private func failure(_ outcome: Result<FetchResponse, FetchError>, file: StaticString = #filePath, line: UInt = #line) -> FetchError? {
        switch outcome {
        case .success(let response): XCTFail("expected a failure, got status \(response.status)", file: file, line: line); return nil
        case .failure(let error): return error
        }
    }

    func testSHA256OfKnownVectors() {
        XCTAssertEqual(SHA256.hex([]), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(SHA256.hex(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        // Fed in uneven pieces across block boundaries: the same digest as in one piece.
        let long = Array(repeating: UInt8(ascii: "a"), count: 1000)
        var pieces = SHA256()
        pieces.update(Array(long[..<7])); pieces.update(Array(long[7..<130])); pieces.update(Array(long[130...]))
        XCTAssertEqual(pieces.finalizeHex(), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    func testAChangedETagIsFetchedAgainAndAnUnchangedOneAnswers304() throws {
        let server = try FaultServer("etag")
        try server.write("menu.json", #"{"soup": "tomato"}"#)
        let first = try get(FetchRequest(url: server.url("/files/menu.json"))).0.get()
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(String(decoding: first.body, as: UTF8.self), #"{"soup": "tomato"}"#)
        XCTAssertEqual(first.contentType, "application/json")
        let etag = try XCTUnwrap(first.etag)
        XCTAssertNotNil(first.lastModified)

        let again = try get(FetchRequest(url: server.url("/files/menu.json"), etag: etag)).0.get()
        XCTAssertTrue(again.notModified)
        XCTAssertEqual(again.etag, etag)
        XCTAssertEqual(again.body, [])
        XCTAssertEqual(server.requests("/files/menu.json", status: 304), 1)

        try server.write("menu.json", #"{"soup": "leek"}"#)
        let changed = try get(FetchRequest(url: server.url("/files/menu.json"), etag: etag)).0.get()
        XCTAssertEqual(changed.status, 200)
        XCTAssertNotEqual(changed.etag, etag)
        XCTAssertEqual(String(decoding: changed.body, as: UTF8.self), #"{"soup": "leek"}"#)
    }

    func testAServerErrorNamesTheURLAndTheStatus() throws {
        let server = try FaultServer("500")
        let error = try XCTUnwrap(failure(try get(FetchRequest(url: server.url("/status/500"))).0))
        XCTAssertEqual(error.failure, .http(500))
        XCTAssertEqual(error.failure.key, "http_500")
        XCTAssertEqual(error.description, "GET \(server.url("/status/500")): HTTP status 500")
    }

    func testASlowServerIsGivenUpOnAtTheLowSpeedLimit() throws {
        let server = try FaultServer("slow")
        let limits = FetchLimits(totalTimeout: .seconds(30), lowSpeedBytesPerSecond: 50, lowSpeedTime: .seconds(1))
        let started = ContinuousClock.now
        let error = try XCTUnwrap(failure(try get(FetchRequest(url: server.url("/slow"), limits: limits)).0))
        let took = ContinuousClock.now - started
        guard case .timeout(let words) = error.failure else { return XCTFail("expected a timeout, got \(error)") }
        XCTAssertTrue(words.contains("too slow"), words)
        XCTAssertLessThan(took, .seconds(6 * Instrumentation.slowdown), "one byte a second, with a low-speed limit of 50 B/s for 1 s, not the total timeout of 30 s")
    }

    func testATruncatedBodyFailsAndLeavesNoFile() throws {
        let server = try FaultServer("truncated")
        let path = server.directory.appendingPathComponent("download.partial").path
        let error = try XCTUnwrap(failure(try get(FetchRequest(url: server.url("/truncated"), destination: .file(path))).0))
        guard case .transfer(let code, let message) = error.failure else { return XCTFail("expected a transfer error, got \(error)") }
        XCTAssertEqual(code, 18, message)  // CURLE_PARTIAL_FILE
        XCTAssertTrue(error.description.hasPrefix("GET \(server.url("/truncated")): "), error.description)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the partial download is removed")
    }

    func testAnEndlessBodyIsStoppedAtTheLimitWithMemoryBounded() throws {
        let server = try FaultServer("big")
        let before = ProcessMemory.current().rssKib ?? 0
        let limits = FetchLimits(maxBodyBytes: 2 << 20)
        let (outcome, peak) = try get(FetchRequest(url: server.url("/big"), limits: limits))
        let error = try XCTUnwrap(failure(outcome))
        XCTAssertEqual(error.failure, .tooLarge(limit: 2 << 20))
        XCTAssertEqual(error.failure.key, "too_large")
        XCTAssertLessThanOrEqual(peak - before, memoryBoundKiB, "RSS grew by \(peak - before) KiB for a 2 MiB limit")
        let sent = try Poll.until("the server to notice the hang-up", reading: { server.sent("/big") }, satisfies: { $0 != nil })!
        XCTAssertLessThan(sent, 64 << 20, "the transfer stopped near the limit, not after the server's 1 GiB")
    }

    func testADeclaredLengthOverTheLimitIsRefusedBeforeTheBody() throws {
        let server = try FaultServer("declared")
        let error = try XCTUnwrap(failure(try get(FetchRequest(url: server.url("/big-declared"), limits: FetchLimits(maxBodyBytes: 1 << 20))).0))
        XCTAssertEqual(error.failure, .tooLarge(limit: 1 << 20))
    }

    func testAGzipBombIsRefusedAtTheDecompressedLimit() throws {
        let server = try FaultServer("bomb")
        let before = ProcessMemory.current().rssKib ?? 0
        let (outcome, peak) = try get(FetchRequest(url: server.url("/gzip-bomb"), limits: FetchLimits(maxBodyBytes: 4 << 20)), timeout: 20)
        let error = try XCTUnwrap(failure(outcome))
        XCTAssertEqual(error.failure, .decompressedTooLarge(limit: 4 << 20))
        XCTAssertTrue(error.description.contains("decompression bomb"), error.description)
        XCTAssertLessThanOrEqual(peak - before, memoryBoundKiB, "RSS grew by \(peak - before) KiB for a 4 MiB limit")
    }

    func testRedirectsAreLimitedAndOnlyHTTPIsFollowed() throws {
        let server = try FaultServer("redirect")
        try server.write("ok.txt", "arrived")
        let followed = try get(FetchRequest(url: server.url("/redirect/2"))).0.get()
        XCTAssertEqual(String(decoding: followed.body, as: UTF8.self), "arrived")

        let tooMany = try XCTUnwrap(failure(try get(FetchRequest(url: server.url("/redirect/4"), limits: FetchLimits(maxRedirects: 3))).0))
        guard case .transfer(let code, _) = tooMany.failure else { return XCTFail("expected a transfer error, got \(tooMany)") }
        XCTAssertEqual(code, 47, tooMany.description)  // CURLE_TOO_MANY_REDIRECTS

        let toFile = try XCTUnwrap(failure(try get(FetchRequest(url: server.url("/redirect-file"))).0))
        guard case .transfer(let fileCode, _) = toFile.failure else { return XCTFail("expected a transfer error, got \(toFile)") }
        XCTAssertEqual(fileCode, 1, toFile.description)  // CURLE_UNSUPPORTED_PROTOCOL

        let direct = try XCTUnwrap(failure(try get(FetchRequest(url: "file:///etc/passwd")).0))
        XCTAssertEqual(direct.description, "GET file:///etc/passwd: only http:// and https:// URLs are fetched (curl error 1)")
    }

    func testAFileDownloadIsCompleteWithItsDigest() throws {
        let server = try FaultServer("file")
        try server.write("ok.txt", "abc")
        let path = server.directory.appendingPathComponent("ok.partial").path
        let response = try get(FetchRequest(url: server.url("/files/ok.txt"), destination: .file(path))).0.get()
        XCTAssertEqual(response.file, path)
        XCTAssertEqual(response.bytes, 3)
        XCTAssertEqual(response.sha256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "abc")
    }

    func testTheLoopRunsItsTimersWhileATransferDrips() throws {
        let server = try FaultServer("loop")
        var outcome: Result<FetchResponse, FetchError>?
        let limits = FetchLimits(totalTimeout: .seconds(2), lowSpeedBytesPerSecond: 1, lowSpeedTime: .seconds(30))
        fetcher.fetch(FetchRequest(url: server.url("/slow"), limits: limits)) { outcome = $0 }
        var ticks = 0
        let timer = loop.addTimer(after: .milliseconds(50), repeating: .milliseconds(50)) { ticks += 1 }
        defer { timer.cancel() }
        try Poll.until("the slow transfer's total timeout", timeout: 10, turning: loop) { outcome != nil }
        guard case .failure(let error) = outcome!, case .timeout = error.failure else { return XCTFail("expected a timeout, got \(outcome!)") }
        // 40 are due; a loaded or instrumented machine runs late, and a late repeating timer fires once for the
        // turns it missed. The point is that the loop turned all along.
        XCTAssertGreaterThanOrEqual(ticks, 5, "a 50 ms timer kept firing through the 2 s transfer")
    }
}

/// TLS: verified by default, against the system's CAs or a CA file the request names.
final class FetcherTLSTests: XCTestCase {
    func testTLSIsVerifiedAgainstTheGivenCAAndAWrongCertificateIsRefused() throws {
        let loop = try MainLoop.epoll()
        let fetcher = try Fetcher(loop: loop)
        let folder = try KioskdProcess.scratchDirectory("fetch-tls-certificates")
        let certificates = try FaultServer.makeCertificates(in: folder)
        let good = try FaultServer("tls-good", certificate: certificates.good)
        let wrong = try FaultServer("tls-wrong", certificate: certificates.wrong)
        try good.write("ok.txt", "secure")
        try wrong.write("ok.txt", "secure")
        func get(_ request: FetchRequest) throws -> Result<FetchResponse, FetchError> {
            var outcome: Result<FetchResponse, FetchError>?
            fetcher.fetch(request) { outcome = $0 }
            try Poll.until("GET \(request.url)", timeout: 10, turning: loop) { outcome != nil }
            return outcome!
        }
        let trusted = try get(FetchRequest(url: good.url("/files/ok.txt"), caFile: certificates.ca)).get()
        XCTAssertEqual(String(decoding: trusted.body, as: UTF8.self), "secure")

        // The test CA is not among the system's: refused unless named.
        guard case .failure(let unknown) = try get(FetchRequest(url: good.url("/files/ok.txt"))),
              case .transfer(let code, let words) = unknown.failure else { return XCTFail("a certificate of an unknown CA was accepted") }
        XCTAssertEqual(code, 60, words)  // CURLE_PEER_FAILED_VERIFICATION
        XCTAssertTrue(unknown.description.hasPrefix("GET \(good.url("/files/ok.txt")): "), unknown.description)

        // Signed by the trusted CA, but for another name.
        guard case .failure(let mismatch) = try get(FetchRequest(url: wrong.url("/files/ok.txt"), caFile: certificates.ca)),
              case .transfer(let mismatchCode, let mismatchWords) = mismatch.failure else { return XCTFail("a certificate for another name was accepted") }
        XCTAssertEqual(mismatchCode, 60, mismatchWords)
        XCTAssertTrue(mismatchWords.contains("127.0.0.1"), mismatchWords)

        // Turned off explicitly, the same certificate is taken.
        XCTAssertEqual(try get(FetchRequest(url: wrong.url("/files/ok.txt"), verifyTLS: false)).get().status, 200)
    }
}
