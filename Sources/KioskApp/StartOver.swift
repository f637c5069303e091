import Glibc
import KioskCore
import KioskService

/// kioskd started over in the same process: `execv` of its own binary with the same arguments, so a configuration
/// fixed while the diagnostic page shows it is read and applied as at boot (the display, the board, the outputs,
/// the sockets, the fleet), and systemd sees the same main process: no restart, no start limit. A configuration
/// names nearly everything a run holds; starting over is the one way to apply all of it, where tearing each part
/// down and building it again would be a second start-up path to keep in step with the first.
///
/// The sockets systemd passed are passed on as systemd passed them (LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES, the
/// same descriptors from 3 on), so clients keep connecting across the start; every other descriptor is closed by
/// the exec. Ignored signals (SIGPIPE) and the blocked mask carry over; the new start routes signals itself.
/// Main thread.
enum StartOver {
    /// Does not return when it works. Call it with the run stopped at a frame boundary and its engine stopped.
    /// - Throws: `SystemError` naming what failed (a descriptor that cannot be kept open, the exec) and the errno;
    ///   kioskd then exits non-zero, and systemd restarts it.
    static func exec(passing activation: SocketActivation) throws {
        let passed = Set(activation.sockets.map(\.fd))
        try closeOnExec(except: passed)
        for fd in passed {
            let flags = fcntl(fd, F_GETFD)
            guard flags >= 0, fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) == 0 else {
                throw SystemError("starting over: keeping the socket from systemd (fd \(fd)) open", errno: errno)
            }
        }
        if !activation.sockets.isEmpty {
            setenv("LISTEN_PID", String(getpid()), 1)
            setenv("LISTEN_FDS", String(activation.sockets.count), 1)
            setenv("LISTEN_FDNAMES", activation.sockets.map(\.name).joined(separator: ":"), 1)
        }
        let arguments = CommandLine.arguments
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        execv("/proc/self/exe", &argv)
        let code = errno
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { unsetenv(name) }
        throw SystemError("starting over: exec /proc/self/exe", errno: code)
    }

    /// Marks every open descriptor above stderr close-on-exec but `kept`, as listed in /proc/self/fd: libraries
    /// open some without O_CLOEXEC, and one left open would hold its device (DRM master) from the new start.
    private static func closeOnExec(except kept: Set<Int32>) throws {
        guard let directory = opendir("/proc/self/fd") else {
            throw SystemError("starting over: listing /proc/self/fd", errno: errno)
        }
        defer { closedir(directory) }
        let own = dirfd(directory)
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            guard let fd = Int32(name), fd > 2, fd != own, !kept.contains(fd) else { continue }
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
    }
}
