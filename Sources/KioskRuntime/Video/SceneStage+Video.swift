import KioskCore
import KioskScene

/// The stage's video widgets (`SceneVideos`) for the control socket: play, pause, seek, state and load, by widget id.
extension SceneStage: VideoControlling {
    /// Makes the players of video widgets; `kioskd` sets GStreamer here. Setting it restarts the scene's videos.
    public var videoPlayers: (any VideoPlayerMaking)? {
        get { videos.maker }
        set {
            videos.maker = newValue
            videos.adopt(nodes, scene: scene, currentPage: currentPage)
        }
    }

    public func playVideo(id: String?) throws(StageError) {
        try videoSlot(id).play()
    }

    public func pauseVideo(id: String?) throws(StageError) {
        try videoSlot(id).pause()
    }

    public func seekVideo(id: String?, to position: Duration) throws(StageError) {
        let slot = try videoSlot(id)
        guard slot.player != nil else {
            throw StageError(.invalidArgument, "video \(slot.node.id ?? "(no id)") is not playing a clip (state \(slot.state.rawValue))")
        }
        slot.seek(to: position)
    }

    public func videoState(id: String?) throws(StageError) -> [String: PropertyValue] {
        let slot = try videoSlot(id)
        let counts = slot.counts
        func seconds(_ d: Duration?) -> PropertyValue {
            d.map { .number(Double($0.components.seconds) + Double($0.components.attoseconds) * 1e-18) } ?? .null
        }
        return [
            "id": slot.node.id.map(PropertyValue.string) ?? .null,
            "source": .string(slot.source),
            "index": .number(Double(slot.index)),
            "playlist": .array(slot.properties.sources.map(PropertyValue.string)),
            "state": .string(slot.waiting != nil ? "waiting" : slot.state.rawValue),
            "position": seconds(slot.player?.position),
            "duration": seconds(slot.player?.duration),
            "frames_decoded": .number(Double(counts.decoded)),
            "frames_shown": .number(Double(counts.shown)),
            "frames_dropped": .number(Double(counts.dropped)),
            "error": slot.problem.map(PropertyValue.string) ?? .null,
            "retry_in": seconds(slot.retryDue.map { max($0 - engine.loop.now, .zero) }),
            "waiting": slot.waiting.map(PropertyValue.string) ?? .null,
            "schedule_wakeups": .number(Double(slot.scheduleWakeups)),
            "group": groupFigures(slot),
        ]
    }

    /// In a sync group, how the clip follows the group's clock (`GroupVideoFollower`): `phase_error_ms` (each
    /// frame's vblank against its group due time, absolute, p50 and p99 of the last 128), `decoder_phase_ms` (the
    /// decoder's due times against the group's, signed), `seeks` made to join the group's position and
    /// `seek_time_ms` (what the next seek aims ahead by), `open_time_ms` and `resume_time_ms` (the same for a
    /// playlist's item opened at a position, or opened ahead and played); null outside a sync group.
    private func groupFigures(_ slot: VideoSlot) -> PropertyValue {
        guard slot.groupTimed else { return .null }
        let follower = slot.groupFollower
        return .object([
            "phase_error_ms": .object(GroupVideoFollower.percentiles(follower.vblankErrors.map { abs($0) })),
            "decoder_phase_ms": .object(GroupVideoFollower.percentiles(follower.phases)),
            "seeks": .number(Double(follower.seeks)),
            "seek_time_ms": .number(follower.seekTime.milliseconds.rounded()),
            "open_time_ms": .number(follower.openTime.milliseconds.rounded()),
            "resume_time_ms": .number(follower.resumeTime.milliseconds.rounded()),
        ])
    }

    public func loadVideo(id: String?, source: String) throws(StageError) {
        let slot = try videoSlot(id)
        try checkVideoSource(source)
        slot.load(source: source)
        if RemoteAsset.isFetched(source) { builder.remoteAssets?.stageAssetsChanged() }
    }

    public func checkVideoSource(_ source: String) throws(StageError) {
        if let refusal = videos.schemes.refusal(of: source) { throw StageError(.invalidArgument, refusal) }
    }

    /// The backoff every video widget of scenes adopted from now on starts from: 1 s doubling to 60 s, ±25 %, by
    /// default; tests give it a known random source.
    public var videoRetryBackoff: RetryBackoff {
        get { videos.retryBackoff }
        set { videos.retryBackoff = newValue }
    }

    public var videoFrameTotals: (decoded: Int, shown: Int, dropped: Int) { videos.totals }

    private func videoSlot(_ id: String?) throws(StageError) -> VideoSlot {
        if let id {
            if let slot = videos.slot(id: id) { return slot }
            let known = videos.slots.compactMap(\.node.id)
            throw StageError(.notFound, "no video widget with id '\(id)'" + (known.isEmpty ? "" : " (video widgets: \(known.joined(separator: ", ")))"))
        }
        switch videos.slots.count {
        case 1: return videos.slots[0]
        case 0: throw StageError(.notFound, "the scene has no video widget")
        default: throw StageError(.invalidArgument, "the scene has \(videos.slots.count) video widgets: give 'id'")
        }
    }
}
