import CCurl
import CKioskCurl
import KioskCore
import Logging
#if canImport(Glibc)
import Glibc
#endif

private let logger = Logger(label: "kioskd.fetch")

/// HTTP(S) GETs on libcurl's multi interface, driven by one worker thread of its own: the main loop never waits
/// on DNS, a connection, a slow server or a file write. A fetch's `process` step runs on the worker too, once the
/// body is in (parsing a document, committing a file to the cache), and what it returns, an immutable value, is
/// handed to the main thread through a `Waker` and given to `then` there.
///
/// Every transfer is bounded (`FetchLimits`): body size counted after decompression (gzip is accepted, and a bomb
/// is refused at the limit), total, connect and low-speed timeouts, redirects; only http and https, TLS verified
/// unless turned off per request, proxies from the environment unless one is given.
///
/// Make it, call it and drop it on the main thread (the loop's). Dropping it stops the worker; transfers still
/// running are abandoned and their `then` never called.
public final class Fetcher {
    private let worker: FetchWorker
    private var waker: Waker?
    private var completions: [UInt64: (any Sendable) -> Void] = [:]
    private var nextID: UInt64 = 0
    private var thread = pthread_t()

    /// Transfers handed to the worker whose `then` has not run yet.
    public var pending: Int { completions.count }

    /// - Throws: libcurl that cannot be loaded (not installed, older than 7.85), naming why.
    public init(loop: MainLoop, maxConnections: Int = 4) throws {
        if let failure = kiosk_curl_load_failure() { throw SystemError("fetcher: \(String(cString: failure))") }
        guard let multi = curl_multi_init() else { throw SystemError("curl_multi_init failed") }
        _ = kiosk_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, maxConnections)
        worker = FetchWorker(multi: multi)
        let worker = self.worker
        waker = try loop.makeWaker { [weak self] in self?.deliver() }
        worker.waker = waker
        let start = Unmanaged.passRetained(worker).toOpaque()
        let status = pthread_create(&thread, nil, { raw in
            let worker = Unmanaged<FetchWorker>.fromOpaque(raw!).takeRetainedValue()
            worker.run()
            return nil
        }, start)
        guard status == 0 else {
            Unmanaged<FetchWorker>.fromOpaque(start).release()
            throw SystemError("pthread_create (fetch worker)", errno: status)
        }
    }

    deinit {
        worker.stop()
        pthread_join(thread, nil)
    }

    /// Starts `request`; `process` runs on the worker with the outcome, `then` on the main thread with what
    /// `process` returned.
    @discardableResult
    public func fetch<Value: Sendable>(_ request: FetchRequest,
                                       process: @escaping @Sendable (Result<FetchResponse, FetchError>) -> Value,
                                       then: @escaping (Value) -> Void) -> FetchID {
        nextID += 1
        let id = nextID
        completions[id] = { value in then(value as! Value) }
        worker.submit(FetchJob(id: id, request: request, process: { process($0) }))
        return FetchID(value: id)
    }

    /// Starts `request`; `then` runs on the main thread with the outcome.
    @discardableResult
    public func fetch(_ request: FetchRequest, then: @escaping (Result<FetchResponse, FetchError>) -> Void) -> FetchID {
        fetch(request, process: { $0 }, then: then)
    }

    /// Abandons a fetch: its transfer is stopped (a partial file removed) and its `then` never runs.
    public func cancel(_ id: FetchID) {
        guard completions.removeValue(forKey: id.value) != nil else { return }
        worker.cancel(id.value)
    }

    private func deliver() {
        for (id, value) in worker.takeFinished() {
            guard let then = completions.removeValue(forKey: id) else { continue }
            then(value)
        }
    }
}

struct FetchJob: Sendable {
    var id: UInt64
    var request: FetchRequest
    var process: @Sendable (Result<FetchResponse, FetchError>) -> any Sendable
}

/// The worker thread's side: the multi handle and the transfers in it are touched only on the worker; the inbox
/// and outbox are guarded by locks.
final class FetchWorker: @unchecked Sendable {
    private struct Inbox {
        var jobs: [FetchJob] = []
        var cancels: [UInt64] = []
        var stopping = false
    }

