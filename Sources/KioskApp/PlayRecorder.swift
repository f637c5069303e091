import KioskCore
import KioskPlays
import KioskRuntime
import Logging

/// Proof of play: every page each output shows is recorded in the `PlayStore` as it happens. A page's record
/// begins when the stage changes to it (the `page` event) and ends at the next change, a scene replacing it, or a
/// clean stop; once it is shown whole (no transition running, nothing of the scene still rendering) the composed
/// frame of the next present is captured as a screenshot would be and its `FrameHash` is added to the record.
///
/// A record is written in the loop turn that changes the page, before any later flip: it is a write to SQLite's
/// WAL (no fsync, see `PlayStore`), so every page change a `flip` event has followed is in the store even if
/// kioskd is killed the next moment. Hashing and checkpoints run off the loop. Main thread.
final class PlayRecorder {
    /// A checkpoint (and prune) after this many writes.
    static let checkpointEvery = 64

    private final class Track {
        let output: DrivenOutput
        var sequence: Int64?
        var page = ""
        var scene = ""
        var monotonicStart: UInt64 = 0
        /// At start or after a scene load: the first present once the page is whole (nothing rendering, no
        /// transition) has its frame.
        var awaitingWholeFrame = false
        /// After a page change: waiting for the page to settle (its transition over), then for this many flips
        /// (the one pending at the settle, if any, then the present asked for).
        var awaitingSettle = false
        var flipsToFrame = 0
        /// The video items playing, by widget (its id, else its item): their records.
        var videos: [String: (sequence: Int64, monotonicStart: UInt64)] = [:]
        var listeners: [ListenerToken] = []
        init(output: DrivenOutput) { self.output = output }
    }

    let store: PlayStore
    /// The first sequence this run records: records before it that never ended were left open by an earlier run.
    /// Read once, before the first record is queued.
    let firstSequenceOfRun: Int64
    private let jobs: BackgroundJobs
    private let logger: Logger
    private var tracks: [Track] = []
    private var writesSinceCheckpoint = 0
    private var checkpointRunning = false
    /// Whether a write failed: logged once, then quiet until one succeeds.
    private var failing = false
    /// Hears each record's sequence number once it began (delivery follows it).
    var onRecord: ((Int64) -> Void)?

    init(store: PlayStore, outputs: [DrivenOutput], loop: MainLoop, logger: Logger) throws {
        self.store = store
        self.logger = logger
        firstSequenceOfRun = (try? store.nextSequence()) ?? 1
        jobs = try BackgroundJobs(loop: loop, label: "kioskd.plays")
        for output in outputs {
            let track = Track(output: output)
            tracks.append(track)
            track.listeners = [
                output.stage.addEventListener { [unowned self, unowned track] event in
                    switch event {
                    case .pageShown(let name):
                        self.endVideos(track)
                        self.change(track, to: name, ended: true)
                    case .sceneLoaded:
                        self.endVideos(track)
                        self.change(track, to: track.output.stage.currentPage, ended: false)
                    case .video(let report): self.video(track, report)
                    default: break
                    }
                },
                output.engine.addPresentListener { [unowned self, unowned track] _ in self.presented(track) },
                output.stage.addPageSettledListener { [unowned self, unowned track] page in self.settled(track, page) },
                output.engine.addFlipListener { [unowned self, unowned track] _ in self.flipped(track) },
            ]
            change(track, to: output.stage.currentPage, ended: false)
        }
    }

    /// Ends every record (a clean stop: not run to their end) and checkpoints, on the calling thread.
    func stop() {
        for track in tracks {
            endVideos(track)
            end(track, ranToEnd: false)
        }
        do { try store.checkpointAndPrune() } catch { logger.error("\(error)") }
    }

    private func change(_ track: Track, to page: String, ended: Bool) {
        let now = MonotonicInstant.now().nanoseconds, wall = WallClock.now().nanoseconds
        let previous = track.sequence
        let stage = track.output.stage
        // A timed page (a duration, or its video) ran to its end when the loop moved on at its turn; one without
        // when it left for another page.
        let timed = stage.scene.pages.first { $0.name == track.page }.map { $0.duration != nil || $0.advancesAfterVideo } ?? false
        let ranToEnd = ended && (!timed || stage.isChangingAtTurn)
        track.page = page
        track.scene = stage.source
        track.monotonicStart = now
        // One transaction: the page on screen always has its record, whenever kioskd stops.
        track.sequence = write {
            try self.store.transaction {
                if let previous { try self.store.end(previous, wallEnd: wall, monotonicEnd: Int64(now), ranToEnd: ranToEnd) }
                return try self.store.begin(kind: .page, item: page, scene: stage.source, output: track.output.name,
                                            wallStart: wall, monotonicStart: Int64(now))
            }
        }
        track.awaitingWholeFrame = track.sequence != nil && !ended
        track.awaitingSettle = track.sequence != nil && ended
        track.flipsToFrame = 0
        if let sequence = track.sequence { onRecord?(sequence) }
    }

