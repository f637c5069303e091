import Foundation
import KioskCore
import KioskRuntime
import KioskTestSupport
import XCTest

/// `SceneFileWatcher` on a real epoll loop and a temporary folder, changed the ways editors and deploy tools change
/// files. Waits turn the real loop until the expected callbacks arrived (`Poll`, with a generous deadline), and, to
/// show that nothing more comes, for a few debounce periods after.
final class SceneFileWatcherTests: XCTestCase {
    private var directory = ""
    private var scenePath: String { directory + "/scene.yaml" }

    override func setUpWithError() throws {
        var template = Array((NSTemporaryDirectory() + "/kiosk-watcher-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", errno: errno) }
        directory = String(cString: made)
        try write("pages: []\n", to: scenePath)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: Helpers

    private func write(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SystemError("open \(path)", errno: errno) }
        defer { close(fd) }
        let written = text.withCString { Glibc.write(fd, $0, strlen($0)) }
        guard written == text.utf8.count else { throw SystemError("write \(path)", errno: errno) }
    }

    /// Runs `loop` for `window`, the callbacks it makes counted by the caller: a window to show that nothing more
    /// comes (no event announces that nothing happened), a few debounce periods long.
    private func runQuiet(_ loop: MainLoop, for window: Duration) {
        let end = ContinuousClock.now + window
        while ContinuousClock.now < end { loop.runOnce(timeout: .milliseconds(20)) }
    }

    private func makeWatcher(_ loop: MainLoop, debounce: Duration = .milliseconds(150), _ onChange: @escaping () -> Void) throws -> SceneFileWatcher {
        try SceneFileWatcher(path: scenePath, loop: loop, debounce: debounce, onChange: onChange)
    }

    // MARK: Changes

