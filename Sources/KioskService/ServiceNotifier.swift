import Glibc
import KioskCore
import Logging

/// Tells systemd how kioskd is doing (sd_notify(3)'s protocol, `SystemdProtocol`): `READY=1` once the scene is on
/// screen, one-line `STATUS=`, `RELOADING=1` … `READY=1` around a reload, `STOPPING=1` on the way out, and `WATCHDOG=1` pings.
///
/// Outside systemd (no `NOTIFY_SOCKET`) every call is a no-op. A status line is sent only when it changed.
/// Lives on the main thread.
public final class ServiceNotifier {
    /// True when systemd (or a test standing in for it) listens: `NOTIFY_SOCKET` is set.
    public let isSupervised: Bool
    /// Where messages go; nil outside systemd, or when `NOTIFY_SOCKET` is malformed (said once, at start).
    private let address: SystemdProtocol.NotifyAddress?
    private var lastStatus: String?
    private let logger = Logger(label: "kioskd.service")

    public init() {
        let value = SystemdProtocol.environment("NOTIFY_SOCKET")
        isSupervised = value != nil
        do {
            address = try value.map { try SystemdProtocol.NotifyAddress($0) }
        } catch {
            address = nil
            logger.error("\(error); systemd is not told of readiness, status or watchdog pings")
        }
    }

    /// `READY=1` with a status line: the first complete frame is on screen, or a reload finished.
    public func ready(status: String) {
        let line = Self.oneLine(status)
        lastStatus = line
        send("READY=1\nSTATUS=\(line)")
    }

    /// `STATUS=`: scene, page, fps and missed vblanks, or what kioskd waits for. Sent only when it changed.
    public func status(_ text: String) {
        let line = Self.oneLine(text)
        guard line != lastStatus else { return }
        lastStatus = line
        send("STATUS=\(line)")
    }

    /// `RELOADING=1` (with `MONOTONIC_USEC`, which `Type=notify-reload` requires); `ready` ends the reload.
    public func reloading(status: String) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let microseconds = Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
        let line = Self.oneLine(status)
        lastStatus = line
        send("RELOADING=1\nMONOTONIC_USEC=\(microseconds)\nSTATUS=\(line)")
    }

    /// `STOPPING=1`: SIGTERM arrived; kioskd stops at the next frame boundary.
    public func stopping(status: String) {
        let line = Self.oneLine(status)
        lastStatus = line
        send("STOPPING=1\nSTATUS=\(line)")
    }

    /// `WATCHDOG=1`: the frame path is healthy.
    public func watchdogPing() { send("WATCHDOG=1") }

    private func send(_ state: String) {
        guard let address else { return }
        do {
            try SystemdProtocol.notify(state, to: address)
        } catch {
            logger.warning("\(state.split(separator: "\n").first ?? ""): \(error)")
        }
    }

    /// STATUS= must be a single line: newlines would start new assignments.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
