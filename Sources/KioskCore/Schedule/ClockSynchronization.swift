internal import CKioskSys
import Glibc

/// Whether the wall clock can be trusted: synchronized by NTP. At boot a board without an RTC starts in 1970 or at
/// the last shutdown's time until NTP steps the clock; schedules must not follow such a clock (see
/// `PageSchedule.Unsynchronized`). A source is read on the main thread, quickly (a syscall, a stat on /run); the
/// closure is `Sendable` so a source is a plain value. Any thread.
public struct ClockSynchronization: Sendable {
    /// Whether the clock is synchronized now.
    public let isSynchronized: @Sendable () -> Bool
    /// What it reads, for the log.
    public let description: String

    public init(description: String, isSynchronized: @escaping @Sendable () -> Bool) {
        self.description = description
        self.isSynchronized = isSynchronized
    }

    /// systemd-timesyncd's flag: it creates the file once it has synchronized the clock.
    public static let timesyncFlag = "/run/systemd/timesync/synchronized"

    /// The kernel's NTP state (`adjtimex`: not `STA_UNSYNC`; chrony, ntpd and timesyncd all clear it once they set
    /// the clock) or, failing that, `flagFile` exists (timesyncd, which on some kernels leaves `STA_UNSYNC` set
    /// when it only steps the clock). Under systemd's `ProtectClock=yes` the seccomp filter refuses `adjtimex` even to
    /// read, with EPERM: then only the flag file speaks, which the description says (kioskd.service does without it,
    /// refusing only the calls that set the clock).
    public static func system(flagFile: String = timesyncFlag) -> ClockSynchronization {
        let probe = kiosk_clock_unsynchronized(), error = errno
        let description = probe != -1 ? "adjtimex or \(flagFile)" : "\(flagFile) only: adjtimex: \(String(cString: strerror(error)))"
        return ClockSynchronization(description: description) {
            kiosk_clock_unsynchronized() == 0 || access(flagFile, F_OK) == 0
        }
    }

    /// Only `path`'s existence, as timesyncd's flag: for tests, which cannot set the kernel's state.
    public static func flagFile(_ path: String) -> ClockSynchronization {
        ClockSynchronization(description: path) { access(path, F_OK) == 0 }
    }
}
