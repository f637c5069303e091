import Foundation
import KioskTestSupport
import XCTest

/// The allow-list with a real non-root peer: kioskd (root) makes the socket reachable for `nobody`, and only
/// `--control-allow-uid` lets nobody's requests through. Root is always allowed, so the peer must not be root.
final class ControlPeerPolicyTests: XCTestCase {
    private func nobodyPing(_ daemon: ControlledKioskd, groups: [String] = ["--clear-groups"]) throws -> (status: Int32, text: String) {
        // The socket is 0660 in a 0700 directory: open both up so the kernel lets nobody connect, and only
        // kioskd's SO_PEERCRED check decides.
        XCTAssertEqual(chmod(daemon.directory, 0o755), 0)
        XCTAssertEqual(chmod(daemon.socketPath, 0o666), 0)
        // The refusal may come before the request is written: a failed write is fine, what arrives is the answer.
        let client = """
        import socket, sys
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(5)
        s.connect(sys.argv[1])
        try:
            s.sendall(b'{"id":1,"cmd":"ping"}\\n')
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        data = b''
        while True:
            try:
                chunk = s.recv(4096)
            except ConnectionResetError:  # closed with our request unread: a reset after the reply
                break
            if not chunk:
                break
            data += chunk
        sys.stdout.write(data.decode())
        """
        return try runTool("/usr/bin/setpriv", ["--reuid=nobody", "--regid=nogroup"] + groups + ["--", "/usr/bin/python3", "-c", client,
                                                                                                  daemon.socketPath])
    }

    /// A peer whose supplementary groups include an allowed gid is served (SO_PEERGROUPS): members of the
    /// socket's group need not have it as their primary group.
    func testSupplementaryGroupInTheAllowListIsServed() throws {
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--control-allow-gid", "4321"])
        defer { daemon.stop() }
        let member = try nobodyPing(daemon, groups: ["--groups=4321"])
        XCTAssertEqual(member.text, #"{"id":1,"ok":true,"result":{"pong":true}}"# + "\n")
        let stranger = try nobodyPing(daemon, groups: ["--groups=4322"])
        XCTAssertTrue(stranger.text.contains("permission_denied"), stranger.text)
    }

    func testPeerOutsideTheAllowListGetsOneErrorLineAndIsClosed() throws {
        XCTAssertEqual(getuid(), 0, "the daemon runs as root, so the peer must be someone else")
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60"])
        defer { daemon.stop() }
        let output = try nobodyPing(daemon)
        XCTAssertEqual(output.status, 0, output.text)
        let lines = output.text.split(separator: "\n")
        XCTAssertEqual(lines.count, 1, output.text)
        let reply = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        XCTAssertEqual((reply["error"] as? [String: Any])?["code"] as? String, "permission_denied")
        XCTAssertTrue(((reply["error"] as? [String: Any])?["message"] as? String ?? "").contains("uid 65534"), output.text)
        XCTAssertEqual(try daemon.result("ping")["pong"] as? Bool, true, "root is still served")
    }

    func testAllowedUIDIsServed() throws {
        let daemon = try ControlledKioskd(["run", "--backend", "headless", "--mode", "320x240@60", "--control-allow-uid", "65534"])
        defer { daemon.stop() }
        let output = try nobodyPing(daemon)
        XCTAssertEqual(output.status, 0, output.text)
        XCTAssertEqual(output.text, #"{"id":1,"ok":true,"result":{"pong":true}}"# + "\n")
    }
}
