import CGStreamer
import CKioskVideo
import Dispatch
import KioskCore
/// GStreamer for one main loop: initialises the library once, when the first player is made (a kiosk whose scenes
/// have no video never loads GStreamer's registry and plugins), makes `GStreamerPlayer`s, and hands each player
/// what GStreamer's threads left in its mailbox when the loop's waker fires. State changes and seeks, which may
/// wait on GStreamer's threads, run on each player's own serial queue, never on the main thread.
///
/// Lives on the main thread.
public final class GStreamerVideo: VideoPlayerMaking {
    private var waker: Waker?
    private var players: [Int: WeakPlayer] = [:]
    private var nextID = 0

    public init(loop: MainLoop) throws {
        waker = try loop.makeWaker { [weak self] in self?.drain() }
    }

    /// GStreamer initialised, and the elements kioskd builds on found, once per process; or why not.
    private static let initialised: Result<Void, VideoError> = {
        var error: UnsafePointer<CChar>?
        guard kiosk_gst_load(&error) == 1 else {
            return .failure(VideoError(error.map { String(cString: $0) } ?? "GStreamer could not be loaded"))
        }
        gst.gst_init!(nil, nil)
        // `aspectratiocrop` (fit: cover, in the bad plugins) is not required: without it a cover clip fails alone.
        for element in ["playbin3", "appsink", "videoconvert", "videoscale"] {
            guard let factory = gst.gst_element_factory_find!(element) else {
                return .failure(VideoError("GStreamer element '\(element)' is missing (install gstreamer1.0-plugins-base)"))
            }
            gst.gst_object_unref!(UnsafeMutableRawPointer(factory))
        }
        return .success(())
    }()

    /// Initialises GStreamer once per process.
    /// - Throws: `VideoError` when GStreamer or the elements kioskd builds on (playbin3, appsink) are missing.
    static func initialise() throws(VideoError) {
        try initialised.get()
    }

    /// - Throws: `VideoError` when GStreamer or the elements kioskd builds on are missing (found out at the first
    ///   player), or the player cannot be built.
    public func makePlayer(_ request: VideoPlayerRequest) throws -> any VideoPlayer {
        guard let waker else { throw VideoError("video: no main loop") }
        try Self.initialise()
        nextID += 1
        let mailbox = PlayerMailbox(id: nextID, waker: waker)
        let player = try GStreamerPlayer(request: request, mailbox: mailbox, video: self)
        players[nextID] = WeakPlayer(player: player)
        return player
    }

    func forget(_ id: Int) {
        players[id] = nil
    }

    private func drain() {
        for (id, entry) in players {
            guard let player = entry.player else {
                players[id] = nil
                continue
            }
            player.takeMailbox()
        }
    }

    private struct WeakPlayer {
        weak var player: GStreamerPlayer?
    }
}

/// A GStreamer pipeline handed between the main thread and its player's queue. The object is reference counted
/// by GStreamer and its methods are thread-safe; this box owns one reference, dropped after the pipeline was set
/// to NULL on that queue.
final class PipelineHandle: @unchecked Sendable {
    let element: UnsafeMutablePointer<GstElement>

    init(_ element: UnsafeMutablePointer<GstElement>) { self.element = element }

    deinit { gst.gst_object_unref!(UnsafeMutableRawPointer(element)) }
}

/// A video failure with the object and the reason. An immutable value; any thread.
public struct VideoError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension String {
    /// The URI GStreamer is given for a scene's `source`: URIs as they are, paths as `file://` URIs.
    var gstreamerURI: String {
        if contains("://") { return self }
        var error: UnsafeMutablePointer<GError>?
        guard let uri = gst.gst_filename_to_uri!(self, &error) else {
            if let error { g_error_free(error) }
            return "file://" + self
        }
        defer { g_free(uri) }
        return String(cString: uri)
    }
}

/// GStreamer's functions, resolved when GStreamer was loaded (`GStreamerVideo.initialise`, which every path into
/// GStreamer passes first): GStreamer is opened with dlopen, not linked (GstLibrary.h).
var gst: KioskGstLibrary { kiosk_gst_api().pointee }
