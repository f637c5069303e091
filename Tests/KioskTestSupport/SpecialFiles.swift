import Dispatch
import Foundation
import KioskCore
#if canImport(Glibc)
import Glibc
#endif

/// Paths that are not regular files, made in a fresh folder under /tmp (a local file system: a 9p share cannot hold
/// a FIFO or a bound socket): a FIFO nobody writes to, a folder, a bound Unix socket and a symbolic link to the FIFO,
/// plus /dev/null as a device node. Each comes with the words a refusal names it by. The folder is removed in
/// `deinit`. Main thread of a test.
public final class SpecialFiles {
    public let folder: String
    public let fifo: String
    public let directory: String
    public let socket: String
    public let linkToFIFO: String
    public let deviceNode = "/dev/null"
    private let socketDescriptor: Int32

    public init(_ name: String) throws {
        folder = "/tmp/kioskd-special-\(name)-\(getpid())"
        try? FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        fifo = folder + "/x.png"
        guard mkfifo(fifo, 0o644) == 0 else { throw ControlTestError("mkfifo \(fifo): errno \(errno)") }
        directory = folder + "/folder.png"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        linkToFIFO = folder + "/link.png"
        guard symlink(fifo, linkToFIFO) == 0 else { throw ControlTestError("symlink \(linkToFIFO): errno \(errno)") }
        socket = folder + "/socket.png"
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ControlTestError("socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socket.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, listen(fd, 1) == 0 else {
            close(fd)
            throw ControlTestError("bind \(socket): errno \(errno)")
        }
        socketDescriptor = fd
    }

    deinit {
        close(socketDescriptor)
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Every path with the words its refusal must use ("a FIFO", "a directory", ...).
    public var all: [(path: String, kind: String)] {
        [(fifo, "a FIFO"), (directory, "a directory"), (socket, "a socket"), (deviceNode, "a character device"),
         (linkToFIFO, "a FIFO")]
    }
}

/// Runs `body` on a thread of its own and waits for it at most `deadline`: its result, or nil when it had not
/// returned by then. A call that blocks (an open of a FIFO) then fails its test instead of hanging it; the blocked
/// thread is left behind.
public func returnsPromptly<T: Sendable>(within deadline: Duration = .seconds(5), _ body: @escaping @Sendable () -> T) -> T? {
    let result = Lock<T?>(nil), done = DispatchSemaphore(value: 0)
    let thread = Thread {
        let value = body()
        result.withLock { $0 = value }
        done.signal()
    }
    thread.start()
    let nanoseconds = deadline.components.seconds * 1_000_000_000 + deadline.components.attoseconds / 1_000_000_000
    guard done.wait(timeout: .now() + .nanoseconds(Int(nanoseconds))) == .success else { return nil }
    return result.withLock { $0 }
}
