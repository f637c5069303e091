import CGStreamer
import CKioskVideo
import Dispatch
import KioskCore
import Logging

private let logger = Logger(label: "kioskd.video")

/// One clip: `playbin3` picks the demuxer and decoder (a hardware decoder where the board has one, software
/// otherwise) and plays audio to the default sink unless muted; its video sink is a bin that scales the frames to
/// the widget's size (`fit`) and converts them to BGRA for an `appsink`. The appsink syncs on the pipeline clock
/// with a lead (`lead`), so each frame leaves GStreamer's streaming thread a little before it is due; it is copied
/// into a `LayerSurface` there, stamped with its due time on CLOCK_MONOTONIC, and crosses to the main thread
/// through the mailbox, where `onFrame` gets the frames in order and the widget shows each at the vblank nearest
/// its time. With QoS on, a decoder that falls behind skips frames; those show as gaps in the timestamps and are
/// counted as dropped.
///
/// Lives on the main thread; state changes and seeks run on its own serial queue.
public final class GStreamerPlayer: VideoPlayer {
    public var onFrame: ((VideoFrame) -> Void)?
    public var onEvent: ((VideoPlayerEvent) -> Void)?
    public private(set) var state = VideoPlaybackState.loading
    public let request: VideoPlayerRequest

    private let mailbox: PlayerMailbox
    /// Held strongly: its waker brings this player's frames, and its queue runs the state changes (it holds players
    /// weakly, so there is no cycle).
    private let video: GStreamerVideo
    private var pipeline: PipelineHandle?
    /// State changes and seeks of this pipeline, in order, off the main thread. One queue per player: a pipeline
    /// slow to go to NULL after an error never holds up the next item of a playlist.
    private let control: DispatchQueue
    private var taken = VideoFrameCounts()
    private var started = false

    init(request: VideoPlayerRequest, mailbox: PlayerMailbox, video: GStreamerVideo) throws {
        self.request = request
        self.mailbox = mailbox
        self.video = video
        control = DispatchQueue(label: "kioskd.video.\(mailbox.id)", qos: .userInitiated)
        guard let playbin = gst.gst_element_factory_make!("playbin3", nil) else { throw VideoError("video: cannot make playbin3") }
        let pipeline = PipelineHandle(playbin)
        _ = gst.gst_object_ref_sink!(UnsafeMutableRawPointer(playbin))

        var error: UnsafeMutablePointer<GError>?
        guard let bin = gst.gst_parse_bin_from_description!(Self.sinkDescription(request), 1, &error) else {
            let message = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "unknown error"
            if let error { g_error_free(error) }
            throw VideoError("video: cannot build the frame sink: \(message)")
        }
        let binElement = UnsafeMutableRawPointer(bin).assumingMemoryBound(to: GstElement.self)
        guard let sink = gst.gst_bin_get_by_name!(UnsafeMutableRawPointer(bin).assumingMemoryBound(to: GstBin.self), "frames") else {
            throw VideoError("video: the frame sink has no appsink")
        }
        defer { gst.gst_object_unref!(UnsafeMutableRawPointer(sink)) }
        kiosk_gst_set_element(playbin, "video-sink", binElement)
        kiosk_gst_set_string(playbin, "uri", request.source.gstreamerURI)
        // GstPlayFlags: video (0x1), audio (0x2), soft-volume (0x10). A muted clip has no audio branch at all, so a
        // board without a sound card plays it too.
        kiosk_gst_set_uint(playbin, "flags", request.muted ? 0x1 : 0x1 | 0x2 | 0x10)
        kiosk_gst_set_double(playbin, "volume", min(max(request.volume, 0), 1))

        var callbacks = GstAppSinkCallbacks()
        callbacks.new_sample = newSampleCallback
        callbacks.new_preroll = newPrerollCallback
        let appsink = UnsafeMutableRawPointer(sink).assumingMemoryBound(to: GstAppSink.self)
        gst.gst_app_sink_set_callbacks!(appsink, &callbacks, mailbox.retainedForCallbacks(), releaseMailbox)
        let bus = gst.gst_element_get_bus!(playbin)
        gst.gst_bus_set_sync_handler!(bus, busSyncHandler, mailbox.retainedForCallbacks(), releaseMailbox)
        gst.gst_object_unref!(UnsafeMutableRawPointer(bus))
        kiosk_gst_connect_about_to_finish(playbin, aboutToFinishCallback, mailbox.retainedForCallbacks(), releaseMailbox)

        self.pipeline = pipeline
        setState(GST_STATE_PLAYING)
    }

    deinit {
        close()
    }

    /// How long before its due time a frame is handed over: enough for the main thread to have it when it picks
    /// the frame for the vblank nearest that time, whatever the display's refresh.
    static let lead: Duration = .milliseconds(40)

