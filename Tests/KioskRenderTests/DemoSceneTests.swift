import KioskCore
import KioskRender
import XCTest

final class DemoSceneTests: XCTestCase {
    private let scene = DemoScene()

    func testDrawsBackgroundAndBrightTimeText() throws {
        let image = TestImage(width: 640, height: 480)
        try scene.draw(into: image.buffer, frame: 0, wallClock: .afternoon)

        var black = 0
        for y in 0..<480 { for x in 0..<640 where image.rgb(x, y) == (0, 0, 0) { black += 1 } }
        XCTAssertEqual(black, 0, "the gradient background covers every pixel")

        let band = scene.layout(for: image.size).timeBand
        var bright = 0
        for y in band.y..<band.maxY { for x in 0..<640 where image.rgb(x, y).r > 200 && image.rgb(x, y).b > 200 { bright += 1 } }
        XCTAssertGreaterThan(bright, 2000, "the time is drawn as large light text")
    }

    func testTimeRegionAloneChangesWithTheClock() throws {
        let a = TestImage(width: 640, height: 480), b = TestImage(width: 640, height: 480)
        try scene.draw(into: a.buffer, frame: 5, wallClock: .morning)
        try scene.draw(into: b.buffer, frame: 5, wallClock: .afternoon)

        let band = scene.layout(for: a.size).timeBand
        func diff(_ rows: Range<Int>) -> ImageDiff { a.diff(b, rows: rows) }
        XCTAssertGreaterThan(diff(band.y..<band.maxY).differingPixels, 500)
        XCTAssertTrue(diff(0..<band.y).matches, "above the time nothing depends on the clock")
        XCTAssertTrue(diff(band.maxY..<480).matches, "below the time the date is the same, so nothing changes")
    }

    func testBarMovesByStepEachFrame() throws {
        let size = Size(width: 640, height: 480)
        let n = 10
        let columnsN = try barColumns(frame: n, size: size)
        let columnsNext = try barColumns(frame: n + 1, size: size)
        let layout = scene.layout(for: size)

        XCTAssertEqual(columnsN.count, layout.barWidth)
        XCTAssertEqual(columnsN.first, scene.barOffset(frame: n, width: 640))
        XCTAssertEqual(columnsNext, columnsN.map { $0 + scene.barStep })
    }

    func testBarWrapsAtTheRightEdge() throws {
        let size = Size(width: 640, height: 480)
        let layout = scene.layout(for: size)
        // 640 / 8 = 80 frames per lap; frame 75 starts 40 px before the right edge.
        let columns = try barColumns(frame: 75, size: size)
        XCTAssertEqual(columns.count, layout.barWidth)
        XCTAssertEqual(Set(columns), Set(Array(600..<640) + Array(0..<(layout.barWidth - 40))))
        XCTAssertEqual(scene.barOffset(frame: 80, width: 640), 0)
        XCTAssertEqual(scene.barOffset(frame: -1, width: 640), 632)
        XCTAssertEqual(scene.barOffset(frame: Int.max, width: 640), (Int.max % 640) * 8 % 640)
    }

    func testSameInputsDrawTheSamePixels() throws {
        let a = TestImage(width: 800, height: 480), b = TestImage(width: 800, height: 480, stride: 800 * 4 + 256)
        let mode = DisplayMode(width: 800, height: 480, refreshMilliHz: 60_000)
        try scene.draw(into: a.buffer, frame: 42, wallClock: .morning, mode: mode)
        try scene.draw(into: b.buffer, frame: 42, wallClock: .morning, mode: mode)
        let diff = a.diff(b)
        XCTAssertTrue(diff.matches, "\(diff)")
    }

    func testCaptionChangesWithFrameNumber() throws {
        let a = TestImage(width: 640, height: 480), b = TestImage(width: 640, height: 480)
        try scene.draw(into: a.buffer, frame: 1, wallClock: .morning)
        try scene.draw(into: b.buffer, frame: 7, wallClock: .morning)
        let band = scene.layout(for: a.size).captionBand
        let diff = a.diff(b, rows: band.y..<band.maxY)
        XCTAssertGreaterThan(diff.differingPixels, 0)
    }

