import CGStreamer
import CKioskVideo
import KioskCore

/// What GStreamer's threads leave for the main thread, one player's worth: the decoded frames not yet taken, in
/// order (at most `capacity`: beyond that the oldest is overtaken and counted), and what the bus said. Written by the appsink's streaming thread and
/// the bus's posting threads, read by the main thread; everything behind one lock, and the loop woken after each
/// write. Shared across threads, immutable apart from the locked state, hence `Sendable`.
final class PlayerMailbox: Sendable {
    /// A bus message worth the main thread's attention, as a value.
    enum BusNote: Sendable, Equatable {
        case endOfStream
        /// The clip was started again behind its end, for a seamless loop (`loop(_:)`).
        case looped
        case error(String)
    }

    /// More frames than the sink's lead over their due times ever holds at once; more waiting means the main
    /// thread has stalled, and only the newest matter.
    static let capacity = 8

    struct Contents {
        var frames: [VideoFrame] = []
        var notes: [BusNote] = []
        var decoded = 0
        var overtaken = 0
        /// Frames the decoder or the sink skipped as late: gaps in the timestamps of the frames that came.
        var skipped = 0
        /// The timestamp and duration of the last frame that came, to see gaps; forgotten at a seek.
        var last: (timestamp: Duration, duration: Duration)?
        /// No frame came since the clip was opened: the first one should be at zero.
        var fromStart = true
        /// The shortest step between two frames seen: the frame duration where buffers carry none.
        var shortestStep: Duration?
        /// Set by a seek while paused: the frame prerolled there is shown, though the clip does not play. Only the
        /// frame at this position counts (`frame(_:covers:step:)`), since the pause itself may preroll another.
        var prerollTarget: Duration?
        /// After `close`: nothing more is taken.
        var isClosed = false
        /// The clip's URI, once it is to loop seamlessly: set again on playbin as the clip's data runs out.
        var loopURI: String?
        /// Set again, and its first frame not come yet: that frame (its timestamp back at the start) is the loop.
        var loopPending = false
    }

    private let contents = Lock(Contents())
    private let waker: Waker
    /// Which player the factory's drain hands the contents to.
    let id: Int

    init(id: Int, waker: Waker) {
        self.id = id
        self.waker = waker
    }

    /// The mailbox as the pointer a GStreamer callback table or sync handler holds, with a reference of its own
    /// (given back by `releaseMailbox`). GStreamer hands the pointer to its threads under GLib's locks, which
    /// ThreadSanitizer cannot see, so the hand-over is told to it: released here, after the mailbox is made, and
    /// acquired by each callback (`received`).
    func retainedForCallbacks() -> UnsafeMutableRawPointer {
        let pointer = Unmanaged.passRetained(self).toOpaque()
        kiosk_tsan_release(pointer)
        return pointer
    }

    /// In a callback on GStreamer's threads: the mailbox behind `data` (see `retainedForCallbacks`).
    static func received(_ data: UnsafeMutableRawPointer) -> PlayerMailbox {
        kiosk_tsan_acquire(data)
        return Unmanaged<PlayerMailbox>.fromOpaque(data).takeUnretainedValue()
    }

    /// From the streaming thread: a frame became due. `preroll` frames are taken only when a paused seek asked.
    func deliver(_ frame: VideoFrame, preroll: Bool) {
        let delivered = contents.withLock { box -> Bool in
            guard !box.isClosed else { return false }
            if preroll {
                guard let target = box.prerollTarget, Self.frame(frame, covers: target, step: box.shortestStep) else { return false }
                box.prerollTarget = nil
            } else {
                box.decoded += 1
                if let last = box.last {
                    let gap = frame.timestamp - last.timestamp
                    // The frame's own duration, or (WebM often has none) the shortest step seen so far.
                    let step = last.duration > .zero ? last.duration : box.shortestStep
                    if let step, step > .zero, gap > step * 3 / 2 { box.skipped += Int((gap / step).rounded()) - 1 }
                    if gap > .zero { box.shortestStep = min(box.shortestStep ?? gap, gap) }
                } else if box.fromStart, frame.duration > .zero, frame.timestamp > frame.duration / 2 {
                    // The clip's first frames never came.
                    box.skipped += Int((frame.timestamp / frame.duration).rounded())
                }
                if box.loopPending, let last = box.last, frame.timestamp < last.timestamp {
                    box.loopPending = false
                    box.notes.append(.looped)
                }
                box.fromStart = false
                box.last = (frame.timestamp, frame.duration)
            }
            if box.frames.count >= Self.capacity {
                box.frames.removeFirst()
                box.overtaken += 1
            }
            box.frames.append(frame)
            return true
        }
        if delivered { waker.wake() }
    }

