import Foundation
import KioskCore
import KioskScene
import Logging

private let logger = Logger(label: "kioskd.video")

/// What a video widget reports to the stage, for `video` events. An immutable value; any thread.
public struct VideoEventReport: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        /// An item of the playlist showed its first frame.
        case started
        /// The last item ended and the widget does not loop: it keeps the last frame.
        case ended
        /// The last item ended and playback starts again from the first.
        case looped
        /// An item could not be played: its placeholder is shown and the next item is tried (or, once every item has
        /// failed in a row and one of them is a network item, the playlist again after a backoff delay).
        case error
    }

    /// The widget's id, when it has one.
    public var id: String?
    public var kind: Kind
    /// The item concerned (a path or a URI).
    public var source: String
    /// GStreamer's message, for `error`.
    public var message: String?
}

/// One video widget's playback: its playlist, the player of the current item, the frames it shows on the widget's
/// body layer, and the counters across items. Its `VideoFramePacer` shows each frame at the vblank nearest its due
/// time.
///
/// Failures. A failed item (an error, or no frame within `startTimeout` of opening while playing) shows the
/// placeholder (the body's own content) and the next item is opened at once: one item down never stalls the
/// playlist. When every item has failed in a row (a one-item playlist: its item), what happens depends on what the
/// playlist holds:
/// - a network item (any scheme but `file`) may work later (the network, the server, the stream comes up): the
///   playlist is tried again, from the item after the last failed, after a `RetryBackoff` delay (1 s doubling to
///   60 s, jittered), for as long as it keeps failing; the backoff starts over once an item shows its first frame;
/// - files only would fail again the same way: the widget stays on its placeholder until told to load or play.
/// An item whose scheme `video.allowed_schemes` does not allow is never opened; it fails at once and is not
/// retried.
///
/// Clips by URL. An `https` or `http` item is never streamed: it plays from its copy in the asset cache
/// (`cachedFile`). Until a copy is whole the item is passed over (the next item that can play plays), and when no
/// item can, the widget shows its placeholder and `waiting` names the downloads; the copy's arrival
/// (`assetArrived`) starts it. A new version is opened at the next start of the item, never cut in mid-clip. A copy
/// GStreamer cannot play fails as a broken local file does; it is tried again when a new version arrives, not on
/// the backoff (the same bytes would fail the same way).
///
/// Dayparting. With items that have `when:` rules or a `priority:` (`schedule`), the playlist plays, in order, only
/// the items that may play now (`PlaylistSchedule`, in the scene's time zone, on the stage's wall clock): the rules
/// are read at each item boundary, so an item whose window closes while it plays finishes its clip. When no item
/// may play, the widget shows its placeholder and `waiting` says why and until when; it reads the rules again at
/// their next change (or a minute on, whichever comes first: the wall clock can step), never frame by frame. Main
/// thread, with the stage.
final class VideoSlot {
    let node: WidgetNode
    private(set) var properties: VideoProperties
    private unowned let engine: LayerEngine
    private let maker: (any VideoPlayerMaking)?
    private let schemes: VideoSchemes
    private var backoff: RetryBackoff
    /// The pending try of the playlist after every item failed, and when it comes.
    private var retryTimer: TimerHandle?
    private(set) var retryDue: MonotonicInstant?
    private(set) var player: (any VideoPlayer)?
    /// The frame size the current player was asked for, and the last frame it showed.
    private var requestedSize: Size?
    private var lastSurface: LayerSurface?
    /// Puts the frames on the body layer at their vblanks, across items.
    private lazy var pacer: VideoFramePacer? = node.body.map { body in
        let pacer = VideoFramePacer(engine: engine, layer: body) { [weak self] frame, wasShown in
            guard let self else { return }
            if wasShown {
                framesShown += 1
                lastSurface = frame.surface
            } else {
                framesNotShown += 1
            }
        }
        pacer.onPicked = { [weak self] frame, vblank in
            guard let self, self.groupTimed else { return }
            groupFollower.shown(frame, forVblankAt: vblank)
        }
        return pacer
    }
    /// The sync group's timeline and the group time the playlist's position zero is at (`SceneVideos`); nil outside
    /// a sync group, or while the anchor is not known. A single clip is timed by the group once its duration is
    /// known; a playlist of several once every item's is (`durations`, probed one item at a time), as one clip of
    /// their summed durations (`GroupPlaylist`). A playlist with dayparting rules plays on its decoder's clock: its
    /// items change with each member's wall clock, not the group's.
    var groupTiming: (() -> (timeline: GroupTimeline, anchor: Int64)?)?
    /// Keeps the decoder on the group's clock, and its figures for `video.state`.
    let groupFollower = GroupVideoFollower()
    /// Whether the current clip follows a sync group's clock (its frames are measured against their group times).
    private(set) var groupTimed = false
    /// Each item's duration in nanoseconds, once known (from its player, or a probe), by source.
    private var durations: [String: Int64] = [:]
    /// The item whose duration a paused player of its own is finding out, in a sync group, and when it began.
    private var probe: (source: String, player: any VideoPlayer, began: MonotonicInstant)?
    private var probeTimer: TimerHandle?
    /// Items whose duration could not be found: the playlist plays on its decoder's clock.
    private var unprobed: Set<String> = []
    /// How long a probe waits for a duration.
    static let probeTimeout: Duration = .seconds(5)
    /// In a sync group's playlist, the next item opened ahead and paused (prerolled) once the current one is within
    /// `openAhead` of its end: at the end it is taken over (`open`), sought and played, which brings its first frame
    /// far sooner than opening a pipeline then would, so the last item's last frame is held that much less.
    private var upcoming: (index: Int, file: String, player: any VideoPlayer)?
    static let openAhead: Int64 = 1_500_000_000
    /// Whether the last `open` took over the upcoming player (it then says nothing of starting: see `frameArrived`).
    private var tookUpcoming = false
    /// Whether the current item showed its first frame.
    private var itemStarted = false
    /// Fails an item that shows no frame and no error while playing (GStreamer can stall on a truncated file).
    private var startDeadline: TimerHandle?
    static let startTimeout: Duration = .seconds(10)
    private(set) var index = 0
    /// Items that failed one after the other; the playlist stops once all have.
    private var failuresInARow = 0
    private var wantsPlaying: Bool
    private var closedCounts = VideoFrameCounts()
    private(set) var framesShown = 0
    private var framesNotShown = 0
    private(set) var lastError: String?
    /// Why the widget shows its placeholder, for `video.state`.
    var problem: String? { lastError ?? (maker == nil ? Self.noDecoder : nil) }
    static let noDecoder = "video playback is not available (no video decoder was set up)"
    /// Reports for the stage's subscribers.
    var onReport: ((VideoEventReport) -> Void)?
    /// The whole playlist played once (a `duration: video` page advances on it).
    var onPlaylistFinished: (() -> Void)?
    /// The cached copy of an `https` or `http` item, or nil while none is whole (kioskd's asset cache); without
    /// it such items never play.
    var cachedFile: ((String) -> String?)?
    /// The file the current player was opened on (the cached copy, for an item by URL).
    private var openedFile: String?
    /// True while the placeholder shows because no item that may play now has its download whole.
    private(set) var waitsForDownload = false
    /// The last download wait logged, so that each is logged once.
    private var loggedDownloadWait: String?
    /// The items' dayparting; nil when no item has rules or a priority (every item plays).
    private var schedule: PlaylistSchedule?
    /// The wall clock and whether it is synchronized, as the stage's page schedule reads them.
    private let clock: SlotClock
    /// Why no item plays, while none may (`video.state`'s `waiting`); nil otherwise.
    private(set) var waiting: String?
    /// Reads the rules again at their next change while no item may play.
    private var waitTimer: TimerHandle?
    /// How many times `waitTimer` fired: the rules are read at their changes, not frame by frame.
    private(set) var scheduleWakeups = 0
    /// The longest the wait lasts before the wall clock is read again (as the stage's page schedule does).
    static let scheduleRecheck: Duration = .seconds(60)

