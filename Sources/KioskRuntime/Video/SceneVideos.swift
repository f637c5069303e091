import Foundation
import KioskCore
import KioskScene

/// The video widgets of the scene on screen: one `VideoSlot` each, opened when its page is first shown, playing
/// while its page is the current one and paused otherwise (a paused clip decodes nothing and costs no frames). Players come from `maker`, which
/// `kioskd` sets to GStreamer; without one, video widgets show their placeholder and report an error. Each widget
/// opens only sources whose scheme `schemes` allows, and tries failed network items again with its own copy of
/// `retryBackoff`. Main thread, with the stage.
final class SceneVideos {
    private unowned let engine: LayerEngine
    var maker: (any VideoPlayerMaking)?
    let schemes: VideoSchemes
    /// The backoff each widget starts from (tests give it a known random source).
    var retryBackoff = RetryBackoff()
    private(set) var slots: [VideoSlot] = []
    var onReport: ((VideoEventReport) -> Void)?
    /// A `duration: video` page's video played its playlist once: the page named advances.
    var onPageVideoFinished: ((_ page: String) -> Void)?
    private var advancingPages: Set<String> = []

    /// The cached copy of a clip named by an `https` or `http` URL, or nil while none is whole (the stage's
    /// `builderRemoteAssets`).
    var cachedFile: ((String) -> String?)?

    init(engine: LayerEngine, schemes: VideoSchemes) {
        self.engine = engine
        self.schemes = schemes
    }

    /// The sync group's timeline and the group time a video on `page` has its position zero at (the stage's:
    /// the group clock's zero, or the page's turn in the group's page loop); nil outside a sync group.
    var groupTiming: ((_ page: String) -> (timeline: GroupTimeline, anchor: Int64)?)?

    /// The wall clock playlist items' `when:` rules are read on, and whether it is synchronized: the stage's.
    var clock = VideoSlot.SlotClock(now: { Date() }, synchronized: { true })

    /// Takes over the video widgets of a newly adopted scene; the previous scene's players are closed.
    func adopt(_ nodes: [WidgetNode], scene: Scene, currentPage: String) {
        closeAll()
        let zone = scene.scheduleZone()
        advancingPages = Set(scene.pages.filter(\.advancesAfterVideo).map(\.name))
        var firstOnPage: Set<String> = []
        for node in nodes {
            guard case .video(let properties) = node.widget.content else { continue }
            let slot = VideoSlot(node: node, properties: properties, engine: engine, maker: maker, schemes: schemes,
                                 retryBackoff: retryBackoff, playing: node.page == currentPage,
                                 timeZone: zone, unsynchronized: scene.unsynchronized,
                                 clock: VideoSlot.SlotClock(now: { [weak self] in self?.clock.now() ?? Date() },
                                                            synchronized: { [weak self] in self?.clock.synchronized() ?? true }))
            slot.onReport = { [weak self] report in self?.onReport?(report) }
            slot.cachedFile = { [weak self] url in self?.cachedFile?(url) }
            let page = node.page
            slot.groupTiming = { [weak self] in self?.groupTiming?(page) }
            // The first video of a `duration: video` page decides when the page is done.
            if advancingPages.contains(node.page), firstOnPage.insert(node.page).inserted {
                let page = node.page
                slot.onPlaylistFinished = { [weak self] in self?.onPageVideoFinished?(page) }
            }
            slots.append(slot)
            // Without a maker (none set yet, or GStreamer unavailable, which `kioskd` logs once) the widget shows
            // its placeholder and `video.state` says why.
            if node.page == currentPage, maker != nil { slot.start() }
        }
    }

    /// Plays the current page's videos and pauses the rest. A `duration: video` page starts its videos over.
    func pageShown(_ page: String) {
        for slot in slots where maker != nil {
            if slot.node.page == page {
                if advancingPages.contains(page) { slot.restart() } else { slot.play() }
            } else {
                slot.pause()
            }
        }
    }

    /// The clock became synchronized or lost it: widgets waiting for a playlist item read the rules again.
    func clockChanged() {
        for slot in slots where maker != nil { slot.clockChanged() }
    }

    /// A copy of `url` is whole in the asset cache: the widgets waiting for it play it.
    func assetArrived(_ url: String) {
        for slot in slots where maker != nil { slot.assetArrived(url) }
    }

    /// After `widget.set`: a video whose widget changed size opens its clip again at the new size; the others show
    /// their last frame again over the placeholder the change rendered.
    func widgetsChanged() {
        for slot in slots { slot.widgetChanged() }
    }

    func closeAll() {
        for slot in slots { slot.close() }
        slots = []
    }

    func slot(id: String) -> VideoSlot? {
        slots.first { $0.node.id == id }
    }

    /// Counters summed over every video widget: `video_frames_decoded`, `_shown`, `_dropped`.
    var totals: (decoded: Int, shown: Int, dropped: Int) {
        slots.reduce((0, 0, 0)) { sum, slot in
            let c = slot.counts
            return (sum.0 + c.decoded, sum.1 + c.shown, sum.2 + c.dropped)
        }
    }
}

/// The video widgets as the control socket drives them (`video.play`, `video.pause`, `video.seek`, `video.state`,
/// `video.load`). A nil `id` means the scene's only video widget (an error when there are none or several).
/// Main thread.
public protocol VideoControlling: AnyObject {
    func playVideo(id: String?) throws(StageError)
    func pauseVideo(id: String?) throws(StageError)
    func seekVideo(id: String?, to position: Duration) throws(StageError)
    /// `{id, source, index, state, position, duration, frames_decoded, frames_shown, frames_dropped, error, retry_in,
    /// waiting, schedule_wakeups}`: `retry_in` is the seconds until a failed network item is tried again, or null;
    /// `waiting` why no playlist item plays now and when one will (state `waiting`), or null; `schedule_wakeups` how
    /// many times the widget read its items' rules again while waiting.
    func videoState(id: String?) throws(StageError) -> [String: PropertyValue]
    /// Refuses (`invalid_argument`) a source whose scheme `video.allowed_schemes` does not allow, naming the scheme
    /// and the list; `loadVideo` checks it too, and `video.load` checks it before anything else is done.
    func checkVideoSource(_ source: String) throws(StageError)
    func loadVideo(id: String?, source: String) throws(StageError)
    /// Counters over every video widget of the scene.
    var videoFrameTotals: (decoded: Int, shown: Int, dropped: Int) { get }
}
