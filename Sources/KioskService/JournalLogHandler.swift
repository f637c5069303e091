import Glibc
import Logging

/// Log lines for the systemd journal: when kioskd's stderr is the journal's stream (systemd sets `JOURNAL_STREAM`
/// to its device and inode, sd-daemon(3)), each line starts with its syslog priority (`<3>` for an error), so
/// `journalctl -p err` sees kioskd's errors as errors rather than every line at the stream's default, info.
/// The journal stamps time and unit itself: a line is `<N>label: message key=value`. Anywhere else kioskd keeps
/// swift-log's plain stderr lines.
///
/// A value type as swift-log wants; `log` may run on any thread and writes each line with one write(2).
public struct JournalLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    private let label: String
    private let fd: Int32

    public init(label: String, fd: Int32 = STDERR_FILENO) {
        self.label = label
        self.fd = fd
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// True when `fd` is the stream `JOURNAL_STREAM` names (`DEVICE:INODE`, both decimal).
    public static func isJournalStream(fd: Int32 = STDERR_FILENO, environment: String? = getenv("JOURNAL_STREAM").map { String(cString: $0) }) -> Bool {
        guard let environment else { return false }
        let parts = environment.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return false }
        return UInt64(st.st_dev) == device && UInt64(st.st_ino) == inode
    }

    /// The syslog priority of a swift-log level (sd-daemon(3)'s `SD_*` prefixes).
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// One line per line of the message, each with the priority, so a multi-line message keeps it throughout.
    public static func format(level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        let suffix = metadata.isEmpty ? "" : " " + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let prefix = "<\(priority(level))>"
        return (message + suffix).split(separator: "\n", omittingEmptySubsequences: false)
            .map { "\(prefix)\(label): \($0)\n" }.joined()
    }

    public func log(event: LogEvent) {
        let merged = event.metadata.map { metadata.merging($0) { _, new in new } } ?? metadata
        let line = Self.format(level: event.level, label: label, message: "\(event.message)", metadata: merged)
        var bytes = Array(line.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            offset += n
        }
    }
}
