import Foundation
import Glibc

/// A child process of a bench scenario, its standard output discarded (it would break `--json`) and its standard
/// error too unless asked to keep it. Either waited for (`wait`) or stopped (`stop`: SIGTERM, then SIGKILL), and
/// reaped.
final class Spawned {
    let pid: pid_t
    private let label: String

    init(label: String, executable: String, arguments: [String], keepingStderr: Bool = false) throws {
        self.label = label
        var pid: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        if !keepingStderr { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let status = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard status == 0 else { throw BenchError("\(label): cannot spawn \(executable): \(String(cString: strerror(status)))") }
        self.pid = pid
    }

    /// Waits for the child to end; throws unless it exited with status 0.
    func wait() throws {
        var wstatus: Int32 = 0
        while waitpid(pid, &wstatus, 0) < 0 {
            guard errno == EINTR else { throw BenchError("\(label): waitpid for pid \(pid) failed: \(String(cString: strerror(errno)))") }
        }
        // WIFEXITED and WEXITSTATUS are macros Swift cannot import.
        guard wstatus & 0x7f == 0, (wstatus >> 8) & 0xff == 0 else {
            throw BenchError("\(label): kioskd run ended with wait status \(wstatus)")
        }
    }

    func stop() {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<100 {
            if waitpid(pid, &status, WNOHANG) == pid { return }
            usleep(50_000)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
    }
}
