import KioskCore
import Logging
#if canImport(Glibc)
import Glibc
#endif

private let logger = Logger(label: "kioskd.scene-watcher")

/// Watches a file and calls `onChange` once the file has settled after a change: the scene file for live reload,
/// /etc/localtime for clocks in the local time zone (`LocalTimeZoneSource`).
///
/// The watch is on the file's folder, not the file: editors and deploy tools replace a file by writing a
/// temporary one and renaming it over the original, or delete it and create it again, and an inotify watch on
/// the file itself would follow the old inode and go quiet. Events are filtered to the file's name: a write that
/// finished (`IN_CLOSE_WRITE`), a file renamed to it (`IN_MOVED_TO`) or away from it (`IN_MOVED_FROM`), created
/// (`IN_CREATE`), deleted (`IN_DELETE`), or with changed permissions or times (`IN_ATTRIB`). A deletion is a change
/// too: the reader finds the file missing, reports it and keeps the scene on screen, and the file's return is a
/// change again. When the kernel's event queue overflowed (`IN_Q_OVERFLOW`), events for the file may have been
/// lost, so that counts as a change as well.
///
/// Changes are debounced: one write is several events (create, close-write; or close-write of the temporary file,
/// moved-to), and a deploy may write several times in a row. The callback runs once, from a timer, when
/// `debounce` has passed without a further event for the file.
///
/// A symbolic link at `path` is watched as a link: a change to the file it points to, in another folder, is not
/// seen; replacing the link is. If the folder itself is deleted or moved, the watch ends (logged) and
/// `isWatching` turns false.
///
/// Lives on the main thread, on the `MainLoop` it was made with; `onChange` runs there, in the loop's timer step.
/// `cancel()` (or releasing the watcher) removes the loop source and the timer and closes the inotify descriptor.
public final class SceneFileWatcher {
    /// The watched file, as given.
    public let path: String
    /// What the file is, naming it in errors and logs: "scene file", "time zone file".
    public let subject: String
    /// The folder the inotify watch is on.
    public let directory: String
    /// The file's name in `directory`, which events are filtered to.
    public let fileName: String
    /// How long the file must stay quiet after an event before `onChange` runs.
    public let debounce: Duration

    private let loop: MainLoop
    private let nameBytes: [UInt8]
    /// The inotify descriptor; nil once cancelled.
    private var fd: Int32?
    private var source: SourceHandle?
    /// The debounce timer, while a change waits to be reported. At most one.
    private var timer: TimerHandle?
    /// The latest event for the file; the timer re-arms until `debounce` has passed since it.
    private var lastChange: MonotonicInstant?
    private var onChange: (() -> Void)?

    /// The directory watch is in place: not cancelled, and the folder was not deleted or moved.
    public private(set) var isWatching = false

    /// Events for the file (or queue overflows) seen so far, before debouncing.
    public private(set) var changeEvents = 0