    /// The wall clock the rules are read on, and whether it can be trusted.
    struct SlotClock {
        var now: () -> Date
        var synchronized: () -> Bool
    }

    init(node: WidgetNode, properties: VideoProperties, engine: LayerEngine, maker: (any VideoPlayerMaking)?,
         schemes: VideoSchemes, retryBackoff: RetryBackoff, playing: Bool, timeZone: TimeZone = .current,
         unsynchronized: PageSchedule.Unsynchronized = .fallback,
         clock: SlotClock = SlotClock(now: { Date() }, synchronized: { true })) {
        self.node = node
        self.properties = properties
        self.engine = engine
        self.maker = maker
        self.schemes = schemes
        backoff = retryBackoff
        wantsPlaying = playing
        self.clock = clock
        if properties.isScheduled { schedule = properties.playlistSchedule(timeZone: timeZone, unsynchronized: unsynchronized) }
    }

    /// The items that may play now, in order; every item without a schedule.
    private var eligible: [Int] {
        schedule?.eligible(at: clock.now(), synchronized: clock.synchronized()) ?? Array(properties.sources.indices)
    }

    var source: String { properties.sources[min(index, properties.sources.count - 1)] }

    var state: VideoPlaybackState {
        if let player { return player.state }
        return lastError != nil || maker == nil ? .failed : .ended
    }

