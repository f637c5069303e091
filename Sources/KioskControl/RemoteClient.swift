#if canImport(Glibc)
import Glibc
#endif
import Logging

extension ControlConnection {
    /// A client that is not on the socket: requests arriving another way (MQTT) run through the same
    /// `CommandRegistry` in its name. It has no descriptor and takes no events; its replies go wherever the
    /// caller's `deliver` sends them. Lives on the loop thread.
    public static func remote(number: Int) -> ControlConnection {
        ControlConnection(fd: -1, number: number, peer: PeerCredentials(pid: getpid(), uid: getuid(), gid: getgid()),
                          maxLineBytes: LineFramer.defaultMaxLineBytes, maxQueuedBytes: 0, logger: .init(label: "kioskd.control"),
                          onClose: { _ in })
    }
}