    private static let watchedEvents = UInt32(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ATTRIB)
        | UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    /// Starts watching `path`'s folder. `onChange` runs on the loop's thread, once per settled burst of changes.
    ///
    /// - Throws: `SystemError` naming the folder or the file and the errno: `scene file /etc/kioskd/scene.yaml:
    ///   inotify_add_watch /etc/kioskd: ENOENT (No such file or directory)` when the folder does not exist,
    ///   `ENOTDIR` when it is not a folder; `EINVAL` for a path that names a folder; `inotify_init1` failures
    ///   (`EMFILE` at the per-user instance limit); `LoopError` from `MainLoop.addSource`.
    public init(path: String, subject: String = "scene file", loop: MainLoop, debounce: Duration = .milliseconds(150),
                onChange: @escaping () -> Void) throws {
        precondition(debounce >= .zero, "SceneFileWatcher: debounce \(debounce) is negative")
        self.path = path
        self.subject = subject
        let slash = path.lastIndex(of: "/")
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let folder = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        guard !name.isEmpty, name != ".", name != ".." else {
            throw SystemError("\(subject) \(path): the path names a folder, not a file", errno: EINVAL)
        }
        self.directory = folder
        self.fileName = name
        self.nameBytes = Array(name.utf8)
        self.debounce = debounce
        self.loop = loop
        self.onChange = onChange

        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw SystemError("\(subject) \(path): inotify_init1", errno: errno) }
        guard inotify_add_watch(fd, folder, Self.watchedEvents) >= 0 else {
            let code = errno
            close(fd)
            throw SystemError("\(subject) \(path): inotify_add_watch \(folder)", errno: code)
        }
        do {
            source = try loop.addSource(fd: fd, events: .readable) { [weak self] events in self?.readEvents(events) }
        } catch {
            close(fd)
            throw error
        }
        self.fd = fd
        isWatching = true
    }

    deinit {
        cancel()
    }

    /// Stops watching: no `onChange` after this, not even for a change already waiting out its debounce. Closes
    /// the inotify descriptor. Idempotent.
    public func cancel() {
        isWatching = false
        onChange = nil
        timer?.cancel()
        timer = nil
        source?.cancel()
        source = nil
        if let fd {
            close(fd)
            self.fd = nil
        }
    }

    // MARK: Events

    /// Reads every queued event: the source is level-triggered, and one wake-up may hold a whole burst.
    private func readEvents(_ events: IOEvents) {
        guard let fd else { return }
        if events.contains(.error) { logger.error("\(subject) \(path): inotify descriptor reported an error") }
        // Aligned for inotify_event, and large enough for at least one event with the longest name (NAME_MAX).
        let capacity = 4096
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: MemoryLayout<inotify_event>.alignment)
        defer { buffer.deallocate() }
        var changes = 0
        while isWatching {
            let count = read(fd, buffer.baseAddress, capacity)
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                if code != EAGAIN { logger.error("\(subject) \(path): reading inotify events: \(errnoDescription(code))") }
                break
            }
            if count == 0 { break }
            changes += parse(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
        }
        if changes > 0 { noteChanges(changes) }
    }

    /// How many of `bytes`, whole events as read(2) returned them, are changes to the file (an overflow counts as
    /// one). Ends the watch when the folder went away.
    private func parse(_ bytes: UnsafeRawBufferPointer) -> Int {
        let headerSize = MemoryLayout<inotify_event>.size
        var changes = 0
        var offset = 0
        while offset + headerSize <= bytes.count {
            let mask = bytes.loadUnaligned(fromByteOffset: offset + MemoryLayout.offset(of: \inotify_event.mask)!, as: UInt32.self)
            let nameLength = Int(bytes.loadUnaligned(fromByteOffset: offset + MemoryLayout.offset(of: \inotify_event.len)!, as: UInt32.self))
            let nameStart = offset + headerSize
            offset = nameStart + nameLength
            guard offset <= bytes.count else { break }
            if mask & UInt32(IN_Q_OVERFLOW) != 0 {
                logger.warning("\(subject) \(path): inotify queue overflowed; treating it as a change")
                changes += 1
                continue
            }
            if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                logger.error("\(subject) \(path): folder \(directory) was deleted or moved; the watch ends")
                endWatch()
                return changes
            }
            if mask & UInt32(IN_IGNORED) != 0 {
                // The kernel dropped the watch (the folder's file system was unmounted).
                logger.error("\(subject) \(path): the watch on \(directory) was removed; the watch ends")
                endWatch()
                return changes
            }
            // The name is NUL-padded to the record's length.
            let name = UnsafeRawBufferPointer(rebasing: bytes[nameStart..<offset])
            let end = name.firstIndex(of: 0) ?? name.count
            if end == nameBytes.count, name[..<end].elementsEqual(nameBytes) {
                changes += 1
            }
        }
        return changes
    }

    private func endWatch() {
        isWatching = false
        source?.cancel()
        source = nil
    }

    // MARK: Debouncing

    private func noteChanges(_ count: Int) {
        changeEvents += count
        lastChange = loop.now
        // One timer at a time: a pending one re-arms itself when it finds a later event.
        if timer == nil { armTimer(at: loop.now + debounce) }
    }

    private func armTimer(at deadline: MonotonicInstant) {
        timer = loop.addTimer(at: deadline) { [weak self] in self?.timerFired() }
    }

    private func timerFired() {
        timer = nil
        guard let lastChange else { return }
        let quietUntil = lastChange + debounce
        if loop.now < quietUntil {
            armTimer(at: quietUntil)
            return
        }
        self.lastChange = nil
        onChange?()
    }
}
