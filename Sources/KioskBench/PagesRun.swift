import Foundation
import KioskCore
import KioskDisplay
import KioskRender
import KioskRuntime

/// Not product code: `kioskd bench`'s pages scenario (issue 16). A signage loop of 20 pages at 1920x1080, each a
/// full-screen gradient with a headline, changing every `pageSeconds` with a fade, against the same file with one
/// page:
/// - each file runs as its own `kioskd run` child (see `StartupRun`) for one round of the loop; the child reports its
///   peak RSS, its surface memory and its missed vblanks;
/// - in this process, on the real epoll loop with render workers, the 20-page loop runs for a round: how many frames
///   were missed around the timed changes, and how many changes waited for their page; then `page.show` to a
///   purged page, timed until it is shown whole (`page_ready_ms`).
/// Runs on the calling thread.
public enum PagesRun {
    public struct Figures: Codable, Sendable {
        public var mode: String
        public var pages: Int
        public var pageSeconds: Double
        public var onePage: StartupRun.Figures
        public var twentyPages: StartupRun.Figures
        public var onePageSurfaceBytes: Int?
        public var twentyPagesSurfaceBytes: Int?
        public var peakRssDifferenceKib: Int?
        public var targetDifferenceKib: Int
        public var targetMet: Bool?
        /// In this process: page changes timed by the loop, frames missed (vblanks without a flip) within 100 ms of
        /// them, and changes that had to wait for their page. The vblanks in those windows, and the same two figures
        /// for the rest of the run, tell a miss the change caused from one the host's load caused anywhere.
        public var timedChanges: Int?
        public var framesMissedAtChanges: Int?
        public var vblanksAtChanges: Int?
        public var framesMissedElsewhere: Int?
        public var vblanksElsewhere: Int?
        public var changesThatWaited: Int?
        /// `page.show` to a purged page until it was shown whole.
        public var pageShowToPurgedMs: Double?

        enum CodingKeys: String, CodingKey {
            case mode, pages, pageSeconds = "page_seconds", onePage = "one_page", twentyPages = "twenty_pages"
            case onePageSurfaceBytes = "one_page_surface_bytes", twentyPagesSurfaceBytes = "twenty_pages_surface_bytes"
            case peakRssDifferenceKib = "peak_rss_difference_kib", targetDifferenceKib = "target_difference_kib"
            case targetMet = "target_met", timedChanges = "timed_changes", framesMissedAtChanges = "frames_missed_at_changes"
            case vblanksAtChanges = "vblanks_at_changes", framesMissedElsewhere = "frames_missed_elsewhere"
            case vblanksElsewhere = "vblanks_elsewhere"
            case changesThatWaited = "changes_that_waited", pageShowToPurgedMs = "page_show_to_purged_ms"
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(mode, forKey: .mode)
            try c.encode(pages, forKey: .pages)
            try c.encode(pageSeconds, forKey: .pageSeconds)
            try c.encode(onePage, forKey: .onePage)
            try c.encode(twentyPages, forKey: .twentyPages)
            try c.encode(onePageSurfaceBytes, forKey: .onePageSurfaceBytes)
            try c.encode(twentyPagesSurfaceBytes, forKey: .twentyPagesSurfaceBytes)
            try c.encode(peakRssDifferenceKib, forKey: .peakRssDifferenceKib)
            try c.encode(targetDifferenceKib, forKey: .targetDifferenceKib)
            try c.encode(targetMet, forKey: .targetMet)
            try c.encode(timedChanges, forKey: .timedChanges)
            try c.encode(framesMissedAtChanges, forKey: .framesMissedAtChanges)
            try c.encode(vblanksAtChanges, forKey: .vblanksAtChanges)
            try c.encode(framesMissedElsewhere, forKey: .framesMissedElsewhere)
            try c.encode(vblanksElsewhere, forKey: .vblanksElsewhere)
            try c.encode(changesThatWaited, forKey: .changesThatWaited)
            try c.encode(pageShowToPurgedMs, forKey: .pageShowToPurgedMs)
        }
    }

    /// The loop's file: `count` pages of `seconds` each, fading into one another.
    public static func scene(pages count: Int, seconds: Double) -> String {
        let colours = ["#ff7a18", "#af002d", "#319197", "#2f6feb", "#1b2440", "#3cb371", "#daa520", "#6a5acd"]
        let pages = (0..<count).map { i in
            """
              - name: page\(i)
                duration: \(seconds)
                transition: {type: fade, duration: 0.3}
                widgets:
                  - type: rect
                    x: 0
                    y: 0
                    width: 100%
                    height: 100%
                    background: {gradient: ["\(colours[i % colours.count])", "\(colours[(i + 3) % colours.count])"], angle: \(i * 17 % 180)}
                  - {type: text, text: "Headline of page \(i + 1)", x: 96, y: 96, width: 1400, height: 160, font: {size: 96, weight: bold}}
            """
        }
        return "background: black\npages:\n" + pages.joined(separator: "\n") + "\n"
    }

