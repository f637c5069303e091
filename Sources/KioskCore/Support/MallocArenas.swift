internal import CKioskSys
import Glibc

/// How many malloc arenas the daemon's threads share. glibc gives threads arenas of their own, up to eight per
/// processor, each keeping a heap it seldom returns; Pango alone starts a short-lived thread for every font match.
/// Two arenas, shared by the main loop, the render workers and those helpers, hold the same objects in 0.2 to
/// 0.3 MB less private memory at startup (docs/design.md, "The process"); an arena is locked only for the moment
/// of an allocation. A limit the environment sets (`MALLOC_ARENA_MAX`, or `glibc.malloc.arena_max` in
/// `GLIBC_TUNABLES`) is left as it is.
public enum MallocArenas {
    public static let limit: Int32 = 2

    /// Whether the environment (`variable` reads it) leaves the limit to the daemon.
    public static func isUnset(_ variable: (String) -> String?) -> Bool {
        if variable("MALLOC_ARENA_MAX") != nil { return false }
        if let tunables = variable("GLIBC_TUNABLES"), tunables.contains("malloc.arena_max") { return false }
        return true
    }

    /// Call before the first thread is started; returns whether the limit was set. `set` stands in for glibc's `mallopt`.
    @discardableResult
    public static func limitUnlessConfigured(
        _ variable: (String) -> String? = { getenv($0).map { String(cString: $0) } },
        set: ((Int32) -> Bool)? = nil
    ) -> Bool {
        guard isUnset(variable) else { return false }
        return set.map { $0(limit) } ?? (mallopt(M_ARENA_MAX, limit) == 1)
    }
}
