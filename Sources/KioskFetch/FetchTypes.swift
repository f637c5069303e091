import KioskCore

/// What one transfer may take. Every bound is enforced by the worker, so a hostile or broken server costs at most
/// this much memory, disk and time. A plain value; any thread.
public struct FetchLimits: Sendable, Equatable {
    /// Most bytes of body kept, counted after decompression: a transfer past it is aborted (`tooLarge`), and a gzip
    /// body that inflates past it is refused as a decompression bomb (`decompressedTooLarge`). A `Content-Length`
    /// announcing more is refused before the body starts.
    public var maxBodyBytes: Int
    /// The whole transfer, redirects included.
    public var totalTimeout: Duration
    /// Connecting (DNS, TCP, TLS).
    public var connectTimeout: Duration
    /// A transfer slower than `lowSpeedBytesPerSecond` for `lowSpeedTime` is aborted (`timeout`): a server that
    /// drips one byte a second is given up on well before `totalTimeout`.
    public var lowSpeedBytesPerSecond: Int
    public var lowSpeedTime: Duration
    /// Redirects followed at most (only to http and https).
    public var maxRedirects: Int

    public init(maxBodyBytes: Int = 16 << 20, totalTimeout: Duration = .seconds(120), connectTimeout: Duration = .seconds(15),
                lowSpeedBytesPerSecond: Int = 100, lowSpeedTime: Duration = .seconds(20), maxRedirects: Int = 5) {
        self.maxBodyBytes = maxBodyBytes
        self.totalTimeout = totalTimeout
        self.connectTimeout = connectTimeout
        self.lowSpeedBytesPerSecond = lowSpeedBytesPerSecond
        self.lowSpeedTime = lowSpeedTime
        self.maxRedirects = maxRedirects
    }

    /// A data source's document (JSON, RSS): 4 MiB, 30 s.
    public static let document = FetchLimits(maxBodyBytes: 4 << 20, totalTimeout: .seconds(30))
}

/// Where a body goes: kept in memory (data sources), or streamed into a new file (the asset cache's temporary
/// file, created with O_EXCL, fsynced when complete and removed when not).
public enum FetchDestination: Sendable, Equatable {
    case memory
    case file(String)
}

/// One GET. A plain value; any thread.
public struct FetchRequest: Sendable, Equatable {
    public var url: String
    /// Extra request headers, name to value.
    public var headers: [String: String]
    /// The validators of the copy already held: sent as If-None-Match / If-Modified-Since; a 304 answers
    /// `notModified`.
    public var etag: String?
    public var lastModified: String?
    public var limits: FetchLimits
    public var destination: FetchDestination
    /// TLS peer and host verification: on unless turned off explicitly.
    public var verifyTLS: Bool
    /// A CA bundle to verify against instead of the system's.
    public var caFile: String?
    /// A proxy (`http://host:port`); nil takes libcurl's from the environment (http_proxy, https_proxy, no_proxy).
    public var proxy: String?

    public init(url: String, headers: [String: String] = [:], etag: String? = nil, lastModified: String? = nil,
                limits: FetchLimits = FetchLimits(), destination: FetchDestination = .memory, verifyTLS: Bool = true,
                caFile: String? = nil, proxy: String? = nil) {
        self.url = url
        self.headers = headers
        self.etag = etag
        self.lastModified = lastModified
        self.limits = limits
        self.destination = destination
        self.verifyTLS = verifyTLS
        self.caFile = caFile
        self.proxy = proxy
    }
}

/// A completed transfer. An immutable value, made on the worker and handed to the main thread.
public struct FetchResponse: Sendable, Equatable {
    public var url: String
    /// The final status: 2xx, or 304 when `notModified`.
    public var status: Int
    public var notModified: Bool { status == 304 }
    public var etag: String?
    public var lastModified: String?
    public var contentType: String?
    public var contentEncoding: String?
    /// The body (decompressed), for `.memory`; empty for `.file`.
    public var body: [UInt8]
    /// The file written, for `.file`: complete and fsynced.
    public var file: String?
    /// Body bytes after decompression.
    public var bytes: Int
    /// The body's SHA-256 (hex), for `.file`.
    public var sha256: String?
    /// The final response's `Cache-Control` header, as sent.
    public var cacheControl: String? = nil
}