    var counts: (decoded: Int, shown: Int, dropped: Int) {
        let live = player?.counts ?? VideoFrameCounts()
        let superseded = pacer?.superseded ?? 0
        return (closedCounts.decoded + live.decoded, framesShown, closedCounts.dropped + live.dropped + framesNotShown + superseded)
    }

    // MARK: Control

    /// Starts the playlist from its first item (or `index`): of the items that may play now, the first at or after
    /// it; with none, the placeholder until one may.
    func start(at index: Int = 0) {
        failuresInARow = 0
        endUpcoming()
        guard let schedule else { return open(index) }
        guard let first = schedule.first(from: index, at: clock.now(), synchronized: clock.synchronized()) else {
            return wait()
        }
        open(first)
    }

    /// No item may play: the placeholder, and the rules read again at their next change.
    private func wait() {
        let previous = waiting
        retirePlayer()
        showPlaceholder()
        guard let schedule else { return }
        let now = clock.now(), synchronized = clock.synchronized()
        let change = schedule.nextChange(after: now)
        var reason = "no playlist item is scheduled now"
        if !synchronized, schedule.unsynchronized == .fallback {
            reason = "the clock is not synchronized: only playlist items without 'when' rules play (unsynchronized: fallback), and every item has rules"
        } else if let change {
            let formatter = ISO8601DateFormatter()
            formatter.timeZone = schedule.timeZone
            reason += "; next at \(formatter.string(from: change))"
        } else {
            reason += " nor in the next 8 days"
        }
        if previous != reason { logger.info("video widget \(node.id ?? "(no id)"): \(reason)") }
        waiting = reason
        var delay = Self.scheduleRecheck
        if let change {
            let nanoseconds = Int64((change.timeIntervalSince(now) * 1e9).rounded(.up))
            delay = min(delay, .nanoseconds(max(nanoseconds, 1_000_000)))
        }
        waitTimer = engine.loop.addTimer(after: delay) { [weak self] in
            guard let self else { return }
            waitTimer = nil
            scheduleWakeups += 1
            start(at: index)
        }
    }