    private let multi: UnsafeMutableRawPointer
    private let inbox = Lock(Inbox())
    private let outbox = Lock([(UInt64, any Sendable)]())
    /// Set once on the main thread before the worker starts.
    var waker: Waker?
    /// Worker thread only.
    private var active: [UInt64: Transfer] = [:]

    init(multi: UnsafeMutableRawPointer) {
        self.multi = multi
    }

    func submit(_ job: FetchJob) {
        inbox.withLock { $0.jobs.append(job) }
        curl_multi_wakeup(multi)
    }

    func cancel(_ id: UInt64) {
        inbox.withLock { $0.cancels.append(id) }
        curl_multi_wakeup(multi)
    }

    func stop() {
        inbox.withLock { $0.stopping = true }
        curl_multi_wakeup(multi)
    }

    func takeFinished() -> [(UInt64, any Sendable)] {
        outbox.withLock { box in
            let taken = box
            box.removeAll()
            return taken
        }
    }

    /// The worker's nice value: downloads, their hashing and their file writes are background work, so under a
    /// busy CPU the main loop (input, the control socket, flips) and the render workers run first.
    static let nice: Int32 = 10

    func run() {
        // With PRIO_PROCESS and who = 0, Linux changes the calling thread only. Best effort: at worst the worker
        // runs at kioskd's own priority.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.nice)
        while true {
            let (jobs, cancels, stopping) = inbox.withLock { box in
                let taken = (box.jobs, box.cancels, box.stopping)
                box.jobs.removeAll()
                box.cancels.removeAll()
                return taken
            }
            if stopping { break }
            for id in cancels {
                guard let transfer = active.removeValue(forKey: id) else { continue }
                curl_multi_remove_handle(multi, transfer.easy)
                transfer.discard()
            }
            for job in jobs { start(job) }
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var queued: Int32 = 0
            while let message = curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                let code = message.pointee.data.result
                guard let entry = active.first(where: { $0.value.easy == easy }) else { continue }
                active.removeValue(forKey: entry.key)
                curl_multi_remove_handle(multi, easy)
                finish(entry.value, code: code)
            }
            var ready: Int32 = 0
            curl_multi_poll(multi, nil, 0, 1000, &ready)
        }
        for transfer in active.values {
            curl_multi_remove_handle(multi, transfer.easy)
            transfer.discard()
        }
        active.removeAll()
        curl_multi_cleanup(multi)
    }

    private func start(_ job: FetchJob) {
        switch Transfer.make(job) {
        case .success(let transfer):
            active[job.id] = transfer
            curl_multi_add_handle(multi, transfer.easy)
        case .failure(let error):
            post(job.id, job.process(.failure(error)))
        }
    }

    private func finish(_ transfer: Transfer, code: CURLcode) {
        let outcome = transfer.outcome(code)
        if case .failure(let error) = outcome { logger.debug("\(error)") }
        post(transfer.job.id, transfer.job.process(outcome))
    }

    private func post(_ id: UInt64, _ value: any Sendable) {
        outbox.withLock { $0.append((id, value)) }
        waker?.wake()
    }
}

/// One transfer on the worker: its easy handle, what has arrived, and why it was stopped if it was.
final class Transfer {
    let job: FetchJob
    let easy: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    private var fd: Int32 = -1
    private var body: [UInt8] = []
    private var bytes = 0
    private var hash: SHA256?
    private var etag: String?
    private var lastModified: String?
    private var contentType: String?
    private var contentEncoding: String?
    private var cacheControl: String?
    /// Why the write callback stopped the transfer.
    private var stopped: FetchFailure?