    /// A video widget's report: an item that shows its first frame begins a record (ending the widget's previous
    /// item, which ran to its end: the playlist moved on); the playlist's end ends it, run to its end; a failure
    /// ends it cut short.
    private func video(_ track: Track, _ report: VideoEventReport) {
        let key = report.id ?? report.source
        let now = MonotonicInstant.now().nanoseconds, wall = WallClock.now().nanoseconds
        let previous = track.videos.removeValue(forKey: key)
        switch report.kind {
        case .started:
            let stage = track.output.stage
            let sequence = write {
                try self.store.transaction {
                    if let previous { try self.store.end(previous.sequence, wallEnd: wall, monotonicEnd: Int64(now), ranToEnd: true) }
                    return try self.store.begin(kind: .video, item: report.source, scene: stage.source, output: track.output.name,
                                                wallStart: wall, monotonicStart: Int64(now))
                }
            }
            if let sequence {
                track.videos[key] = (sequence, now)
                onRecord?(sequence)
            }
        case .ended, .looped, .error:
            guard let previous else { return }
            let ranToEnd = report.kind != .error
            write { try self.store.end(previous.sequence, wallEnd: wall, monotonicEnd: Int64(now), ranToEnd: ranToEnd) }
            onRecord?(previous.sequence)
        }
    }

    /// The page leaves (or the scene): its videos pause, their records end cut short.
    private func endVideos(_ track: Track) {
        let now = MonotonicInstant.now().nanoseconds, wall = WallClock.now().nanoseconds
        for (_, video) in track.videos {
            write { try self.store.end(video.sequence, wallEnd: wall, monotonicEnd: Int64(now), ranToEnd: false) }
        }
        track.videos = [:]
    }

    private func end(_ track: Track, ranToEnd: Bool) {
        guard let sequence = track.sequence else { return }
        track.sequence = nil
        let now = MonotonicInstant.now().nanoseconds
        write { try self.store.end(sequence, wallEnd: WallClock.now().nanoseconds, monotonicEnd: Int64(now), ranToEnd: ranToEnd) }
    }

    /// A newly composed frame was queued: at start, the first once the page is whole is the one its record keeps.
    private func presented(_ track: Track) {
        let engine = track.output.engine
        guard track.awaitingWholeFrame, !track.output.stage.isInTransition, !engine.isRendering(engine.rootLayer) else { return }
        track.awaitingWholeFrame = false
        capture(track)
    }

    /// The page changed to settled whole: the frame of the next present (asked for, so a still page has one) is
    /// the one its record keeps, once flipped.
    private func settled(_ track: Track, _ page: String) {
        guard track.awaitingSettle, page == track.page, let backend = track.output.engine.backend else { return }
        track.awaitingSettle = false
        track.flipsToFrame = backend.isFlipPending ? 2 : 1
        track.output.engine.setNeedsPresent()
    }

    private func flipped(_ track: Track) {
        guard track.flipsToFrame > 0 else { return }
        track.flipsToFrame -= 1
        if track.flipsToFrame == 0 { capture(track) }
    }

    /// Hashes the frame on screen (as `screenshot` copies it) off the loop into the current record, with the output's
    /// name as it is now (an output is named by its connector once connected).
    private func capture(_ track: Track) {
        let engine = track.output.engine
        guard let sequence = track.sequence, let size = engine.backend?.info.mode.size else { return }
        let output = track.output.name
        engine.captureScreen { [weak self] pixels in
            guard let self, let pixels else { return }
            self.jobs.run({ FrameHash.of(xrgb: pixels, width: size.width, height: size.height, stride: size.width * 4) },
                          then: { [weak self] hash in self?.write { try self?.store.setFrameHash(sequence, hash, output: output) } })
        }
    }

    @discardableResult
    private func write<T>(_ body: () throws -> T) -> T? {
        do {
            let value = try body()
            failing = false
            writesSinceCheckpoint += 1
            if writesSinceCheckpoint >= Self.checkpointEvery { checkpoint() }
            return value
        } catch {
            if !failing { logger.error("proof of play: \(error)") }
            failing = true
            return nil
        }
    }

    /// Checkpoints and prunes on a connection of the job's own, off the loop.
    private func checkpoint() {
        guard !checkpointRunning else { return }
        checkpointRunning = true
        writesSinceCheckpoint = 0
        let path = store.path, cap = store.maximumBytes
        jobs.run({ () -> String? in
            do {
                let upkeep = try PlayStore(path: path, maximumBytes: cap, check: false)
                try upkeep.checkpointAndPrune()
                return nil
            } catch {
                return "\(error)"
            }
        }, then: { [weak self] problem in
            self?.checkpointRunning = false
            if let problem { self?.logger.error("proof of play: checkpoint: \(problem)") }
        })
    }
}