    /// The clock became synchronized (or lost it): a widget waiting for an item reads the rules again at once, and
    /// so does one whose item has shown no frame yet (at start, before the clock's state was first read: nothing on
    /// the glass is cut); an item playing finishes its clip.
    func clockChanged() {
        guard let schedule else { return }
        if waiting == nil {
            guard player != nil, !itemStarted,
                  !schedule.eligible(at: clock.now(), synchronized: clock.synchronized()).contains(index) else { return }
        }
        start(at: index)
    }

    /// Plays the playlist from its first item.
    func restart() {
        wantsPlaying = true
        start()
    }

    func play() {
        wantsPlaying = true
        if waiting != nil { return start(at: index) }
        if player == nil || player?.state == .failed {
            start(at: index)
        } else {
            player?.play()
            if !itemStarted { armStartDeadline() }
        }
    }

    private func armStartDeadline() {
        startDeadline?.cancel()
        let source = self.source
        startDeadline = engine.loop.addTimer(after: Self.startTimeout) { [weak self] in
            guard let self, !self.itemStarted, self.player != nil, self.wantsPlaying, self.source == source else { return }
            self.fail(source, message: "no frame within \(Self.startTimeout) of opening the clip", advance: true)
        }
    }

    func pause() {
        wantsPlaying = false
        player?.pause()
    }

    func seek(to position: Duration) {
        player?.seek(to: position)
    }

    /// Replaces the playlist with one clip and plays it (`video.load`). A new source has no failures behind it, and
    /// no rules: it plays at any time.
    func load(source: String) {
        endProbe()
        endUpcoming()
        properties.sources = [source]
        schedule = nil
        wantsPlaying = true
        backoff.reset()
        start()
    }

    func close() {
        endProbe()
        endUpcoming()
        retirePlayer()
    }

    /// The widget was changed (`widget.set`): its body may have a new size, and its content was set again.
    func widgetChanged() {
        guard let body = node.body, let player, lastError == nil else { return }
        if let requested = requestedSize, requested != body.frame.size {
            // Frames come scaled to the old size: open the clip again at the new one, where it was.
            let position = player.position
            open(index)
            if let position, position > .zero { self.player?.seek(to: position) }
        } else if let lastSurface {
            engine.showExternalSurface(lastSurface, on: body)
        }
    }

    // MARK: Items

    /// The file to open for `source`: the path or URI itself, or for an `https` or `http` item its cached copy (nil
    /// while none is whole).
    private func playableFile(_ source: String) -> String? {
        RemoteAsset.isFetched(source) ? cachedFile?(source) : source
    }

    /// A copy of `url` is whole in the asset cache (the first, or a new version): a widget waiting for downloads,
    /// or stopped on a failed copy of it, plays it now; one playing goes on and opens it at the item's next start.
    func assetArrived(_ url: String) {
        guard let at = properties.sources.firstIndex(of: url) else { return }
        // A new version may last another time.
        durations[url] = nil
        unprobed.remove(url)
        if waitsForDownload || (player == nil && lastError != nil && properties.sources.indices.contains(index)
                                    && properties.sources[index] == url) {
            start(at: at)
        }
    }