    public static func measure(pageSeconds: Double = 1) throws -> Figures {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-bench-pages-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let mode = OutputMode(width: 1920, height: 1080, refreshMilliHz: 60_000)
        let count = 20
        let round = Double(count) * pageSeconds
        // A round of the loop and a little more, at 60 Hz.
        let frames = Int((round + 1) * 60)
        func child(_ pages: Int) throws -> (StartupRun.Figures, Int?) {
            let path = directory.appendingPathComponent("pages-\(pages).yaml")
            try Data(scene(pages: pages, seconds: pageSeconds).utf8).write(to: path)
            let stats = try StartupRun.run(label: "pages \(pages)", mode: "1920x1080", frames: frames, extra: ["--scene", path.path])
            let surfaces = (stats["surfaces"] as? [String: Any])?["total_bytes"] as? Int
            return (StartupRun.Figures(mode: "1920x1080", stats: stats), surfaces)
        }
        let (one, oneSurfaces) = try child(1)
        let (twenty, twentySurfaces) = try child(count)
        let difference = twenty.peakRssKib.flatMap { t in one.peakRssKib.map { t - $0 } }
        let target = 24 * 1024

        let loopPath = directory.appendingPathComponent("pages-\(count).yaml").path
        let inProcess = try runLoop(path: loopPath, mode: mode, seconds: round + pageSeconds / 2)
        return Figures(mode: mode.description, pages: count, pageSeconds: pageSeconds, onePage: one, twentyPages: twenty,
                       onePageSurfaceBytes: oneSurfaces, twentyPagesSurfaceBytes: twentySurfaces,
                       peakRssDifferenceKib: difference, targetDifferenceKib: target, targetMet: difference.map { $0 <= target },
                       timedChanges: inProcess.changes, framesMissedAtChanges: inProcess.missed,
                       vblanksAtChanges: inProcess.vblanks, framesMissedElsewhere: inProcess.missedElsewhere,
                       vblanksElsewhere: inProcess.vblanksElsewhere,
                       changesThatWaited: inProcess.waited, pageShowToPurgedMs: inProcess.showMs)
    }

    /// The loop on the real epoll loop for `seconds` after its first complete frame, then `page.show` to a page
    /// that is purged, until it is shown.
    private static func runLoop(path: String, mode: OutputMode, seconds: Double)
        throws -> (changes: Int, missed: Int, vblanks: Int, missedElsewhere: Int, vblanksElsewhere: Int, waited: Int,
                   showMs: Double?) {
        let loop = try MainLoop.epoll()
        let backend = try HeadlessBackend(mode: mode, bufferCount: 2)
        let engine = try LayerEngine(loop: loop, backend: backend, compositor: try ShadowCompositor(size: mode.size),
                                     pool: RenderQueuePool(strategy: .roundRobin))
        let stage = try SceneStage(engine: engine, path: path)
        var changes: [MonotonicInstant] = []
        var missed = 0, vblanks = 0, missedElsewhere = 0, vblanksElsewhere = 0
        var lastSequence: UInt64?
        var started: MonotonicInstant?
        var phase = 0
        let stageListener = stage.addEventListener { event in
            if case .pageShown = event { changes.append(loop.now) }
        }
        let flipListener = engine.addFlipListener { event in
            defer { lastSequence = event.sequence }
            // Counted from the first complete frame, before page.show: near a change (within 100 ms after one) or not.
            guard started != nil, phase == 1, let last = lastSequence, event.sequence > last else { return }
            let gap = Int(event.sequence - last - 1)
            let now = loop.now
            if changes.contains(where: { now >= $0 && now - $0 <= .milliseconds(100) }) {
                missed += gap
                vblanks += gap + 1
            } else {
                missedElsewhere += gap
                vblanksElsewhere += gap + 1
            }
        }
        // Every frame is a flip, so a missed vblank shows as a gap in the sequence.
        let ticking = Ticking()
        engine.addAnimation(target: ticking) { _, _ in true }
        try engine.start()
        var showStart: MonotonicInstant?
        var showMs: Double?
        var waitedBefore = 0
        let target = "page\(stage.scene.pages.count / 2 + 3)"
        let observer = loop.addObserver(order: ObserverOrder.commit + 1, activities: .beforeWaiting) { _ in
            let now = loop.now
            switch phase {
            case 0:
                guard !engine.isRendering(engine.rootLayer) else { return }
                started = now
                phase = 1
            case 1:
                guard let started, now - started >= .milliseconds(Int64(seconds * 1000)) else { return }
                showStart = now
                waitedBefore = Int(engine.stats.pageReadyMs.count)
                phase = 2
                try? stage.showPage(target, transition: .cut)
            default:
                guard let showStart, stage.currentPage == target, !engine.isRendering(engine.rootLayer),
                      engine.stats.pageReadyMs.count > waitedBefore else { return }
                showMs = (now - showStart).milliseconds
                loop.stop()
            }
        }
        let watchdog = loop.addTimer(after: .milliseconds(Int64(seconds * 1000) + 60_000)) { loop.stop() }
        loop.run()
        watchdog.cancel()
        observer.cancel()
        engine.stop()
        withExtendedLifetime((stage, ticking, stageListener, flipListener)) {}
        guard showMs != nil else { throw BenchError("bench pages: page.show to \(target) was not shown within a minute") }
        // The timed changes before page.show are what the target counts.
        return (max(changes.count - 1, 0), missed, vblanks, missedElsewhere, vblanksElsewhere, waitedBefore, showMs)
    }
}
