import KioskCore
import Logging

private let logger = Logger(label: "kioskd.pages")

/// Which pages keep rendered surfaces, the way AsyncDisplayKit's ranges decide which nodes are displayed: the
/// visible page, the pages a timed loop shows next (`memory.preload_pages` of them, once a transition in progress
/// has ended), both pages of that transition, and any further page of the loop that comes up sooner than it can be rendered (twice its last
/// measured render time, or `defaultRenderSeconds` before it was measured, plus 100 ms), so a timed change never
/// waits for its page. A page outside any timed loop (shown by a button or `page.show`) is kept too: it is purged
/// only when the surface budget needs the memory. A pure function; any thread.
enum PageRange {
    struct Page: Equatable {
        var name: String
        /// Seconds shown in a timed loop; nil for a page that does not advance by itself.
        var duration: Double?
    }

    /// Margin added to twice a page's render time: a few frames, for renders slowed by what else runs.
    static let margin = 0.1
    /// What a page that was never measured is assumed to take to render.
    static let defaultRenderSeconds = 0.5

    struct Decision: Equatable {
        var keep: Set<String>
        /// Seconds until a page outside `keep` comes within its render time of being shown: when to decide again.
        var recheckAfter: Double?
    }

    /// - Parameter remaining: seconds left before the current page's timed change (nil when it has none).
    static func decide(_ pages: [Page], current: String, remaining: Double?, preload: Int, transition: [String],
                       renderSeconds: [String: Double]) -> Decision {
        var decision = Decision(keep: Set(transition))
        let timed = Set(pages.filter { $0.duration != nil }.map(\.name))
        for page in pages where !timed.contains(page.name) { decision.keep.insert(page.name) }
        guard let index = pages.firstIndex(where: { $0.name == current }) else { return decision }
        decision.keep.insert(current)
        guard var ahead = remaining else { return decision }
        // Seconds until the page `step` ahead is shown; the loop goes on while each page has a duration.
        for step in 1..<max(pages.count, 1) {
            if step > 1 {
                guard let duration = pages[(index + step - 1) % pages.count].duration else { break }
                ahead += duration
            }
            let page = pages[(index + step) % pages.count]
            let lead = 2 * (renderSeconds[page.name] ?? defaultRenderSeconds) + margin
            // While a transition shows two pages, the next ones wait for its end unless they are needed sooner:
            // three full pages at once would be the peak.
            if (step <= preload && transition.isEmpty) || ahead <= lead {
                decision.keep.insert(page.name)
            } else if !decision.keep.contains(page.name) {
                let after = ahead - lead
                decision.recheckAfter = min(decision.recheckAfter ?? after, after)
            }
        }
        return decision
    }
}

/// Keeps a scene's pages in range: restores (renders ahead) pages that enter it, purges pages that leave it once
/// they are off screen, and measures how long each page takes to render again. Lives on the main thread with the
/// stage that owns it.
final class PageRangeKeeper {
    private unowned let engine: LayerEngine
    /// `memory.preload_pages`.
    var preload: Int
    /// Seconds from a page's restore until nothing in it was left to render, the last time it was restored.
    private(set) var renderSeconds: [String: Double] = [:]
    /// Pages restored and not complete yet, with when their restore began.
    private var restoring: [(name: String, layer: Layer, since: MonotonicInstant)] = []
    private var observer: ObserverHandle?
    private var recheckTimer: TimerHandle?

    init(engine: LayerEngine, preload: Int) {
        self.engine = engine
        self.preload = preload
    }

    deinit {
        observer?.cancel()
        recheckTimer?.cancel()
    }

    /// Brings `layers` (a scene's pages by name) in line with the range around `current`, and decides again when
    /// a page outside it comes within its render time of being shown (by calling `recheck`).
    func update(pages: [PageRange.Page], current: String, remaining: Double?, transition: [String],
                layers: [String: Layer], recheck: @escaping () -> Void) {
        let decision = PageRange.decide(pages, current: current, remaining: remaining, preload: preload,
                                        transition: transition, renderSeconds: renderSeconds)
        let keep = decision.keep
        recheckTimer?.cancel()
        recheckTimer = decision.recheckAfter.map { seconds in
            // At least a millisecond later: by then the page is within its lead and kept, so this never spins.
            engine.loop.addTimer(after: .milliseconds(max(1, Int64((seconds * 1000).rounded(.up))))) { recheck() }
        }
        for (name, layer) in layers {
            engine.registerRangeRoot(layer, name: name)
            if keep.contains(name) {
                guard engine.isPurged(layer) else { continue }
                engine.restoreSurfaces(of: layer)
                restoring.removeAll { $0.layer === layer }
                restoring.append((name, layer, engine.loop.now))
                logger.debug("page \(name): rendered ahead")
            } else if !engine.isPurged(layer), engine.purgeSurfaces(of: layer) {
                restoring.removeAll { $0.layer === layer }
                logger.debug("page \(name): purged")
            }
        }
        watchRestores()
    }

    /// While pages are being restored, checks after each commit whether they are complete, and records how long
    /// it took.
    private func watchRestores() {
        guard !restoring.isEmpty, observer == nil else { return }
        observer = engine.loop.addObserver(order: ObserverOrder.commit + 1, activities: .beforeWaiting) { [weak self] _ in
            self?.checkRestores()
        }
    }

    private func checkRestores() {
        let now = engine.loop.now
        restoring.removeAll { entry in
            guard entry.layer.isAttached, !engine.isPurged(entry.layer) else { return true }
            guard !engine.isRendering(entry.layer) else { return false }
            renderSeconds[entry.name] = (now - entry.since).milliseconds / 1000
            return true
        }
        if restoring.isEmpty {
            observer?.cancel()
            observer = nil
        }
    }
}