    /// Whether `frame` is the one an accurate seek to `target` prerolls: the frame whose time span holds `target`
    /// (1 ms of slack at its start, for timestamps rounded to nanoseconds). A neighbour is not: the preroll of the
    /// pause before the seek may still arrive after it, and when the clip was paused near the target that frame is
    /// the one before or after, and would be shown in place of the one asked for. Without a duration on the frame,
    /// within half the frame step seen so far; without either, within 50 ms.
    static func frame(_ frame: VideoFrame, covers target: Duration, step: Duration?) -> Bool {
        if frame.duration > .zero {
            return frame.timestamp <= target + .milliseconds(1) && target < frame.timestamp + frame.duration
        }
        let distance = max(frame.timestamp - target, target - frame.timestamp)
        if let step, step > .zero { return distance < step / 2 }
        return distance < .milliseconds(50)
    }

    /// From a bus posting thread.
    func post(_ note: BusNote) {
        let posted = contents.withLock { box -> Bool in
            guard !box.isClosed else { return false }
            box.notes.append(note)
            return true
        }
        if posted { waker.wake() }
    }

    /// From the player: from now on the clip loops with no gap, by `uri` set again as its data runs out.
    func loop(_ uri: String) {
        contents.withLock { $0.loopURI = uri }
    }

    /// From the streaming thread, at playbin's `about-to-finish` (while the clip's last frames are still to be
    /// shown): the URI to play next, gaplessly, when the clip loops. The loop is noted for the main thread with the
    /// first frame of the clip played again.
    func nextURIForLoop() -> String? {
        contents.withLock { box -> String? in
            guard !box.isClosed, let uri = box.loopURI else { return nil }
            box.loopPending = true
            return uri
        }
    }

    /// A seek: the next frame's timestamp does not follow the last one.
    func seeking(paused: Bool, to position: Duration) {
        contents.withLock { box in
            box.last = nil
            box.fromStart = false
            if paused { box.prerollTarget = position }
        }
    }

    func close() {
        contents.withLock { box in
            box.isClosed = true
            box.frames = []
            box.notes = []
        }
    }

    /// On the main thread: the frames and the notes since the last take, and the counters so far.
    func take() -> (frames: [VideoFrame], notes: [BusNote], decoded: Int, dropped: Int) {
        contents.withLock { box in
            let taken = (box.frames, box.notes, box.decoded, box.overtaken + box.skipped)
            box.frames = []
            box.notes = []
            return taken
        }
    }
}

// MARK: Callbacks on GStreamer's threads

/// The appsink's `new-sample`: runs on the streaming thread when the sink's clock says the frame is due, less the
/// sink's lead (`GStreamerPlayer.lead`).
let newSampleCallback: @convention(c) (UnsafeMutablePointer<GstAppSink>?, gpointer?) -> GstFlowReturn = { sink, data in
    guard let sink, let data else { return GST_FLOW_ERROR }
    let mailbox = PlayerMailbox.received(data)
    guard let sample = gst.gst_app_sink_pull_sample!(sink) else { return GST_FLOW_EOS }
    defer { kiosk_gst_sample_unref(sample) }
    if let frame = VideoFrameCopy.frame(from: sample, dueOn: sink) { mailbox.deliver(frame, preroll: false) }
    return GST_FLOW_OK
}

/// The appsink's `new-preroll`: the first frame after a seek or a pause; shown only when a paused seek asked.
let newPrerollCallback: @convention(c) (UnsafeMutablePointer<GstAppSink>?, gpointer?) -> GstFlowReturn = { sink, data in
    guard let sink, let data else { return GST_FLOW_ERROR }
    let mailbox = PlayerMailbox.received(data)
    guard let sample = gst.gst_app_sink_pull_preroll!(sink) else { return GST_FLOW_OK }
    defer { kiosk_gst_sample_unref(sample) }
    if let frame = VideoFrameCopy.frame(from: sample) { mailbox.deliver(frame, preroll: true) }
    return GST_FLOW_OK
}

/// playbin's `about-to-finish`: on a streaming thread, as the clip's data runs out. A clip that loops seamlessly is
/// set again as the next URI: playbin plays it on behind the last frame with the running time going on, so the first
/// frame of the next loop is due one frame after the last, as within the clip.
let aboutToFinishCallback: @convention(c) (UnsafeMutablePointer<GstElement>?, UnsafeMutableRawPointer?) -> Void = { playbin, data in
    guard let playbin, let data else { return }
    let mailbox = PlayerMailbox.received(data)
    if let uri = mailbox.nextURIForLoop() { kiosk_gst_set_string(playbin, "uri", uri) }
}

