#if canImport(Glibc)
import Glibc
#endif

/// A regular file opened for reading because a request, a scene or a configuration named it: an image, a scene
/// file, a clip. The one way kioskd opens such a path. The path is looked at with stat(2) first, so a device node is
/// never opened (opening one can have effects: a watchdog arms, a tape rewinds); then it is opened
/// `O_RDONLY | O_NONBLOCK | O_CLOEXEC` (`O_NOFOLLOW` when asked), so that a FIFO swapped in between cannot block
/// the open; then fstat(2) on the descriptor decides, so what is read is what was checked. A FIFO, a socket, a
/// device node or a directory is refused naming the path and what it is. `O_NONBLOCK` is cleared once the file is
/// known to be regular (regular files ignore it; the readers that come after expect blocking reads).
///
/// Synchronous file I/O: never on the main loop. The descriptor is owned by this object and closed in `deinit`; a C
/// reader that wants a `FILE *` is given a duplicate. Immutable; any thread (reads here use pread(2) at offsets of
/// their own).
public final class RegularFile: Sendable {
    public let path: String
    public let descriptor: Int32
    /// Size in bytes when opened.
    public let size: Int
    /// Last modification, whole seconds and nanoseconds since the epoch.
    public let modifiedSeconds: Int
    public let modifiedNanoseconds: Int

    /// Opens `path` for reading if it is a regular file. `followLinks` false adds `O_NOFOLLOW`: a symbolic link is
    /// refused as such.
    public init(opening path: String, followLinks: Bool = true) throws(RegularFileError) {
        var info = stat()
        let looked = followLinks ? stat(path, &info) : lstat(path, &info)
        guard looked == 0 else { throw RegularFileError(path: path, reason: Self.reason(errno: errno, step: "stat")) }
        if let kind = FileKind(mode: info.st_mode) { throw RegularFileError(path: path, reason: .notRegular(kind)) }

        let flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | (followLinks ? 0 : O_NOFOLLOW)
        var fd: Int32
        repeat { fd = open(path, flags) } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw RegularFileError(path: path, reason: Self.reason(errno: errno, step: "open")) }
        func fail(_ reason: RegularFileError.Reason) -> RegularFileError {
            close(fd)
            return RegularFileError(path: path, reason: reason)
        }
        guard fstat(fd, &info) == 0 else { throw fail(.system(step: "fstat", errno: errno)) }
        if let kind = FileKind(mode: info.st_mode) { throw fail(.notRegular(kind)) }
        let status = fcntl(fd, F_GETFL)
        guard status >= 0, fcntl(fd, F_SETFL, status & ~O_NONBLOCK) == 0 else {
            throw fail(.system(step: "fcntl", errno: errno))
        }
        self.path = path
        descriptor = fd
        size = Int(info.st_size)
        modifiedSeconds = Int(info.st_mtim.tv_sec)
        modifiedNanoseconds = Int(info.st_mtim.tv_nsec)
    }

    deinit { close(descriptor) }

    /// Up to `count` bytes at `offset`; fewer at the end of the file. Does not move the descriptor's offset.
    public func bytes(at offset: Int, count: Int) throws(RegularFileError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + got, count - got, off_t(offset + got)) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw RegularFileError(path: path, reason: .system(step: "read", errno: errno)) }
            if n == 0 { break }
            got += n
        }
        buffer.removeSubrange(got...)
        return buffer
    }

    /// The whole file when it holds at most `maximumBytes`, else the first `maximumBytes + 1` bytes (the caller
    /// says the file is too large). Reads in chunks, so a small file costs what it holds, and stops at the bound
    /// even if the file grew since it was opened.
    public func contents(maximumBytes: Int) throws(RegularFileError) -> [UInt8] {
        var bytes: [UInt8] = []
        let chunk = 64 * 1024
        while bytes.count <= maximumBytes {
            let next = try self.bytes(at: bytes.count, count: min(chunk, maximumBytes + 1 - bytes.count))
            if next.isEmpty { break }
            bytes.append(contentsOf: next)
        }
        return bytes
    }

    /// A new descriptor for the same open file, positioned at its start, for a C reader that takes ownership of it
    /// (`fdopen` and `fclose`).
    public func duplicateDescriptorAtStart() throws(RegularFileError) -> Int32 {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw RegularFileError(path: path, reason: .system(step: "dup", errno: errno)) }
        guard lseek(copy, 0, SEEK_SET) == 0 else {
            let code = errno
            close(copy)
            throw RegularFileError(path: path, reason: .system(step: "lseek", errno: code))
        }
        return copy
    }

    static func reason(errno code: Int32, step: String) -> RegularFileError.Reason {
        switch code {
        case ENOENT, ENOTDIR: .notFound(errno: code)
        // O_NOFOLLOW on a symbolic link.
        case ELOOP where step == "open": .notRegular(.symbolicLink)
        // open(2) of a socket's path.
        case ENXIO: .notRegular(.socket)
        default: .system(step: step, errno: code)
        }
    }
}

/// What a path is when it is not a regular file, in the words an error message uses. A plain value.
public enum FileKind: String, Sendable, Equatable {
    case directory = "a directory"
    case fifo = "a FIFO"
    case characterDevice = "a character device"
    case blockDevice = "a block device"
    case socket = "a socket"
    case symbolicLink = "a symbolic link"
    case unknown = "not a file kind kioskd knows"

    /// nil for a regular file.
    public init?(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: self = .directory
        case S_IFIFO: self = .fifo
        case S_IFCHR: self = .characterDevice
        case S_IFBLK: self = .blockDevice
        case S_IFSOCK: self = .socket
        case S_IFLNK: self = .symbolicLink
        default: self = .unknown
        }
    }
}

/// Why a path could not be opened as a regular file: it is missing, it is something else, or a system call failed
/// (with its errno). `description` names the path: `'/dev/shm/x.png' is a FIFO, not a regular file`. A plain value.
public struct RegularFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        /// ENOENT, or ENOTDIR (a folder on the way is a file).
        case notFound(errno: Int32)
        case notRegular(FileKind)
        case system(step: String, errno: Int32)
    }

    public let path: String
    public let reason: Reason

    public init(path: String, reason: Reason) {
        self.path = path; self.reason = reason
    }

    /// The sentence after the path: "is a FIFO, not a regular file", "not found: ENOENT (No such file or directory)",
    /// "open: EACCES (Permission denied)".
    public var problem: String {
        switch reason {
        case .notFound(let code): "not found: \(errnoDescription(code))"
        case .notRegular(let kind): "is \(kind.rawValue), not a regular file"
        case .system(let step, let code): "\(step): \(errnoDescription(code))"
        }
    }

    public var description: String {
        switch reason {
        case .notRegular: "'\(path)' \(problem)"
        case .notFound, .system: "'\(path)': \(problem)"
        }
    }
}
