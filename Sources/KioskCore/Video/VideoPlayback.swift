/// One decoded video frame: its pixels already scaled to the layer that shows it (premultiplied ARGB32, opaque),
/// and its presentation timestamp in the clip. Made on a decoder thread after the last write to the surface;
/// immutable from then on, so it crosses to the main thread as a value.
public struct VideoFrame: Sendable {
    public let surface: LayerSurface
    /// The frame's position in the clip (the buffer's presentation timestamp).
    public let timestamp: Duration
    /// How long the frame is shown in the clip (zero when unknown).
    public let duration: Duration
    /// When the frame should be on screen, on CLOCK_MONOTONIC (the clock of vblank timestamps): the pipeline's
    /// running time of the frame mapped onto it. Nil for a frame to show at once (one prerolled by a paused seek).
    public let due: MonotonicInstant?

    public init(surface: LayerSurface, timestamp: Duration, duration: Duration = .zero, due: MonotonicInstant? = nil) {
        self.surface = surface
        self.timestamp = timestamp
        self.duration = duration
        self.due = due
    }
}

/// Where a player is. An immutable value; any thread.
public enum VideoPlaybackState: String, Sendable, Equatable {
    /// Opening the clip; no frame yet.
    case loading
    case playing
    case paused
    /// The clip reached its end and does not loop.
    case ended
    /// The clip could not be played (see the `failed` event).
    case failed
}

/// What a player reports to its owner, on the main thread. An immutable value; any thread.
public enum VideoPlayerEvent: Sendable, Equatable {
    /// The first frame of the clip is on its way.
    case started
    /// The clip played to its end.
    case ended
    /// The clip reached its end and went on from its start with no gap (`loopSeamlessly`).
    case looped
    /// The clip could not be opened or decoded; `message` is the decoder's own.
    case failed(message: String)
}

/// How a clip fills its widget. An immutable value; any thread.
public enum VideoFit: String, Sendable, Equatable, CaseIterable {
    /// Whole clip, letterboxed with black.
    case contain
    /// The widget filled, the clip cropped to its aspect ratio.
    case cover
    /// The clip stretched to the widget.
    case fill
}

/// What a player is asked to play. An immutable value; any thread.
public struct VideoPlayerRequest: Sendable, Equatable {
    /// A file path or a URI (`file://`, `http://`, ...).
    public var source: String
    /// The frame size: the size of the layer that shows the clip.
    public var size: Size
    public var fit: VideoFit
    public var muted: Bool
    /// 0...1.
    public var volume: Double

    public init(source: String, size: Size, fit: VideoFit, muted: Bool, volume: Double) {
        self.source = source
        self.size = size
        self.fit = fit
        self.muted = muted
        self.volume = volume
    }
}

/// Frames counted by one player since it was made. An immutable value; any thread.
public struct VideoFrameCounts: Sendable, Equatable {
    /// Frames the decoder handed over.
    public var decoded: Int = 0
    /// Frames dropped before they reached the screen: skipped as late by the decoder or the sink (gaps in the
    /// timestamps), or overtaken by a newer frame before the main thread took them.
    public var dropped: Int = 0

    public init(decoded: Int = 0, dropped: Int = 0) {
        self.decoded = decoded
        self.dropped = dropped
    }
}

/// One clip being decoded: frames come on the decoder's threads and are handed to `onFrame` on the main thread,
/// in order, a little before each is due (the decoder paces them against its clock) and carrying its due time; the
/// widget shows each at the vblank nearest that time (`VideoFrameSchedule`). Implementations: `GStreamerPlayer` (KioskVideo); fakes in tests. Main thread.
public protocol VideoPlayer: AnyObject {
    /// Called on the main thread with each frame, in order, shortly before it is due.
    var onFrame: ((VideoFrame) -> Void)? { get set }
    /// Called on the main thread with what happened to the clip.
    var onEvent: ((VideoPlayerEvent) -> Void)? { get set }
    var state: VideoPlaybackState { get }
    /// Where playback is in the clip, when known.
    var position: Duration? { get }
    /// How long the clip is, when known.
    var duration: Duration? { get }
    var counts: VideoFrameCounts { get }
    func play()
    func pause()
    /// Jumps to `position` (clamped to the clip); the frame there is shown next, whether playing or paused.
    func seek(to position: Duration)
    /// Stops decoding and lets go of the clip; no callback runs after it.
    func close()
    /// From now on, the clip goes on from its start at its end with no gap between its last frame and its first
    /// (`looped`, as its data runs out, in place of `ended`). A player that cannot does nothing, and ends as before.
    func loopSeamlessly()
}

extension VideoPlayer {
    public func loopSeamlessly() {}
}

/// Makes players for the main loop it belongs to. Main thread.
public protocol VideoPlayerMaking: AnyObject {
    /// A player for `request`, already starting to play. Problems opening the clip come later, as a `failed`
    /// event; this throws only when no player can be made at all (the decoder is missing).
    func makePlayer(_ request: VideoPlayerRequest) throws -> any VideoPlayer
}