/// Why a transfer gave nothing. `key` is the reason's short name, counted in `stats`.
public enum FetchFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server answered with this status (neither 2xx nor 304).
    case http(Int)
    /// The body was longer than the limit (or its Content-Length said it would be).
    case tooLarge(limit: Int)
    /// A compressed body inflated past the limit: a decompression bomb.
    case decompressedTooLarge(limit: Int)
    /// Too slow: the total timeout, or below the low-speed limit for too long; curl's words.
    case timeout(String)
    /// Any other transfer error (DNS, connection refused, TLS, a truncated body, too many redirects, a protocol
    /// that is not http/https): curl's code and words.
    case transfer(code: Int, message: String)
    /// The destination file could not be written.
    case file(String)
    /// The body arrived but was refused: a sha256 pin that does not match, a document that does not parse.
    case refused(String)

    public var key: String {
        switch self {
        case .http(let status): "http_\(status)"
        case .tooLarge: "too_large"
        case .decompressedTooLarge: "decompressed_too_large"
        case .timeout: "timeout"
        case .transfer: "transfer"
        case .file: "file"
        case .refused: "refused"
        }
    }

    /// The reason's family, as `stats` counts failed fetches: `http_status`, `too_large` (a decompression bomb
    /// too), `timeout`, `dns`, `connect`, `tls`, `truncated`, `redirects`, `pin_mismatch`, `refused`, `file`,
    /// `transfer` (any other curl error).
    public var reason: String {
        switch self {
        case .http: return "http_status"
        case .tooLarge, .decompressedTooLarge: return "too_large"
        case .timeout: return "timeout"
        case .file: return "file"
        case .refused(let text): return text.hasPrefix("sha256 ") ? "pin_mismatch" : "refused"
        case .transfer(let code, _):
            switch code {
            case 5, 6: return "dns"  // CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_RESOLVE_HOST
            case 7: return "connect"  // CURLE_COULDNT_CONNECT
            case 28: return "timeout"
            case 35, 51, 53, 54, 58, 59, 60, 64, 66, 77, 80, 82, 83, 90, 91, 98: return "tls"
            case 18, 56: return "truncated"  // CURLE_PARTIAL_FILE, CURLE_RECV_ERROR
            case 47: return "redirects"  // CURLE_TOO_MANY_REDIRECTS
            case 63: return "too_large"  // CURLE_FILESIZE_EXCEEDED
            default: return "transfer"
            }
        }
    }

    public var description: String {
        switch self {
        case .http(let status): "HTTP status \(status)"
        case .tooLarge(let limit): "the body is larger than the limit of \(limit) bytes"
        case .decompressedTooLarge(let limit): "the compressed body inflates past the limit of \(limit) bytes (refused as a decompression bomb)"
        case .timeout(let text): "timed out: \(text)"
        case .transfer(let code, let message): "\(message) (curl error \(code))"
        case .file(let text): "cannot write the download: \(text)"
        case .refused(let text): text
        }
    }
}

/// A failed fetch: the URL and the reason (`GET https://example.com/menu.json: HTTP status 500`). A plain value.
public struct FetchError: Error, Sendable, Equatable, CustomStringConvertible {
    public var url: String
    public var failure: FetchFailure

    public init(url: String, failure: FetchFailure) {
        self.url = url
        self.failure = failure
    }

    public var description: String { "GET \(url): \(failure.description)" }
}

/// A fetch's identity, for `Fetcher.cancel`.
public struct FetchID: Hashable, Sendable {
    let value: UInt64
}