    private func open(_ newIndex: Int) {
        retirePlayer()
        let count = properties.sources.count
        // What the scene decoder and `video.load` refuse never gets here; a scene made some other way is held to it too.
        if let refusal = schemes.refusal(of: properties.sources[min(newIndex, count - 1)]) {
            index = newIndex
            fail(source, message: refusal, advance: true)
            return
        }
        var chosen = newIndex
        var found = playableFile(properties.sources[min(newIndex, count - 1)])
        if found == nil {
            // Its download is not whole yet: the next item (of those that may play now) that can play.
            let eligible = self.eligible
            let order = eligible.filter { $0 > newIndex } + (properties.loop ? eligible.filter { $0 < newIndex } : [])
            if let next = order.first(where: { schemes.refusal(of: properties.sources[$0]) == nil && playableFile(properties.sources[$0]) != nil }) {
                chosen = next
                found = playableFile(properties.sources[next])
            }
        }
        index = chosen
        let source = self.source
        guard let file = found else { return awaitDownload() }
        guard let body = node.body else { return }
        guard let maker else {
            fail(source, message: Self.noDecoder, advance: false)
            return
        }
        let request = playerRequest(file, size: body.frame.size)
        let player: any VideoPlayer
        tookUpcoming = false
        if let upcoming, upcoming.index == chosen, upcoming.file == file, upcoming.player.state != .failed {
            player = upcoming.player
            self.upcoming = nil
            tookUpcoming = true
            if wantsPlaying { player.play() }
        } else {
            endUpcoming()
            do {
                player = try maker.makePlayer(request)
            } catch {
                fail(source, message: "\(error)", advance: false)
                return
            }
        }
        self.player = player
        openedFile = file
        requestedSize = request.size
        itemStarted = false
        if wantsPlaying { armStartDeadline() } else { player.pause() }
        // A single looping clip goes on from its start with no frame held at the seam (in a sync group, its frames
        // stay on the group's time across it, with no seek); `looped` comes in place of `ended`.
        if properties.loop, properties.sources.count == 1 { player.loopSeamlessly() }
        groupFollower.reset()
        player.onFrame = { [weak self] frame in self?.frameArrived(frame) }
        player.onEvent = { [weak self] event in self?.playerEvent(event, source: source) }
    }

    /// A frame from the decoder: to the pacer, with its group due time in a sync group (`GroupVideoFollower`),
    /// and the decoder moved to the group's position when it is too far from it.
    private func frameArrived(_ frame: VideoFrame) {
        guard let pacer else { return }
        // A player opened ahead may have said it started before it was taken over: its first frame here says so.
        if tookUpcoming, !itemStarted { playerEvent(.started, source: source) }
        guard let timed = groupClock() else {
            groupTimed = false
            return pacer.add(frame)
        }
        let (paced, move) = groupFollower.follow(frame, clock: timed.clock, duration: timed.duration,
                                                 timeline: timed.timeline, now: engine.loop.now)
        groupTimed = true
        pacer.add(paced)
        if move { return moveToGroup(timed) }
        if let playlist = timed.playlist {
            let remaining = playlist.durations[index] - Int64(clamping: frame.timestamp.nanosecondsClamped)
            let next = index + 1 < playlist.durations.count ? index + 1 : (properties.loop ? 0 : nil)
            if remaining < Self.openAhead, let next, next != index { openAhead(next) }
        }
    }

    /// Opens item `next` ahead, paused, unless it is open ahead already; an item that cannot be opened now is
    /// opened (and fails, if it does) when its turn comes.
    private func openAhead(_ next: Int) {
        guard upcoming?.index != next, let maker, let body = node.body else { return }
        let source = properties.sources[next]
        guard schemes.refusal(of: source) == nil, let file = playableFile(source) else { return }
        endUpcoming()
        guard let player = try? maker.makePlayer(playerRequest(file, size: body.frame.size)) else { return }
        player.pause()
        upcoming = (next, file, player)
    }

    /// What a player of `file` is asked for: the widget's fit and sound, at `size`.
    private func playerRequest(_ file: String, size: Size) -> VideoPlayerRequest {
        VideoPlayerRequest(source: file, size: size, fit: properties.fit, muted: properties.muted, volume: properties.volume)
    }

    private func endUpcoming() {
        upcoming?.player.close()
        upcoming = nil
    }

    /// The current clip on the group's clock: the clock (with the item's start in a playlist's cycle), the duration
    /// it times (the clip's, or the playlist's cycle), the timeline, and the playlist when there are several items.
    struct GroupTimed {
        var clock: GroupVideoClock
        var duration: Int64
        var timeline: GroupTimeline
        var playlist: GroupPlaylist?
    }

