#if canImport(Glibc)
import Glibc
#endif

/// Writes a whole file so that its name shows either nothing, the file that was there, or the complete new one:
/// never a truncated file after a full disk, a crash or a power cut. The bytes go to a new temporary file in the
/// same folder (`O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC`, so no existing file or link is written through), are
/// flushed with fsync(2), and the file is renamed over the name; on any failure the temporary file is removed. What
/// screenshots and page captures are written with.
///
/// Synchronous file I/O: never on the main loop. A plain value; any thread.
public struct AtomicFile: Sendable {
    /// Owner reads and writes, the group (`kioskd` under the service) reads, others nothing.
    public static let groupReadable: mode_t = 0o640

    /// The write(2) the bytes go through: the seam a test fails to stand for a full disk. Returns what write(2)
    /// returns and leaves errno set the same way.
    public typealias WriteCall = @Sendable (_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int

    let writeCall: WriteCall

    public init(writeCall: @escaping WriteCall = { descriptor, bytes in Glibc.write(descriptor, bytes.baseAddress, bytes.count) }) {
        self.writeCall = writeCall
    }

    /// Writes `bytes` to `path` with permissions `mode` (set with fchmod(2), so the umask does not narrow them).
    public func write(_ bytes: [UInt8], to path: String, mode: mode_t = AtomicFile.groupReadable) throws(FileWriteError) {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var temporary = ""
        var fd: Int32 = -1
        // A name no other writer holds: O_EXCL refuses one that exists (a leftover, or a link planted there).
        for _ in 0..<Self.nameAttempts {
            temporary = "\(folder)/.\(name).\(String(UInt32.random(in: .min ... .max), radix: 16)).partial"
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw FileWriteError(path: path, step: "create \(temporary)", errno: errno) }
        func fail(_ step: String, _ code: Int32) -> FileWriteError {
            close(fd)
            unlink(temporary)
            return FileWriteError(path: path, step: step, errno: code)
        }
        guard fchmod(fd, mode) == 0 else { throw fail("fchmod", errno) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { writeCall(fd, UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                throw fail("write", code)
            }
            // A write that takes nothing and reports no error would loop forever.
            guard written > 0 else { throw fail("write", EIO) }
            offset += written
        }
        guard fsync(fd) == 0 else { throw fail("fsync", errno) }
        guard close(fd) == 0 else {
            let code = errno
            unlink(temporary)
            throw FileWriteError(path: path, step: "close", errno: code)
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw FileWriteError(path: path, step: "rename", errno: code)
        }
    }

    /// How many temporary names are tried before giving up (each is 32 random bits: a second try is already rare).
    static let nameAttempts = 8
}

/// Why a file could not be written: the file, the step and the errno:
/// `'/var/lib/kioskd/screenshots/a.png': write: ENOSPC (No space left on device)`. A plain value.
public struct FileWriteError: Error, Sendable, Equatable, CustomStringConvertible {
    public let path: String
    public let step: String
    public let errno: Int32

    public init(path: String, step: String, errno: Int32) {
        self.path = path; self.step = step; self.errno = errno
    }

    public var description: String { "'\(path)': \(step): \(errnoDescription(errno))" }
}
