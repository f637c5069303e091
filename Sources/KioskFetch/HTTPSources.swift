import Foundation
import KioskCore
import KioskScene

/// Runs a scene's `http:` and `rss:` data sources: each is fetched at once and then every `every`, with its
/// validators (ETag, Last-Modified) so an unchanged document costs a 304; the document is read on the fetcher's
/// worker (`SourceDocument`) and the values handed to `setData` on the main thread, the same path the socket's
/// `data.set` and MQTT's data sources take. A failure keeps the last values, sets `KEY.stale` to "true" (back to
/// "false" at the next success), is counted by reason, and is retried with per-URL backoff (1 s doubling, at
/// most `every`).
///
/// Main thread: made, called and dropped there.
public final class HTTPSources {
    /// What `stats` reports of one source. A plain value.
    public struct Status: Sendable, Equatable {
        public var key: String
        public var url: String
        /// Wall-clock seconds of the last fetch that gave values (or a 304), if any.
        public var lastSuccess: Double?
        /// The last failure's words, until the next success.
        public var lastError: String?
        /// Failures by reason (`FetchFailure.key`: `http_500`, `timeout`, `too_large`, `refused`, ...).
        public var failures: [String: Int]
        /// Wall-clock seconds since the values shown are stale (the first failure since the last success).
        public var staleSince: Double?
        public var fetches: Int
        public var notModified: Int
    }

    private final class Running {
        let source: HTTPDataSource
        var status: Status
        var etag: String?
        var lastModified: String?
        var timer: TimerHandle?
        var fetch: FetchID?
        /// Keys the last values set, so a feed that shrank blanks the items it no longer has.
        var keys: Set<String> = []

        init(_ source: HTTPDataSource) {
            self.source = source
            status = Status(key: source.key, url: source.url, failures: [:], fetches: 0, notModified: 0)
        }
    }

    private let fetcher: Fetcher
    private let loop: MainLoop
    private let wallClock: () -> Double
    private let setData: ([String: String]) throws -> Void
    private let onError: (HTTPDataSource, String) -> Void
    private var running: [Running] = []
    /// Per URL: two sources reading one server back off together.
    private var backoff: FetchBackoff

    /// - Parameters:
    ///   - setData: sets data keys (the stages' `setData`); what it throws is counted as a `refused` failure.
    ///   - onError: each failure, with the source and the words (an `error` event, a log line).
    public init(fetcher: Fetcher, loop: MainLoop, wallClock: @escaping () -> Double = { Date().timeIntervalSince1970 },
                backoff: FetchBackoff = FetchBackoff(),
                setData: @escaping ([String: String]) throws -> Void, onError: @escaping (HTTPDataSource, String) -> Void = { _, _ in }) {
        self.fetcher = fetcher
        self.backoff = backoff
        self.loop = loop
        self.wallClock = wallClock
        self.setData = setData
        self.onError = onError
    }

    deinit { stopAll() }

    public var statuses: [Status] { running.map(\.status) }

    /// Runs `sources` from now on (a scene loaded): sources that were running already (same URL, key, kind,
    /// interval and headers) keep their state and schedule; the others are stopped or started.
    public func setSources(_ sources: [HTTPDataSource]) {
        var kept: [Running] = []
        var old = running
        for source in sources {
            if let i = old.firstIndex(where: { Self.same($0.source, source) }) {
                kept.append(old.remove(at: i))
            } else {
                let entry = Running(source)
                kept.append(entry)
                start(entry)
            }
        }
        for entry in old { stop(entry) }
        running = kept
    }

    public func stopAll() {
        for entry in running { stop(entry) }
        running = []
    }

    private static func same(_ a: HTTPDataSource, _ b: HTTPDataSource) -> Bool {
        a.url == b.url && a.key == b.key && a.kind == b.kind && a.every == b.every && a.headers == b.headers
    }

    private func stop(_ entry: Running) {
        entry.timer?.cancel()
        entry.timer = nil
        if let id = entry.fetch { fetcher.cancel(id) }
        entry.fetch = nil
    }

    private func start(_ entry: Running) {
        let source = entry.source
        let request = FetchRequest(url: source.url, headers: source.headers, etag: entry.etag, lastModified: entry.lastModified,
                                   limits: .document)
        entry.status.fetches += 1
        entry.fetch = fetcher.fetch(request, process: { outcome -> Result<Parsed, FetchError> in
            outcome.flatMap { response in
                if response.notModified { return .success(Parsed(values: nil, etag: response.etag, lastModified: response.lastModified)) }
                return SourceDocument.values(for: source, body: response.body, contentType: response.contentType)
                    .map { Parsed(values: $0, etag: response.etag, lastModified: response.lastModified) }
                    .mapError { FetchError(url: source.url, failure: $0) }
            }
        }, then: { [weak self, weak entry] result in
            guard let self, let entry else { return }
            entry.fetch = nil
            self.finished(entry, result)
        })
    }

    private struct Parsed: Sendable {
        var values: [String: String]?
        var etag: String?
        var lastModified: String?
    }

    private func finished(_ entry: Running, _ result: Result<Parsed, FetchError>) {
        let key = entry.source.key
        switch result {
        case .success(let parsed):
            var failure: String?
            if var values = parsed.values {
                // Items of a longer feed than this one are blanked, not left showing.
                for stale in entry.keys.subtracting(values.keys) { values[stale] = "" }
                values["\(key).stale"] = "false"
                do {
                    try setData(values)
                    entry.keys = Set(values.keys).subtracting(["\(key).stale"])
                    entry.etag = parsed.etag
                    entry.lastModified = parsed.lastModified
                } catch {
                    failure = "GET \(entry.source.url): the values for '\(key)' were refused: \(error)"
                }
            } else {
                entry.status.notModified += 1
                if entry.status.staleSince != nil { try? setData(["\(key).stale": "false"]) }
            }
            if let failure {
                failed(entry, reason: "refused", words: failure)
                return
            }
            entry.status.lastSuccess = wallClock()
            entry.status.lastError = nil
            entry.status.staleSince = nil
            backoff.succeeded(entry.source.url)
            schedule(entry, after: entry.source.every)
        case .failure(let error):
            failed(entry, reason: error.failure.key, words: error.description)
        }
    }

    private func failed(_ entry: Running, reason: String, words: String) {
        entry.status.failures[reason, default: 0] += 1
        entry.status.lastError = words
        if entry.status.staleSince == nil {
            entry.status.staleSince = wallClock()
            try? setData(["\(entry.source.key).stale": "true"])
        }
        onError(entry.source, words)
        schedule(entry, after: min(backoff.failed(entry.source.url), entry.source.every))
    }

    private func schedule(_ entry: Running, after delay: Duration) {
        entry.timer?.cancel()
        entry.timer = loop.addTimer(after: delay) { [weak self, weak entry] in
            guard let self, let entry else { return }
            entry.timer = nil
            self.start(entry)
        }
    }
}
