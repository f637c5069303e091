import Foundation
import KioskCore
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import KioskRuntime
import KioskScene
import KioskTestSupport
import XCTest

/// Issue 16's VM check: a 20-page signage loop at 1024x768 on vkms for three cycles, with fades between timed
/// pages and the page ranges purging and rendering ahead. `kioskd run --capture-pages` reads back through writeback
/// the frame at every page change of the output an `outputs:` section names, once its fade has ended, into the
/// output's own folder; each capture must be the new page whole: equal, pixel
/// for pixel, to the headless render of that page alone, complete.
final class PageLoopWritebackDRMTests: XCTestCase {
    static let pageCount = 20
    static let cycles = 3
    /// Short pages keep the run near a minute under TCG; each still gives the next page time to render ahead.
    static let pageSeconds = 1.0

    override func setUpWithError() throws { try requireDRMDevice() }

    static func pageName(_ i: Int) -> String { String(format: "p%02d", i) }

    /// Twenty pages that cannot be mistaken for one another: a colour of their own over the whole screen and their
    /// number in large type. `timed`: each page lasts `pageSeconds` and fades in; else pages change only on request.
    static func scene(timed: Bool) -> String {
        var yaml = """
            size: display
            background: black
            font: {family: DejaVu Sans, size: 48}
            pages:

            """
        for i in 1...pageCount {
            // Hues around the circle, alternately light and dark, so neighbours differ strongly.
            let hue = Double(i - 1) / Double(pageCount)
            let (r, g, b) = rgb(hue: hue, value: i % 2 == 0 ? 0.55 : 0.9)
            let colour = String(format: "#%02x%02x%02x", r, g, b)
            yaml += "  - name: \(pageName(i))\n"
            if timed { yaml += "    duration: \(pageSeconds)\n    transition: {type: fade, duration: 0.3}\n" }
            yaml += """
                    widgets:
                      - {type: rect, x: 0, y: 0, width: 100%, height: 100%, background: "\(colour)"}
                      - {type: text, text: "\(i)", align: center, x: 10%, y: 15%, width: 80%, height: 70%, foreground: white, font: {size: 320, weight: heavy}}

                """
        }
        return yaml
    }

    private static func rgb(hue: Double, value: Double) -> (Int, Int, Int) {
        let h = hue * 6, f = h - h.rounded(.down), v = value
        let p = 0.0, q = v * (1 - f), t = v * f
        let (r, g, b): (Double, Double, Double)
        switch Int(h) % 6 {
        case 0: (r, g, b) = (v, t, p)
        case 1: (r, g, b) = (q, v, p)
        case 2: (r, g, b) = (p, v, t)
        case 3: (r, g, b) = (p, q, v)
        case 4: (r, g, b) = (t, p, v)
        default: (r, g, b) = (v, p, q)
        }
        return (Int(r * 255), Int(g * 255), Int(b * 255))
    }

