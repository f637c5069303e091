import Foundation
@testable import KioskApp
import KioskCore
import KioskRender
import KioskScene
import KioskTestSupport
import XCTest

extension KioskHarness {
    /// A kiosk of headless outputs from an `outputs:` section, as `kioskd run --backend headless --config FILE` builds
    /// it: `files` (name → text) are written into the test's folder first, and an output's `scene` names one of them
    /// (an output without one shows the run's scene, `scene`, mirrored).
    convenience init(_ name: String, scene: String = greetingScene, files: [String: String], outputs: [KioskConfig.Output],
                     manualClock: Bool = true, configure: (inout ResolvedRun, URL) throws -> Void = { _, _ in }) throws {
        try self.init(name, scene: scene, manualClock: manualClock) { run, directory in
            for (file, text) in files {
                try text.write(to: directory.appendingPathComponent(file), atomically: true, encoding: .utf8)
            }
            run.configuration.settings.outputs = outputs.map { output in
                var output = output
                output.scene = output.scene.map { directory.appendingPathComponent($0).path }
                return output
            }
            try configure(&run, directory)
        }
    }

    /// The output named `name` (in any case); throws, naming the outputs, when there is none.
    func output(_ name: String) throws -> DrivenOutput {
        try kiosk.outputs.output(named: name)
    }

    /// Turns the loop until `condition` holds, as `waitUntil` does; on the manual clock, each turn that finds it not
    /// yet true also moves the clock by `frame` (17 ms: a frame at 60 Hz), so that vblanks, debounces and other
    /// timers come as they would on a real clock. On the real loop, the same as `waitUntil`.
    func waitUntil(_ what: @autoclosure () -> String, timeout: Double = 10, advancing frame: Duration,
                   _ condition: () throws -> Bool) throws {
        try waitUntil(what(), timeout: timeout) {
            if try condition() { return true }
            if poller != nil { advance(by: frame) }
            return false
        }
    }

    /// The frame `output` shows once every render has landed and nothing is under way: its screen is then what the
    /// scene looks like, whole. Turns the loop (moving a manual clock a frame at a time) until it is.
    func settledScreen(of output: DrivenOutput, timeout: Double = 20) throws -> Screen {
        var screen: Screen?
        try waitUntil("\(output.name) to show its scene whole", timeout: timeout, advancing: .milliseconds(17)) {
            let engine = output.engine
            guard !engine.isRendering(engine.rootLayer), engine.rendersInFlight == 0, !engine.hasPendingWork,
                  let size = engine.backend?.info.mode.size, let pixels = engine.screenshot() else { return false }
            screen = Screen(pixels: pixels, width: size.width, height: size.height)
            return true
        }
        return try XCTUnwrap(screen)
    }

    /// A kiosk built by `build` as kioskd is under systemd: `NOTIFY_SOCKET` names `notify` while it is built (the
    /// service reads it then) and is unset again before this returns, so nothing started later inherits it.
    static func supervised(by notify: NotifySocket, _ build: () throws -> KioskHarness) throws -> KioskHarness {
        setenv("NOTIFY_SOCKET", notify.path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        return try build()
    }

    /// Makes `signal` reach the kiosk as `kill` would reach kioskd: on the manual clock through the manual poller,
    /// on the real loop directed at this thread (which blocks it and reads it through the loop's signalfd; another
    /// thread of the test process, which does not block it, would take its default action).
    func deliver(signal: Int32) {
        if let poller {
            poller.deliverSignal(signal)
        } else {
            pthread_kill(pthread_self(), signal)
        }
    }
}

/// An output's screen as `LayerEngine.screenshot()` gives it: XRGB8888 rows, stride = width * 4. A plain value.
struct Screen {
    let pixels: [UInt8]
    let width: Int
    let height: Int

    init(pixels: [UInt8], width: Int, height: Int) {
        self.pixels = pixels
        self.width = width
        self.height = height
    }

    /// The PNG at `path`, as a `screenshot` command writes it.
    init(png path: String) throws {
        let png = try readPNG(path: path)
        self.init(pixels: png.pixels, width: png.size.width, height: png.size.height)
    }

    /// 0xRRGGBB at (x, y).
    func rgb(x: Int, y: Int) -> UInt32 {
        let o = (y * width + x) * 4
        return UInt32(pixels[o + 2]) << 16 | UInt32(pixels[o + 1]) << 8 | UInt32(pixels[o])
    }

    /// Pixels in the rectangle (x0, y0, x1, y1), end exclusive, that satisfy `test`.
    func countPixels(in box: (Int, Int, Int, Int), where test: (UInt32) -> Bool) -> Int {
        var n = 0
        for y in box.1..<box.3 { for x in box.0..<box.2 where test(rgb(x: x, y: y)) { n += 1 } }
        return n
    }
}

extension HarnessClient {
    /// The result of `command` with `arguments` (JSON) as the kiosk answers it on the socket; fails the test on an
    /// error reply.
    func result(_ command: String, _ arguments: String = "{}", file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let reply = try request(#"{"id": 1, "cmd": "\#(command)", "args": \#(arguments)}"#)
        return try XCTUnwrap(reply["result"] as? [String: Any], "\(command): \(reply)", file: file, line: line)
    }

    /// The error of `command` with `arguments` (JSON) as the kiosk answers it on the socket: its code and message;
    /// fails the test on a result.
    func error(_ command: String, _ arguments: String = "{}", file: StaticString = #filePath, line: UInt = #line) throws -> (code: String?, message: String) {
        let reply = try request(#"{"id": 1, "cmd": "\#(command)", "args": \#(arguments)}"#)
        let error = try XCTUnwrap(reply["error"] as? [String: Any], "\(command): \(reply)", file: file, line: line)
        return (error["code"] as? String, error["message"] as? String ?? "")
    }
}