    func testDrawsAtEveryCommonModeSize() throws {
        for (w, h) in [(640, 480), (800, 480), (480, 800), (1024, 768), (1280, 720), (1920, 1080), (64, 48)] {
            let image = TestImage(width: w, height: h)
            try scene.draw(into: image.buffer, frame: 3, wallClock: .afternoon)
            let band = scene.layout(for: image.size).timeBand
            var bright = 0
            for y in max(band.y, 0)..<min(band.maxY, h) { for x in 0..<w where image.rgb(x, y).r > 180 { bright += 1 } }
            XCTAssertGreaterThan(bright, 0, "\(w)x\(h): time text drawn")
            // The time never runs off a narrow screen: the first and last columns stay background.
            for y in max(band.y, 0)..<min(band.maxY, h) {
                XCTAssertLessThan(image.rgb(0, y).r, 100, "\(w)x\(h): text clipped at the left edge")
                XCTAssertLessThan(image.rgb(w - 1, y).r, 100, "\(w)x\(h): text clipped at the right edge")
            }
        }
    }

    func testDrawsConcurrentlyOnSeveralThreads() async throws {
        let reference = TestImage(width: 320, height: 240)
        try scene.draw(into: reference.buffer, frame: 9, wallClock: .afternoon)

        // Each task draws into its own memory, as render workers do; only the finished bytes come back.
        let scene = self.scene
        let results = await withTaskGroup(of: (Int, Result<[UInt8], RenderError>).self) { group in
            for i in 0..<4 {
                group.addTask {
                    let image = TestImage(width: 320, height: 240)
                    do {
                        try scene.draw(into: image.buffer, frame: 9, wallClock: .afternoon)
                        return (i, .success(image.array))
                    } catch {
                        return (i, .failure(error as? RenderError ?? RenderError("\(error)")))
                    }
                }
            }
            var all: [Int: Result<[UInt8], RenderError>] = [:]
            for await (i, result) in group { all[i] = result }
            return all
        }
        XCTAssertEqual(results.count, 4)
        for (i, result) in results {
            let pixels = try result.get()
            let diff = compareImages(pixels, reference.array, size: reference.size,
                                     strideA: reference.stride, strideB: reference.stride, tolerance: 0)
            XCTAssertTrue(diff.matches, "worker \(i): \(diff)")
        }
    }

    func testCaptionAndClockText() {
        XCTAssertEqual(DemoScene.caption(frame: 123, size: Size(width: 1024, height: 768),
                                         mode: DisplayMode(width: 1024, height: 768, refreshMilliHz: 60_000)),
                       "frame 123 · 1024x768@60")
        XCTAssertEqual(DemoScene.caption(frame: 0, size: Size(width: 640, height: 480), mode: nil), "frame 0 · 640x480")
        XCTAssertEqual(DemoScene.Clock.morning.timeText, "07:08:09")
        XCTAssertEqual(DemoScene.Clock.afternoon.timeText, "12:34:56")
        let now = DemoScene.Clock.current()
        XCTAssertTrue((0..<24).contains(now.hours) && (0..<60).contains(now.minutes) && (0...60).contains(now.seconds))
        XCTAssertFalse(now.date.isEmpty)
    }

    /// The columns of the bar's middle row that show the bar colour.
    private func barColumns(frame: Int, size: Size) throws -> [Int] {
        let image = TestImage(width: size.width, height: size.height)
        try scene.draw(into: image.buffer, frame: frame, wallClock: .morning)
        let track = scene.layout(for: size).barTrack
        let y = track.y + track.height / 2
        return (0..<size.width).filter { x in
            let p = image.rgb(x, y)
            return p.r > 200 && p.g > 100 && p.b < 100
        }
    }
}