    func testEveryPageChangeCapturedByWritebackShowsTheNewPageWhole() throws {
        let dir = try KioskdProcess.scratchDirectory("page-loop-writeback")
        let timedScene = dir.appendingPathComponent("loop.yaml"), stillScene = dir.appendingPathComponent("pages.yaml")
        try Data(Self.scene(timed: true).utf8).write(to: timedScene)
        try Data(Self.scene(timed: false).utf8).write(to: stillScene)
        // Sixty PNGs go to the VM's own tmpfs rather than the shared build folder (9p).
        var template = Array("/tmp/kioskd-pages-XXXXXX".utf8CString)
        let captures = URL(fileURLWithPath: String(cString: try XCTUnwrap(mkdtemp(&template))))
        defer { try? FileManager.default.removeItem(at: captures) }
        let changes = Self.pageCount * Self.cycles + 1

        let started = Date()
        // The output named in an `outputs:` section, as every output comes up: its captures go to its own folder.
        let config = dir.appendingPathComponent("kioskd.yaml")
        try "outputs:\n  - {connector: Virtual-1, mode: 1024x768}\n".write(to: config, atomically: true, encoding: .utf8)
        let daemon = try ControlledKioskd(["run", "--config", config.path, "--scene", timedScene.path, "--capture-pages", captures.path],
                                          readyTimeout: 120)
        let outputCaptures = captures.appendingPathComponent("Virtual-1")
        // The first change is asked for: a cut to the last page, which is outside the range and so purged; it renders
        // first, then shows whole. The loop goes on from there.
        _ = try daemon.result("page.show", #"{"name": "\#(Self.pageName(Self.pageCount))", "transition": {"kind": "cut"}}"#)
        // Under load the loop may change page once or twice before the request lands: the sequence checked starts
        // at the first capture of the last page (a timed change reaches it only after a whole cycle), and every
        // capture, those before it too, must be its page whole.
        var files: [String] = []
        func firstLast() -> Int? { files.firstIndex { Self.pageIndex(inFileName: $0) == Self.pageCount } }
        try Poll.until("\(changes) page captures from the requested change on in \(captures.path)",
                          timeout: Double(changes) * Self.pageSeconds * 4 + 60, interval: 0.2) {
            files = ((try? FileManager.default.contentsOfDirectory(atPath: outputCaptures.path)) ?? []).filter { $0.hasSuffix(".png") }.sorted()
            return firstLast().map { files.count - $0 >= changes } ?? false || !daemon.isRunning
        }
        let stats = try daemon.result("stats")
        let run = daemon.stop()
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertFalse(run.stderr.contains("--capture-pages") || run.stderr.contains("writeback capture still running"),
                       "no capture was lost, merged or cut short: \(run.stderr)")
        XCTAssertFalse(run.stderr.contains("render failed"), run.stderr)
        XCTAssertEqual(stats["renders_failed"] as? Int, 0)
        print("page loop: \(files.count) captures in \(String(format: "%.1f", Date().timeIntervalSince(started))) s; surfaces \(stats["surfaces"] ?? "-"), page_ready_ms \(stats["page_ready_ms"] ?? "-"), stale_renders_dropped \(stats["stale_renders_dropped"] ?? "-"), missed_vblanks \(stats["missed_vblanks"] ?? "-")")
        let start = try XCTUnwrap(firstLast(), "no capture of \(Self.pageName(Self.pageCount)): \(files)")
        XCTAssertLessThanOrEqual(start, 3, "the request came within a few timed changes: \(files)")
        XCTAssertGreaterThanOrEqual(files.count - start, changes)
        XCTAssertEqual(files.map { Int($0.prefix(4)) }, files.indices.map { $0 + 1 }, "every change captured, numbered in order")
        // From the requested change on: the last page, then the loop from the first page on, three cycles.
        let sequence = Array(files.dropFirst(start).prefix(changes)).map(Self.pageIndex(inFileName:))
        XCTAssertEqual(sequence, (0..<changes).map { ($0 + Self.pageCount - 1) % Self.pageCount + 1 })
        // Before the request, the timed loop: each page the one after the page before it. Where it starts depends
        // on when the scene first appeared (the first page shown at start is no change; a change that settled
        // before the scene appeared is reported when it does).
        let before = Array(files.prefix(start)).map(Self.pageIndex(inFileName:))
        XCTAssertEqual(Array(before.dropFirst()), before.dropLast().map { $0 % Self.pageCount + 1 },
                       "before the request, the timed loop in order: \(before)")
        // The range purged pages that had left it and rendered them again ahead of their turn.
        let surfaces = try XCTUnwrap(stats["surfaces"] as? [String: Any])
        XCTAssertGreaterThan(surfaces["purges"] as? Int ?? 0, Self.pageCount, "\(surfaces)")
        XCTAssertGreaterThan(surfaces["rerenders"] as? Int ?? 0, Self.pageCount, "\(surfaces)")

        // Each page's headless render goes through the same PNG encoder as the captures, so equal pixels make equal
        // files: comparing the files is quick even in an emulated debug build, and only a mismatch is decoded.
        let references = try headlessPages(scene: stillScene, into: captures)
        var matched = 0
        let compared = Array(files.prefix(start + changes))
        for name in compared {
            let page = Self.pageIndex(inFileName: name)
            let capturePath = outputCaptures.appendingPathComponent(name).path, referencePath = try XCTUnwrap(references[page])
            if FileManager.default.contentsEqual(atPath: capturePath, andPath: referencePath) {
                matched += 1
                continue
            }
            let capture = try readPNG(path: capturePath), reference = try readPNG(path: referencePath)
            XCTAssertEqual(capture.size, reference.size)
            let diff = compareImages(capture.pixels, reference.pixels, size: capture.size, strideA: capture.stride,
                                     strideB: reference.stride, tolerance: 0)
            XCTAssertEqual(diff.differingPixels, 0, "\(name): the capture is not page \(page) whole: \(diff)")
            if diff.differingPixels == 0 { matched += 1 } else {
                // Kept for a look: the capture and what it should have been.
                try? FileManager.default.copyItem(atPath: capturePath, toPath: dir.appendingPathComponent(name).path)
                try? FileManager.default.copyItem(atPath: referencePath, toPath: dir.appendingPathComponent("expected-\(name)").path)
            }
        }
        print("page loop: \(matched) of \(compared.count) captures equal their page's headless render")
        XCTAssertEqual(matched, compared.count)
        // The comparison can fail: neighbouring pages differ almost everywhere.
        let one = try readPNG(path: try XCTUnwrap(references[1])), two = try readPNG(path: try XCTUnwrap(references[2]))
        XCTAssertGreaterThan(compareImages(one.pixels, two.pixels, size: one.size, strideA: one.stride, strideB: two.stride,
                                           tolerance: 8).differingPixels, one.size.width * one.size.height / 2)
    }

    private static func pageIndex(inFileName name: String) -> Int {
        Int(name.dropFirst("0000-p".count).prefix(2)) ?? 0
    }

    /// Each page's headless render at 1024x768, whole, as a PNG in `folder`: the page is shown with a cut and read
    /// from the shadow buffer once nothing in the tree is left to render and its frame has flipped.
    private func headlessPages(scene: URL, into folder: URL) throws -> [Int: String] {
        let loop = try MainLoop.epoll()
        let backend = try HeadlessBackend(mode: OutputMode(width: 1024, height: 768, refreshMilliHz: 60_000))
        let engine = try LayerEngine(loop: loop, backend: backend, compositor: try ShadowCompositor(size: backend.info.mode.size),
                                     pool: RenderQueuePool(strategy: .roundRobin))
        let stage = try SceneStage(engine: engine, path: scene.path)
        try engine.start()
        defer { engine.stop() }
        var pages: [Int: String] = [:]
        for i in 1...Self.pageCount {
            if i > 1 { try stage.showPage(Self.pageName(i), transition: .cut) }
            let flipped = engine.stats.framesFlipped
            let settled = loop.spin(seconds: 60) {
                engine.stats.framesFlipped > flipped && !engine.isRendering(engine.rootLayer) && !engine.isAnimating
                    && !engine.hasPendingWork && engine.screenshot() != nil
            }
            XCTAssertTrue(settled, "page \(i) never settled headless: \(engine.stats)")
            let path = folder.appendingPathComponent("headless-\(Self.pageName(i)).png").path
            try writePNG(xrgb8888: try XCTUnwrap(engine.screenshot()), size: backend.info.mode.size,
                         stride: backend.info.mode.size.width * 4, to: path)
            pages[i] = path
        }
        return pages
    }
}
