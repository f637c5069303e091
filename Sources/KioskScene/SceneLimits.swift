import KioskCore

/// Bounds on what a scene file may hold. They keep a broken or hostile file from exhausting memory or the stack
/// of whoever validates it (the daemon on live reload), long before a real scene comes near them; and the kind of
/// video source it may name, which the kiosk's configuration decides.
/// An immutable value; any thread.
public struct SceneLimits: Sendable, Equatable {
    public var maximumBytes: Int
    /// Containers inside containers; a page's own widgets are level 1.
    public var maximumDepth: Int
    public var maximumWidgets: Int
    /// `memory.max_image_pixels`: an image whose header declares more pixels is an error at its `path`.
    public var maximumImagePixels: Int
    /// `video.allowed_schemes`: a video source (a widget's `source`, a `playlist` entry) with another scheme is an
    /// error at its path; the video widgets of the stage check what `video.load` gives them against it too.
    public var videoSchemes: VideoSchemes

    public init(maximumBytes: Int = 4 * 1024 * 1024, maximumDepth: Int = 32, maximumWidgets: Int = 5000,
                maximumImagePixels: Int = ImagePixelLimit.defaultMaximum, videoSchemes: VideoSchemes = VideoSchemes()) {
        self.maximumBytes = maximumBytes
        self.maximumDepth = maximumDepth
        self.maximumWidgets = maximumWidgets
        self.maximumImagePixels = maximumImagePixels
        self.videoSchemes = videoSchemes
    }

    /// YAML nodes per widget level (a widget mapping, its `children` sequence) plus room for styles: flow
    /// collections nested deeper than this cannot be a valid scene, so they are refused before YAML composes
    /// them (composing recurses once per level).
    var maximumFlowDepth: Int { 2 * maximumDepth + 16 }
}