    private init(job: FetchJob, easy: UnsafeMutableRawPointer) {
        self.job = job
        self.easy = easy
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    deinit {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
        if fd >= 0 { close(fd) }
    }

    static func make(_ job: FetchJob) -> Result<Transfer, FetchError> {
        let request = job.request
        func fail(_ failure: FetchFailure) -> Result<Transfer, FetchError> { .failure(FetchError(url: request.url, failure: failure)) }
        let lower = request.url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://") else {
            return fail(.transfer(code: Int(CURLE_UNSUPPORTED_PROTOCOL.rawValue), message: "only http:// and https:// URLs are fetched"))
        }
        guard let easy = curl_easy_init() else { return fail(.transfer(code: -1, message: "curl_easy_init failed")) }
        let transfer = Transfer(job: job, easy: easy)
        if case .file(let path) = request.destination {
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o640)
            guard fd >= 0 else { return fail(.file(SystemError("create \(path)", errno: errno).description)) }
            transfer.fd = fd
            transfer.hash = SHA256()
        }
        let limits = request.limits
        let me = Unmanaged.passUnretained(transfer).toOpaque()
        _ = kiosk_curl_setopt_string(easy, CURLOPT_URL, request.url)
        _ = kiosk_curl_setopt_pointer(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        _ = kiosk_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        _ = kiosk_curl_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = kiosk_curl_setopt_string(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        _ = kiosk_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, limits.maxRedirects > 0 ? 1 : 0)
        _ = kiosk_curl_setopt_long(easy, CURLOPT_MAXREDIRS, max(0, limits.maxRedirects))
        _ = kiosk_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, Self.milliseconds(limits.totalTimeout))
        _ = kiosk_curl_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(limits.connectTimeout))
        _ = kiosk_curl_setopt_long(easy, CURLOPT_LOW_SPEED_LIMIT, max(1, limits.lowSpeedBytesPerSecond))
        _ = kiosk_curl_setopt_long(easy, CURLOPT_LOW_SPEED_TIME, max(1, Self.milliseconds(limits.lowSpeedTime) / 1000))
        _ = kiosk_curl_setopt_off(easy, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(limits.maxBodyBytes))
        // gzip and deflate are accepted and inflated by libcurl; the write callback counts what comes out.
        _ = kiosk_curl_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, "gzip, deflate")
        _ = kiosk_curl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, request.verifyTLS ? 1 : 0)
        _ = kiosk_curl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, request.verifyTLS ? 2 : 0)
        if let caFile = request.caFile { _ = kiosk_curl_setopt_string(easy, CURLOPT_CAINFO, caFile) }
        if let proxy = request.proxy { _ = kiosk_curl_setopt_string(easy, CURLOPT_PROXY, proxy) }
        _ = kiosk_curl_setopt_string(easy, CURLOPT_USERAGENT, "kioskd/\(kioskFetchVersion)")
        var lines = request.headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        if let etag = request.etag { lines.append("If-None-Match: \(etag)") }
        if let lastModified = request.lastModified { lines.append("If-Modified-Since: \(lastModified)") }
        for line in lines where !line.contains("\r") && !line.contains("\n") {
            transfer.headerList = curl_slist_append(transfer.headerList, line)
        }
        if let list = transfer.headerList { _ = kiosk_curl_setopt_list(easy, CURLOPT_HTTPHEADER, list) }
        _ = kiosk_curl_setopt_pointer(easy, CURLOPT_WRITEDATA, me)
        _ = kiosk_curl_setopt_write_function(easy) { data, size, count, raw in
            let transfer = Unmanaged<Transfer>.fromOpaque(raw!).takeUnretainedValue()
            return transfer.write(UnsafeRawBufferPointer(start: data, count: size * count))
        }
        _ = kiosk_curl_setopt_pointer(easy, CURLOPT_HEADERDATA, me)
        _ = kiosk_curl_setopt_header_function(easy) { data, size, count, raw in
            let transfer = Unmanaged<Transfer>.fromOpaque(raw!).takeUnretainedValue()
            transfer.header(UnsafeRawBufferPointer(start: data, count: size * count))
            return size * count
        }
        return .success(transfer)
    }

    private static func milliseconds(_ d: Duration) -> Int {
        Int(d.components.seconds) * 1000 + Int(d.components.attoseconds / 1_000_000_000_000_000)
    }

    private var status: Int {
        var code = 0
        _ = kiosk_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &code)
        return code
    }

    /// A header line; a status line (a redirect's, or the final response's) starts the headers afresh.
    private func header(_ line: UnsafeRawBufferPointer) {
        let text = String(decoding: line, as: UTF8.self).trimmingScalars(" \r\n\t")
        if text.hasPrefix("HTTP/") {
            etag = nil; lastModified = nil; contentType = nil; contentEncoding = nil; cacheControl = nil
            return
        }
        guard let colon = text.firstIndex(of: ":") else { return }
        let name = text[..<colon].lowercased()
        let value = String(text[text.index(after: colon)...]).trimmingScalars(" \t")
        switch name {
        case "etag": etag = value
        case "last-modified": lastModified = value
        case "content-type": contentType = value
        case "content-encoding": contentEncoding = value.lowercased()
        case "cache-control": cacheControl = cacheControl.map { "\($0), \(value)" } ?? value
        default: break
        }
    }

    /// Body bytes (decompressed). Returning less than given stops the transfer (CURLE_WRITE_ERROR).
    private func write(_ data: UnsafeRawBufferPointer) -> Int {
        let status = self.status
        guard (200..<300).contains(status) else {
            // An error page is not kept: the transfer stops at its first byte.
            stopped = .http(status)
            return 0
        }
        let limit = job.request.limits.maxBodyBytes
        guard bytes + data.count <= limit else {
            let encoded = contentEncoding.map { $0 != "identity" } ?? false
            stopped = encoded ? .decompressedTooLarge(limit: limit) : .tooLarge(limit: limit)
            return 0
        }
        bytes += data.count
        if fd >= 0 {
            hash?.update(data)
            var offset = 0
            while offset < data.count {
                let n = Glibc.write(fd, data.baseAddress! + offset, data.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    stopped = .file(SystemError("write \(destinationPath ?? "")", errno: errno).description)
                    return 0
                }
                offset += n
            }
        } else {
            body.append(contentsOf: data)
        }
        return data.count
    }

    private var destinationPath: String? {
        if case .file(let path) = job.request.destination { return path }
        return nil
    }

    /// Closes and removes a partial file.
    func discard() {
        if fd >= 0 { close(fd); fd = -1 }
        if let path = destinationPath { unlink(path) }
    }

    func outcome(_ code: CURLcode) -> Result<FetchResponse, FetchError> {
        let url = job.request.url
        func fail(_ failure: FetchFailure) -> Result<FetchResponse, FetchError> {
            discard()
            return .failure(FetchError(url: url, failure: failure))
        }
        if let stopped { return fail(stopped) }
        let words = errorBuffer.pointee != 0 ? String(cString: errorBuffer) : String(cString: curl_easy_strerror(code))
        switch code {
        case CURLE_OK:
            break
        case CURLE_FILESIZE_EXCEEDED:
            return fail(.tooLarge(limit: job.request.limits.maxBodyBytes))
        case CURLE_OPERATION_TIMEDOUT:
            return fail(.timeout(words))
        default:
            return fail(.transfer(code: Int(code.rawValue), message: words))
        }
        let status = self.status
        guard (200..<300).contains(status) || status == 304 else { return fail(.http(status)) }
        var sha: String?
        if status == 304 {
            discard()
            return .success(FetchResponse(url: url, status: status, etag: etag ?? job.request.etag,
                                          lastModified: lastModified ?? job.request.lastModified, contentType: contentType,
                                          contentEncoding: contentEncoding, body: [], file: nil, bytes: 0, sha256: nil,
                                          cacheControl: cacheControl))
        }
        if fd >= 0 {
            guard fsync(fd) == 0 else { return fail(.file(SystemError("fsync \(destinationPath ?? "")", errno: errno).description)) }
            let closed = close(fd)
            fd = -1
            guard closed == 0 else { return fail(.file(SystemError("close \(destinationPath ?? "")", errno: errno).description)) }
            sha = hash?.finalizeHex()
        }
        return .success(FetchResponse(url: url, status: status, etag: etag, lastModified: lastModified, contentType: contentType,
                                      contentEncoding: contentEncoding, body: body, file: destinationPath, bytes: bytes, sha256: sha,
                                      cacheControl: cacheControl))
    }
}

/// The version named in the User-Agent.
let kioskFetchVersion = "1"

extension String {
    /// The string without the given characters (each a single Unicode scalar) at either end.
    func trimmingScalars(_ set: String) -> String {
        let scalars = Set(set.unicodeScalars)
        var view = Substring(self).unicodeScalars
        while let f = view.first, scalars.contains(f) { view.removeFirst() }
        while let l = view.last, scalars.contains(l) { view.removeLast() }
        return String(view)
    }
}