    /// The video sink: scale to the widget's size as `fit` says, convert to BGRA (Cairo's ARGB32 in memory), and
    /// hand frames over `lead` before they are due (`sync`, `ts-offset`); a frame more than 40 ms past its due time
    /// is dropped by the sink and counted.
    static func sinkDescription(_ request: VideoPlayerRequest) -> String {
        let w = max(request.size.width, 2), h = max(request.size.height, 2)
        let caps = "video/x-raw,format=BGRA,width=\(w),height=\(h),pixel-aspect-ratio=1/1"
        let scale: String
        switch request.fit {
        case .contain: scale = "videoscale add-borders=true"
        case .fill: scale = "videoscale add-borders=false"
        case .cover: scale = "aspectratiocrop aspect-ratio=\(w)/\(h) ! videoscale add-borders=false"
        }
        let lead = lead.nanosecondsClamped
        return "\(scale) ! videoconvert ! \(caps) ! appsink name=frames sync=true max-buffers=2 qos=true "
            + "ts-offset=-\(lead) max-lateness=\(lead + 40_000_000) enable-last-sample=false"
    }

    // MARK: VideoPlayer

    public var position: Duration? {
        guard let pipeline else { return nil }
        var value: gint64 = 0
        guard gst.gst_element_query_position!(pipeline.element, GST_FORMAT_TIME, &value) != 0, value >= 0 else { return nil }
        return .nanoseconds(Int64(value))
    }

    public var duration: Duration? {
        guard let pipeline else { return nil }
        var value: gint64 = 0
        guard gst.gst_element_query_duration!(pipeline.element, GST_FORMAT_TIME, &value) != 0, value >= 0 else { return nil }
        return .nanoseconds(Int64(value))
    }

    public var counts: VideoFrameCounts { taken }

    public func play() {
        guard pipeline != nil, state != .failed else { return }
        if state != .loading { state = .playing }
        setState(GST_STATE_PLAYING)
    }

    public func pause() {
        guard pipeline != nil, state != .failed else { return }
        state = .paused
        setState(GST_STATE_PAUSED)
    }

    public func seek(to position: Duration) {
        guard let pipeline, state != .failed else { return }
        if state == .ended { state = .playing }
        mailbox.seeking(paused: state == .paused, to: position)
        let nanoseconds = max(position.components.seconds, 0) * 1_000_000_000 + position.components.attoseconds / 1_000_000_000
        let flags = GstSeekFlags(rawValue: GST_SEEK_FLAG_FLUSH.rawValue | GST_SEEK_FLAG_ACCURATE.rawValue)
        let source = request.source
        control.async {
            if gst.gst_element_seek_simple!(pipeline.element, GST_FORMAT_TIME, flags, gint64(nanoseconds)) == 0 {
                logger.warning("video \(source): seek to \(position) refused")
            }
        }
    }

    /// Gapless: the clip is set again as playbin's next URI as its data runs out (`aboutToFinishCallback`).
    public func loopSeamlessly() {
        mailbox.loop(request.source.gstreamerURI)
    }

    public func close() {
        guard let pipeline else { return }
        self.pipeline = nil
        onFrame = nil
        onEvent = nil
        mailbox.close()
        video.forget(mailbox.id)
        // Going to NULL joins GStreamer's threads: not on the main thread.
        let done = { @Sendable in
            _ = gst.gst_element_set_state!(pipeline.element, GST_STATE_NULL)
            _ = pipeline
        }
        control.async(execute: done)
    }

    // MARK: Main thread

    private func setState(_ target: GstState) {
        guard let pipeline else { return }
        let source = request.source
        control.async {
            if gst.gst_element_set_state!(pipeline.element, target) == GST_STATE_CHANGE_FAILURE {
                // The bus says why, as an error message.
                logger.debug("video \(source): state change refused")
            }
        }
    }

    /// What GStreamer's threads left: bus notes in order, then the frames.
    func takeMailbox() {
        let (frames, notes, decoded, dropped) = mailbox.take()
        taken = VideoFrameCounts(decoded: decoded, dropped: dropped)
        for note in notes {
            switch note {
            case .endOfStream:
                guard state != .failed else { continue }
                state = .ended
                onEvent?(.ended)
            case .looped:
                guard state != .failed else { continue }
                onEvent?(.looped)
            case .error(let message):
                guard state != .failed else { continue }
                state = .failed
                logger.error("video \(request.source): \(message)")
                onEvent?(.failed(message: message))
            }
        }
        guard !frames.isEmpty, state != .failed else { return }
        if !started {
            started = true
            if state == .loading { state = .playing }
            onEvent?(.started)
        }
        for frame in frames { onFrame?(frame) }
    }
}
