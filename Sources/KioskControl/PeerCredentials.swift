#if canImport(Glibc)
import Glibc
#endif
import KioskCore

/// The process at the other end of a Unix socket, as the kernel reports it (SO_PEERCRED and SO_PEERGROUPS,
/// taken at connect time). A plain value; any thread.
public struct PeerCredentials: Sendable, Hashable, CustomStringConvertible {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32
    /// Supplementary groups: a user added to the socket's group (`usermod -aG kioskd`) has it here, not as `gid`.
    public var groups: [UInt32]

    public init(pid: Int32, uid: UInt32, gid: UInt32, groups: [UInt32] = []) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
        self.groups = groups
    }

    public var description: String { "pid \(pid) uid \(uid) gid \(gid)" }

    /// SO_PEERCRED of a connected socket.
    public static func of(socket fd: Int32) throws -> PeerCredentials {
        // `struct ucred` needs _GNU_SOURCE, which Glibc's Swift module is not built with; this has its layout.
        var raw = (pid: Int32(0), uid: UInt32(0), gid: UInt32(0))
        var length = socklen_t(MemoryLayout.size(ofValue: raw))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &raw, &length) == 0 else {
            throw SystemError("getsockopt(SO_PEERCRED) fd \(fd)", errno: errno)
        }
        return PeerCredentials(pid: raw.pid, uid: raw.uid, gid: raw.gid, groups: try supplementaryGroups(of: fd))
    }

    /// SO_PEERGROUPS (Linux 4.13), which Glibc's Swift module does not name: `SO_PEERGROUPS` in
    /// <asm-generic/socket.h>.
    private static let peerGroupsOption: Int32 = 59

    /// The peer's supplementary groups. The kernel answers ERANGE with the size it needs when the buffer is short.
    static func supplementaryGroups(of fd: Int32) throws -> [UInt32] {
        var groups = [UInt32](repeating: 0, count: 64)
        while true {
            var length = socklen_t(groups.count * MemoryLayout<UInt32>.size)
            let status = groups.withUnsafeMutableBytes { getsockopt(fd, SOL_SOCKET, peerGroupsOption, $0.baseAddress, &length) }
            if status == 0 { return Array(groups.prefix(Int(length) / MemoryLayout<UInt32>.size)) }
            guard errno == ERANGE, Int(length) > groups.count * MemoryLayout<UInt32>.size else {
                throw SystemError("getsockopt(SO_PEERGROUPS) fd \(fd)", errno: errno)
            }
            groups = [UInt32](repeating: 0, count: Int(length) / MemoryLayout<UInt32>.size)
        }
    }
}

/// Who may use the control socket. Root is always allowed; so is the server's own user (the daemon's operator
/// could read its memory anyway). Others need their uid, or their primary or a supplementary group, in the lists.
/// The socket file's mode (0660) and group already keep strangers out; this check also covers a socket handed
/// over by systemd, whose file permissions the daemon does not control. A plain value; any thread.
public struct PeerPolicy: Sendable, Equatable {
    public var allowedUIDs: Set<UInt32>
    public var allowedGIDs: Set<UInt32>
    public var serverUID: UInt32
    /// Off only in tests, which run as root and still need to see a refusal end to end.
    var rootIsAlwaysAllowed = true

    public init(allowedUIDs: Set<UInt32> = [], allowedGIDs: Set<UInt32> = [], serverUID: UInt32 = geteuid()) {
        self.allowedUIDs = allowedUIDs
        self.allowedGIDs = allowedGIDs
        self.serverUID = serverUID
    }

    public func allows(_ peer: PeerCredentials) -> Bool {
        if peer.uid == 0 { return rootIsAlwaysAllowed }
        return peer.uid == serverUID || allowedUIDs.contains(peer.uid) || allowedGIDs.contains(peer.gid)
            || peer.groups.contains(where: allowedGIDs.contains)
    }
}
