import KioskCore
import Logging
#if canImport(Glibc)
import Glibc
#endif

private let logger = Logger(label: "kioskd.scene")

/// How a stage's clocks learn that the system's local time zone changed, and how they make the C library use it.
///
/// Clocks without a `timezone` format with localtime_r, which uses the zone glibc loaded once, at its first use:
/// it does not look at /etc/localtime again. tzset(3) does: with TZ unset it re-reads /etc/localtime when the
/// file's inode or mtime changed. So a zone set by `timedatectl set-timezone` (or a deploy that replaces the link)
/// reached clocks only with a restart; `system` watches the file and calls tzset when it changes.
///
/// The watch is inotify on /etc (`SceneFileWatcher`), not a stat(2) of /etc/localtime at each clock tick: the
/// change is seen when it happens rather than up to a second later, and the main thread makes no file-system
/// call once a second (a stat is synchronous I/O, and the loop never blocks). Tools replace /etc/localtime by
/// renaming a new link over it (timedated's atomic symlink, `ln -sf` + `mv -T`), which a watch on the file's inode
/// would miss; the folder's watch sees the rename (`IN_MOVED_TO`), a rewrite in place (`IN_CLOSE_WRITE`), and a
/// deletion and return. What it cannot see is a change to the zone file the link points to (a tzdata upgrade
/// rewriting /usr/share/zoneinfo/Europe/Berlin): the next restart, or the next change of the link, picks that up.
///
/// The values are closures so that tests can inject a zone-change source and a zone loader (a fault-injecting
/// fake whose watch cannot be set up, a temporary file for /etc/localtime). Main thread: `watch` and `reload` run
/// on the loop thread, and `onChange` is called there.
public struct LocalTimeZoneSource {
    /// Starts watching; `onChange` runs on the loop's thread after each change. The watch lasts while the returned
    /// object lives; nil when there is nothing to watch. Throws when the watch cannot be set up.
    public var watch: (_ loop: MainLoop, _ onChange: @escaping () -> Void) throws -> AnyObject?
    /// Makes the local zone the one now configured, for every thread's next localtime_r: tzset(3). glibc's
    /// tzset and localtime_r take the same lock, so this is safe beside render workers formatting times (what is
    /// not safe is setenv of TZ, which kioskd never does).
    public var reload: () -> Void

    public init(watch: @escaping (_ loop: MainLoop, _ onChange: @escaping () -> Void) throws -> AnyObject?,
                reload: @escaping () -> Void) {
        self.watch = watch
        self.reload = reload
    }

    /// How long the file must stay quiet after a change before clocks read it: a rewrite in place is several events.
    static let debounce = Duration.milliseconds(100)

    /// /etc/localtime, unless TZ is set: then the zone is TZ's, tzset never reads /etc/localtime, and nothing is
    /// watched.
    public static var system: LocalTimeZoneSource {
        let file = file("/etc/localtime")
        return LocalTimeZoneSource(watch: { loop, onChange in
            if let tz = getenv("TZ") {
                logger.debug("clocks: TZ=\(String(cString: tz)) sets the local time zone; /etc/localtime is not watched")
                return nil
            }
            return try file.watch(loop, onChange)
        }, reload: file.reload)
    }

    /// The zone file at `path` (its folder watched with inotify), and tzset(3).
    public static func file(_ path: String) -> LocalTimeZoneSource {
        LocalTimeZoneSource(watch: { loop, onChange in
            try SceneFileWatcher(path: path, subject: "time zone file", loop: loop, debounce: debounce, onChange: onChange)
        }, reload: { tzset() })
    }
}
