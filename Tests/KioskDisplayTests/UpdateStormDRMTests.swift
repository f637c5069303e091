import Foundation
import KioskCore
import KioskDisplay
import KioskRender
import KioskTestSupport
import XCTest

/// The update storm on the real device: a widget whose render takes 150 ms is given new data every 37.5 ms beside
/// a seconds clock; what the CRTC produces (writeback) shows both advancing.
final class UpdateStormDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    /// A solid fill that takes `delay` to draw, on a render worker: a stand-in for a large wrapped text.
    private struct SlowFill: LayerContent {
        var xrgb: UInt32
        var delay: Duration
        var kind: String { "slow" }
        var isOpaque: Bool { true }

        func draw(into surface: LayerSurface, isCancelled: () -> Bool) throws {
            let end = MonotonicInstant.now() + delay
            // The draw's own time (a stand-in for a long render), not a wait.
            while MonotonicInstant.now() < end, !isCancelled() { usleep(1000) }
            let pixel = 0xFF00_0000 | xrgb
            for y in 0..<surface.size.height {
                let row = (surface.bytes + y * surface.stride).bindMemory(to: UInt32.self, capacity: surface.size.width)
                for x in 0..<surface.size.width { row[x] = pixel }
            }
        }
    }

    // Storm values in blue and red marked by green 0x80; clock seconds in green marked by red 0x80.
    private static func storm(_ value: Int) -> UInt32 { 0x00_8000 | UInt32(value & 0xFF) | UInt32(value >> 8 & 0x7F) << 16 }
    private static func clock(_ seconds: Int) -> UInt32 { 0x80_0000 | UInt32(seconds & 0x7F) << 8 }

    func testTheClockKeepsTickingAndTheStormWidgetAdvancesInTheWritebackCapture() throws {
        let drm = try DRMBackend(options: DRMOptions(commit: .atomic))
        let capturer = try WritebackCapturer(backend: drm)
        let loop = try MainLoop.epoll()
        let size = drm.info.mode.size
        let engine = try LayerEngine(loop: loop, backend: drm, compositor: try ShadowCompositor(size: size),
                                     pool: RenderQueuePool(strategy: .roundRobin))
        let renderTime = Duration.milliseconds(150)
        let scene = Layer(frame: Rect(size: size), name: "scene")
        scene.holdsChildrenUntilReady = true
        let storm = Layer(frame: Rect(x: 0, y: 0, width: 256, height: 256), content: SlowFill(xrgb: Self.storm(0), delay: renderTime), name: "storm")
        let clock = Layer(frame: Rect(x: 512, y: 0, width: 64, height: 64), content: SlowFill(xrgb: Self.clock(0), delay: .zero), name: "clock")
        scene.addChild(storm)
        scene.addChild(clock)
        engine.rootLayer.addChild(scene)
        try engine.start()
        defer { engine.stop() }

        var value = 0
        let updates = loop.addTimer(after: renderTime / 4, repeating: renderTime / 4) {
            value += 1
            storm.content = SlowFill(xrgb: Self.storm(value), delay: renderTime)
        }
        var seconds = 0
        let ticks = loop.addTimer(after: .seconds(1), repeating: .seconds(1)) {
            seconds += 1
            clock.content = SlowFill(xrgb: Self.clock(seconds), delay: .zero)
        }
        defer { updates.cancel(); ticks.cancel() }

        /// Captures the next frame that shows clock second `second`, and returns the storm and clock pixels.
        func capture(atSecond second: Int) throws -> (storm: UInt32, clock: UInt32) {
            XCTAssertTrue(loop.spin(seconds: 30) { seconds >= second && clock.renderedSurface?.pixel(x: 0, y: 0) == 0xFF00_0000 | Self.clock(second) },
                          "clock second \(second) was rendered")
            let previous = capturer.lastCapture
            try capturer.captureNextPresent()
            engine.redrawEverything()
            // The capture is the frame of the next present: wait for a new one, and for its flip.
            XCTAssertTrue(loop.spin(seconds: 30) { capturer.lastCapture !== previous && !drm.isFlipPending })
            let pixels = try XCTUnwrap(capturer.lastCapture).waitForPixels()
            func pixel(_ x: Int, _ y: Int) -> UInt32 {
                pixels[(y * size.width + x) * 4..<(y * size.width + x) * 4 + 4].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) } & 0xFF_FFFF
            }
            return (pixel(10, 10), pixel(520, 10))
        }

        let first = try capture(atSecond: 2)
        let second = try capture(atSecond: 4)
        let stats = engine.stats
        print("update storm on DRM: storm values set \(value), frames composed \(stats.framesComposed), flipped \(stats.framesFlipped), renders \(stats.rendersStarted), captures storm \(String(first.storm, radix: 16)) -> \(String(second.storm, radix: 16)), clock \(String(first.clock, radix: 16)) -> \(String(second.clock, radix: 16))")
        XCTAssertGreaterThanOrEqual(first.clock, Self.clock(2), "the clock ticked during the storm")
        XCTAssertGreaterThanOrEqual(second.clock, Self.clock(4), "and kept ticking")
        XCTAssertNotEqual(first.storm & 0x00_8000, 0, "the storm widget showed a value")
        XCTAssertGreaterThan(second.storm & 0x7F_00FF, first.storm & 0x7F_00FF, "the storm widget advanced between captures")
        XCTAssertGreaterThan(stats.framesComposed, 10)
    }
}