/// The bus's sync handler: runs on whichever thread posts a message. Without a GLib main loop, this is how the
/// bus is watched: each message that matters becomes a value in the mailbox, and every message is dropped here.
let busSyncHandler: @convention(c) (UnsafeMutablePointer<GstBus>?, UnsafeMutablePointer<GstMessage>?, gpointer?) -> GstBusSyncReply = { _, message, data in
    guard let message, let data else { return GST_BUS_DROP }
    let mailbox = PlayerMailbox.received(data)
    switch message.pointee.type {
    case GST_MESSAGE_STREAM_STATUS:
        // Decoding and converting run below the main thread's priority, as the render workers do: on a board with
        // few cores a busy decoder must not hold back the loop that shows its frames.
        _ = kiosk_gst_lower_entering_stream_thread(message, GStreamerThreads.niceIncrement)
    case GST_MESSAGE_EOS:
        mailbox.post(.endOfStream)
    case GST_MESSAGE_ERROR:
        var error: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        gst.gst_message_parse_error!(message, &error, &debug)
        let text = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? "unknown error"
        let element = kiosk_gst_message_source_name(message).map { String(cString: $0) }
        mailbox.post(.error(element.map { "\($0): \(text)" } ?? text))
        if let error { g_error_free(error) }
        g_free(debug)
    default:
        break
    }
    return GST_BUS_DROP
}

/// GStreamer's streaming threads (and the decoder threads they start) run this much nicer than the thread that made
/// the pipeline, like the render workers (`RenderQueuePool`); audio elements' threads keep their priority.
enum GStreamerThreads {
    static let niceIncrement: Int32 = 5
}

/// Releases the reference a callback table or sync handler held on its mailbox, when GStreamer lets go of it.
let releaseMailbox: @convention(c) (gpointer?) -> Void = { data in
    guard let data else { return }
    Unmanaged<PlayerMailbox>.fromOpaque(data).release()
}

/// Copies a BGRA sample into a `LayerSurface`. Runs on the streaming thread.
enum VideoFrameCopy {
    /// The frame of `sample`; with `sink`, due when that sink would show it (see `dueTime`).
    static func frame(from sample: OpaquePointer, dueOn sink: UnsafeMutablePointer<GstAppSink>? = nil) -> VideoFrame? {
        guard let buffer = gst.gst_sample_get_buffer!(sample), let caps = gst.gst_sample_get_caps!(sample) else { return nil }
        var info = GstVideoInfo()
        guard gst.gst_video_info_from_caps!(&info, caps) != 0 else { return nil }
        let width = Int(info.width), height = Int(info.height)
        let sourceStride = Int(info.stride.0), offset = Int(info.offset.0)
        guard width > 0, height > 0 else { return nil }
        var map = GstMapInfo()
        guard gst.gst_buffer_map!(buffer, &map, GST_MAP_READ) != 0 else { return nil }
        defer { gst.gst_buffer_unmap!(buffer, &map) }
        guard let source = map.data, Int(map.size) >= offset + sourceStride * (height - 1) + width * 4 else { return nil }
        let surface = LayerSurface(size: Size(width: width, height: height), isOpaque: true)
        let rowBytes = min(width * 4, surface.stride)
        for row in 0..<height {
            (surface.bytes + row * surface.stride).copyMemory(from: source + offset + row * sourceStride, byteCount: rowBytes)
        }
        let pts = buffer.pointee.pts, length = buffer.pointee.duration
        let timestamp: Duration = pts == UInt64.max ? .zero : .nanoseconds(Int64(clamping: pts))
        let duration: Duration
        if length != UInt64.max {
            duration = .nanoseconds(Int64(clamping: length))
        } else if info.fps_n > 0 {
            duration = .nanoseconds(Int64(1_000_000_000) * Int64(info.fps_d) / Int64(info.fps_n))
        } else {
            duration = .zero
        }
        let due = sink.flatMap { dueTime(of: sample, pts: pts, sink: $0) }
        return VideoFrame(surface: surface, timestamp: timestamp, duration: duration, due: due)
    }

    /// When `sink` is to show the buffer stamped `pts`, on CLOCK_MONOTONIC: its running time in the segment plus
    /// the element's base time and the pipeline latency is the time on the pipeline's clock (the system clock, or
    /// an audio sink's), which is moved onto CLOCK_MONOTONIC by reading both clocks now. Nil when the buffer has no
    /// running time or the sink no clock.
    static func dueTime(of sample: OpaquePointer, pts: GstClockTime, sink: UnsafeMutablePointer<GstAppSink>) -> MonotonicInstant? {
        let element = UnsafeMutableRawPointer(sink).assumingMemoryBound(to: GstElement.self)
        guard pts != UInt64.max, let segment = gst.gst_sample_get_segment!(sample) else { return nil }
        let running = gst.gst_segment_to_running_time!(segment, GST_FORMAT_TIME, pts)
        guard running != UInt64.max, let clock = gst.gst_element_get_clock!(element) else { return nil }
        defer { gst.gst_object_unref!(UnsafeMutableRawPointer(clock)) }
        let base = gst.gst_element_get_base_time!(element)
        let latency = gst.gst_base_sink_get_latency!(UnsafeMutableRawPointer(sink).assumingMemoryBound(to: GstBaseSink.self))
        let onClock = Int64(clamping: base) &+ Int64(clamping: running) &+ Int64(clamping: latency)
        let clockNow = Int64(clamping: gst.gst_clock_get_time!(clock))
        return MonotonicInstant.now() + .nanoseconds(onClock &- clockNow)
    }
}