    /// The group's clock for the current clip; nil outside a sync group, for a playlist with dayparting rules, or
    /// while a duration is not known (a probe is then started for the next unknown item).
    private func groupClock() -> GroupTimed? {
        guard let player, let timing = groupTiming?() else { return nil }
        if durations[source] == nil, let known = player.duration, known > .zero {
            durations[source] = Int64(clamping: known.nanosecondsClamped)
        }
        if properties.sources.count == 1 {
            guard let duration = durations[source] else { return nil }
            return GroupTimed(clock: GroupVideoClock(anchor: timing.anchor, loops: properties.loop), duration: duration,
                              timeline: timing.timeline, playlist: nil)
        }
        guard schedule == nil else { return nil }
        let known = properties.sources.compactMap { durations[$0] }
        guard known.count == properties.sources.count, let playlist = GroupPlaylist(durations: known) else {
            probeNextDuration()
            return nil
        }
        return GroupTimed(clock: GroupVideoClock(anchor: timing.anchor, loops: properties.loop, itemStart: playlist.starts[index]),
                          duration: playlist.cycle, timeline: timing.timeline, playlist: playlist)
    }

    /// Moves the decoder to where the group will be once the move is done: a seek in the clip it has open, or for
    /// a playlist whose group position is in another item, that item opened and sought.
    private func moveToGroup(_ timed: GroupTimed) {
        let now = engine.loop.now
        let seekTarget = groupFollower.target(.seek, clock: timed.clock, duration: timed.duration, timeline: timed.timeline, now: now)
        guard let playlist = timed.playlist else {
            guard let seekTarget else { return }
            groupFollower.requestSeek(seekTarget, now: now)
            player?.seek(to: .nanoseconds(seekTarget))
            return
        }
        if let seekTarget, case let (item, offset) = playlist.item(at: seekTarget), item == index {
            groupFollower.requestSeek(seekTarget, now: now)
            player?.seek(to: .nanoseconds(offset))
            return
        }
        openOnGroup(timed, playlist: playlist)
    }

    /// Opens the playlist's item the group will be at once it is open (taking over the one opened ahead, when that
    /// is the item) and seeks it to its offset there.
    private func openOnGroup(_ timed: GroupTimed, playlist: GroupPlaylist) {
        let now = engine.loop.now
        let resumes = upcoming.flatMap { upcoming in
            groupFollower.target(.resume, clock: timed.clock, duration: timed.duration, timeline: timed.timeline, now: now)
                .map { playlist.item(at: $0).index == upcoming.index }
        } ?? false
        let move: GroupVideoFollower.Move = resumes ? .resume : .open
        guard let target = groupFollower.target(move, clock: timed.clock, duration: timed.duration, timeline: timed.timeline, now: now) else { return }
        let (item, offset) = playlist.item(at: target)
        open(item)
        // Unless that item could not be opened (another was, or none).
        guard let player, index == item else { return }
        groupFollower.requestSeek(target, move: tookUpcoming ? .resume : .open, now: now)
        player.seek(to: .nanoseconds(offset))
    }

    /// In a sync group, finds out the duration of the next item not known yet, with a paused player of its own
    /// (muted, at a small size), read until it knows (or `probeTimeout`), one item at a time.
    private func probeNextDuration() {
        guard probe == nil, let maker else { return }
        let unknown = properties.sources.filter { durations[$0] == nil }
        // An item that cannot be timed keeps the playlist on its decoder's clock: no more probes.
        guard unprobed.isDisjoint(with: unknown) else { return }
        // The current item's own player says its duration; an item by URL waits for its download.
        guard let next = unknown.first(where: { $0 != source && schemes.refusal(of: $0) == nil && playableFile($0) != nil }),
              let file = playableFile(next) else { return }
        do {
            // Muted and small: only its duration is read.
            let request = VideoPlayerRequest(source: file, size: Size(width: 16, height: 16), fit: properties.fit, muted: true, volume: 0)
            let player = try maker.makePlayer(request)
            player.pause()
            probe = (next, player, engine.loop.now)
            checkProbe()
        } catch {
            probeFailed(next, reason: "\(error)")
        }
    }

