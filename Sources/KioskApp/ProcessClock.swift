import Foundation
import Glibc

/// How long this process has existed, from the kernel's record of its start (`/proc/self/stat`, field 22, in
/// clock ticks since boot) against `CLOCK_BOOTTIME`, the clock that field is counted on. The start is known to one
/// clock tick (10 ms at the usual USER_HZ of 100). Any thread.
enum ProcessClock {
    /// Milliseconds since the process started, or nil when `/proc/self/stat` cannot be read or parsed.
    static func millisecondsSinceStart() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name (which may hold spaces) start with field 3, the state.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = Double(fields[19]) else { return nil }
        let hertz = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard hertz > 0 else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        let nowMs = Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1e6
        return ((nowMs - ticks / hertz * 1000) * 100).rounded() / 100
    }
}