    func testWritingTheFileInPlaceCallsBackOnce() throws {
        let loop = try MainLoop.epoll()
        var calls = 0
        let watcher = try makeWatcher(loop) { calls += 1 }
        XCTAssertEqual(watcher.directory, directory)
        XCTAssertEqual(watcher.fileName, "scene.yaml")

        let start = ContinuousClock.now
        try write("pages: [] # edited\n", to: scenePath)
        try Poll.until("a callback after an in-place write", turning: loop) { calls == 1 }
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(150), "fired before the debounce passed")
        runQuiet(loop, for: .milliseconds(450))
        XCTAssertEqual(calls, 1)
        XCTAssertGreaterThanOrEqual(watcher.changeEvents, 1)
    }

    func testAtomicReplaceByRenameCallsBackOnce() throws {
        let loop = try MainLoop.epoll()
        var calls = 0
        var contentsSeen: [String] = []
        let watcher = try makeWatcher(loop) {
            calls += 1
            contentsSeen.append((try? String(contentsOfFile: self.scenePath, encoding: .utf8)) ?? "")
        }

        let temporary = directory + "/.scene.yaml.tmp"
        try write("pages: [] # replaced\n", to: temporary)
        XCTAssertEqual(rename(temporary, scenePath), 0)
        try Poll.until("a callback after rename over the file", turning: loop) { calls == 1 }
        runQuiet(loop, for: .milliseconds(450))
        XCTAssertEqual(calls, 1, "the temporary file's own events are not the scene's")
        XCTAssertEqual(contentsSeen, ["pages: [] # replaced\n"])
        XCTAssertTrue(watcher.isWatching)
    }

    func testDeleteThenRecreateCallsBackForEach() throws {
        let loop = try MainLoop.epoll()
        var existedAtCall: [Bool] = []
        let watcher = try makeWatcher(loop) { existedAtCall.append(access(self.scenePath, F_OK) == 0) }

        XCTAssertEqual(unlink(scenePath), 0)
        try Poll.until("a callback after delete", turning: loop) { existedAtCall.count == 1 }
        XCTAssertEqual(existedAtCall, [false])

        try write("pages: [] # back\n", to: scenePath)
        try Poll.until("a callback after the file came back", turning: loop) { existedAtCall.count == 2 }
        runQuiet(loop, for: .milliseconds(450))
        XCTAssertEqual(existedAtCall, [false, true])
        XCTAssertTrue(watcher.isWatching)
    }

    func testABurstOfTwentyWritesCallsBackOnce() throws {
        let loop = try MainLoop.epoll()
        var calls = 0
        let watcher = try makeWatcher(loop, debounce: .milliseconds(400)) { calls += 1 }

        let start = ContinuousClock.now
        for i in 0..<20 {
            try write("pages: [] # \(i)\n", to: scenePath)
            loop.runOnce(timeout: .zero)  // the watcher reads the burst over several wake-ups
        }
        let burst = ContinuousClock.now - start
        XCTAssertLessThan(burst, .milliseconds(400), "the burst took longer than the debounce; the test proves nothing")
        try Poll.until("a callback after the burst", turning: loop) { calls == 1 }
        runQuiet(loop, for: .milliseconds(1200))
        XCTAssertEqual(calls, 1)
        XCTAssertGreaterThanOrEqual(watcher.changeEvents, 20, "each write is at least one close-write")
    }

    func testChangesToOtherFilesInTheFolderAreIgnored() throws {
        let loop = try MainLoop.epoll()
        var calls = 0
        let watcher = try makeWatcher(loop, debounce: .milliseconds(50)) { calls += 1 }

        try write("other", to: directory + "/other.yaml")
        try write("prefix", to: directory + "/scene.yaml.bak")
        try write("suffix", to: directory + "/xscene.yaml")
        XCTAssertEqual(rename(directory + "/other.yaml", directory + "/renamed.yaml"), 0)
        XCTAssertEqual(unlink(directory + "/renamed.yaml"), 0)
        XCTAssertEqual(mkdir(directory + "/images", 0o755), 0)
        runQuiet(loop, for: .milliseconds(400))
        XCTAssertEqual(calls, 0)
        XCTAssertEqual(watcher.changeEvents, 0)

        // The watch is alive: the file itself still counts.
        try write("pages: []\n", to: scenePath)
        try Poll.until("a callback after the scene file was written", turning: loop) { calls == 1 }
    }

    func testCancelStopsCallbacksEvenWithAChangePending() throws {
        let loop = try MainLoop.epoll()
        var calls = 0
        let watcher = try makeWatcher(loop, debounce: .milliseconds(50)) { calls += 1 }

        try write("pages: [] # pending\n", to: scenePath)
        try Poll.until("the change to be read", turning: loop) { watcher.changeEvents > 0 }
        watcher.cancel()
        XCTAssertFalse(watcher.isWatching)
        XCTAssertNil(loop.nextTimerDeadline, "the debounce timer is gone")

        try write("pages: [] # after\n", to: scenePath)
        runQuiet(loop, for: .milliseconds(300))
        XCTAssertEqual(calls, 0)
        XCTAssertEqual(loop.wakeups, 1, "only the wake-up that read the first change")
        watcher.cancel()  // idempotent
    }

    func testReleasingTheWatcherStopsCallbacks() throws {
        let loop = try MainLoop.epoll()
        var calls = 0
        var watcher: SceneFileWatcher? = try makeWatcher(loop, debounce: .milliseconds(20)) { calls += 1 }
        weak var released = watcher
        watcher = nil
        XCTAssertNil(released, "the loop must not keep the watcher alive")

        try write("pages: []\n", to: scenePath)
        runQuiet(loop, for: .milliseconds(200))
        XCTAssertEqual(calls, 0)
        XCTAssertEqual(loop.wakeups, 0, "the inotify source was removed")
    }

    func testQueueOverflowCountsAsAChange() throws {
        let limit = (try? String(contentsOfFile: "/proc/sys/fs/inotify/max_queued_events", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 16384
        let loop = try MainLoop.epoll()
        var calls = 0
        let watcher = try makeWatcher(loop, debounce: .milliseconds(20)) { calls += 1 }

        // Two queued events (create, close-write) per file of another name: past the queue's limit, the kernel
        // drops events and queues IN_Q_OVERFLOW instead. None of these events is the scene's.
        for i in 0..<(limit / 2 + 16) {
            let fd = open(directory + "/f\(i)", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
            XCTAssertGreaterThanOrEqual(fd, 0)
            close(fd)
        }
        // An overflow must reload: events for the scene may have been lost.
        try Poll.until("a callback after the queue overflowed", turning: loop) { calls == 1 }
        XCTAssertEqual(watcher.changeEvents, 1)
    }

    // MARK: Errors

    func testMissingFolderThrowsNamingThePathAndErrno() throws {
        let loop = try MainLoop.epoll()
        let path = directory + "/missing/scene.yaml"
        XCTAssertThrowsError(try SceneFileWatcher(path: path, loop: loop) {}) { error in
            guard let error = error as? SystemError else { return XCTFail("not a SystemError: \(error)") }
            XCTAssertEqual(error.errno, ENOENT)
            XCTAssertTrue(error.description.contains(directory + "/missing"), error.description)
            XCTAssertTrue(error.description.contains("ENOENT"), error.description)
        }
        XCTAssertThrowsError(try SceneFileWatcher(path: directory + "/", loop: loop) {}) { error in
            XCTAssertEqual((error as? SystemError)?.errno, EINVAL, "\(error)")
        }
    }

    func testRelativePathWatchesTheWorkingFolder() throws {
        let loop = try MainLoop.epoll()
        let watcher = try SceneFileWatcher(path: "scene.yaml", loop: loop) {}
        XCTAssertEqual(watcher.directory, ".")
        XCTAssertEqual(watcher.fileName, "scene.yaml")
        let rooted = try SceneFileWatcher(path: "/scene.yaml", loop: loop) {}
        XCTAssertEqual(rooted.directory, "/")
    }
}