    private func checkProbe() {
        probeTimer = nil
        guard let (item, player, began) = probe else { return }
        if let known = player.duration, known > .zero {
            durations[item] = Int64(clamping: known.nanosecondsClamped)
            endProbe()
            probeNextDuration()
        } else if player.state == .failed || engine.loop.now - began > Self.probeTimeout {
            endProbe()
            probeFailed(item, reason: player.state == .failed ? "the clip could not be opened" : "no duration within \(Self.probeTimeout)")
        } else {
            probeTimer = engine.loop.addTimer(after: .milliseconds(25)) { [weak self] in self?.checkProbe() }
        }
    }

    private func probeFailed(_ item: String, reason: String) {
        unprobed.insert(item)
        logger.warning("video widget \(node.id ?? "(no id)"): \(item): its duration is not known (\(reason)), so the playlist plays on its decoder's clock, not the sync group's")
    }

    private func endProbe() {
        probeTimer?.cancel()
        probeTimer = nil
        probe?.player.close()
        probe = nil
    }

    private func playerEvent(_ event: VideoPlayerEvent, source: String) {
        switch event {
        case .started:
            itemStarted = true
            loggedDownloadWait = nil
            startDeadline?.cancel()
            startDeadline = nil
            failuresInARow = 0
            lastError = nil
            backoff.reset()
            onReport?(VideoEventReport(id: node.id, kind: .started, source: source))
        case .ended:
            // The decoder is done before its last frames are on screen: the end is handled once they are.
            guard let pacer else { return itemEnded(source: source) }
            let player = self.player
            pacer.whenDrained { [weak self] in
                // Unless the item was let go meanwhile (a load, a seek, the widget gone).
                guard let self, self.player === player else { return }
                itemEnded(source: source)
            }
        case .looped:
            // A seamless loop: still the one item, the same copy and allowed now, goes on as it is; otherwise as at an end.
            guard properties.sources.count == 1, eligible == [index], playableFile(source) == openedFile else {
                return itemEnded(source: source)
            }
            onReport?(VideoEventReport(id: node.id, kind: .looped, source: source))
            onPlaylistFinished?()
        case .failed(let message):
            fail(source, message: message, advance: true)
        }
    }

    /// The current item ended and its last frame is on screen: the next item (of those that may play now), a loop,
    /// or the end of the playlist.
    private func itemEnded(source: String) {
        // In a sync group, a playlist goes on with the item its group position will be in once it is opened.
        if properties.sources.count > 1, let timed = groupClock(), let playlist = timed.playlist,
           let target = groupFollower.target(.open, clock: timed.clock, duration: timed.duration, timeline: timed.timeline, now: engine.loop.now) {
            let ended = index
            openOnGroup(timed, playlist: playlist)
            if playlist.item(at: target).index < ended {
                onReport?(VideoEventReport(id: node.id, kind: .looped, source: source))
                onPlaylistFinished?()
            }
            return
        }
        let next = eligible.first { $0 > index }
        if let next {
            open(next)
            return
        }
        onReport?(VideoEventReport(id: node.id, kind: properties.loop ? .looped : .ended, source: source))
        if properties.loop {
            let eligible = self.eligible
            // A clip by URL whose new version arrived while it played is opened again, on the new copy.
            if properties.sources.count == 1, eligible == [index], let player, playableFile(source) == openedFile {
                // In a sync group, on at the group's position when the seek is done; else from the start.
                let now = engine.loop.now
                let onGroup = groupClock().flatMap { timed in
                    groupFollower.target(.seek, clock: timed.clock, duration: timed.duration, timeline: timed.timeline, now: now)
                }
                if let onGroup { groupFollower.requestSeek(onGroup, now: now) }
                player.seek(to: .nanoseconds(onGroup ?? 0))
            } else if let first = eligible.first {
                open(first)
            } else {
                wait()
            }
        }
        // After the report: a `duration: video` page advances on it, and its `page_shown` follows `ended`.
        onPlaylistFinished?()
    }


    /// Shows the placeholder, reports the failure, and moves on to the next item; once every item failed in a row,
    /// tries the playlist again after the backoff delay when it has a network item, else stays on the placeholder.
    private func fail(_ source: String, message: String, advance: Bool) {
        lastError = message
        failuresInARow += 1
        logger.error("video widget \(node.id ?? "(no id)"): \(source): \(message)")
        showPlaceholder()
        onReport?(VideoEventReport(id: node.id, kind: .error, source: source, message: message))
        guard advance else {
            retirePlayer()
            return
        }
        let eligible = self.eligible
        // The failed item's window closed meanwhile, and no other's is open.
        if schedule != nil, eligible.isEmpty, properties.loop { return wait() }
        guard failuresInARow < max(eligible.count, 1) else {
            retirePlayer()
            retryLater()
            return
        }
        if let next = eligible.first(where: { $0 > index }) {
            open(next)
        } else if properties.loop, let first = eligible.first {
            open(first)
        } else if properties.loop {
            wait()
        } else {
            retirePlayer()
            onPlaylistFinished?()
        }
    }

    /// After every item failed in a row: the playlist again from the item after the last failed, once the backoff
    /// delay has passed, when a network item may come back. Files only, or only refused items, would fail the same
    /// way again: nothing is scheduled. Items by URL play from their cached copy, which only a new version
    /// (`assetArrived`) changes.
    private func retryLater() {
        let retried = properties.sources.contains {
            VideoSchemes.isNetworkSource($0) && !RemoteAsset.isFetched($0) && schemes.refusal(of: $0) == nil
        }
        guard retried else { return }
        let delay = backoff.nextDelay()
        let from = (index + 1) % properties.sources.count
        // `start(at:)` picks, from there, an item that may play when the delay is over.
        logger.info("video widget \(node.id ?? "(no id)"): every item failed; trying again in \(delay)")
        retryDue = engine.loop.now + delay
        retryTimer = engine.loop.addTimer(after: delay) { [weak self] in
            guard let self else { return }
            retryTimer = nil
            retryDue = nil
            start(at: from)
        }
    }

    /// No item that may play now has its download whole: the placeholder, and `waiting` names what is missing.
    private func awaitDownload() {
        showPlaceholder()
        let missing = properties.sources.filter { RemoteAsset.isFetched($0) && playableFile($0) == nil }
        let reason = "waiting for the download of \(missing.joined(separator: ", "))"
        if loggedDownloadWait != reason { logger.info("video widget \(node.id ?? "(no id)"): \(reason)") }
        loggedDownloadWait = reason
        waiting = reason
        waitsForDownload = true
    }

    private func showPlaceholder() {
        pacer?.discard()
        guard let body = node.body, let content = body.content else { return }
        // Setting the content again renders it over the last frame.
        body.content = content
    }

    /// Lets go of the current item's player. Its newest waiting frame is shown at once (the last of the item, when
    /// it ended); the others waiting are dropped.
    private func retirePlayer() {
        waiting = nil
        waitsForDownload = false
        openedFile = nil
        waitTimer?.cancel()
        waitTimer = nil
        pacer?.flushShowingNewest()
        lastSurface = nil
        startDeadline?.cancel()
        startDeadline = nil
        retryTimer?.cancel()
        retryTimer = nil
        retryDue = nil
        guard let player else { return }
        let counts = player.counts
        closedCounts.decoded += counts.decoded
        closedCounts.dropped += counts.dropped
        player.close()
        self.player = nil
    }
}
