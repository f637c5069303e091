/// A plane of its own an output can show the pointer's cursor on (a KMS cursor plane), instead of compositing it
/// into every frame that the pointer crosses. The image is set once; each placement (or hiding) reaches the screen
/// with the output's next commit, which the caller asks the engine for (`LayerEngine.setNeedsPresent`), so moving
/// the cursor never blocks and never adds a commit of its own while a flip is in flight.
///
/// Outputs without one (the headless backend, fbdev, legacy commits) composite the cursor as a layer. Lives on the
/// main thread, with the output.
public protocol CursorPlane: AnyObject {
    /// What `stats` calls it: `plane 42`.
    var name: String { get }
    /// The largest image it takes, in panel pixels.
    var maximumImageSize: Size { get }
    /// False once the output can no longer show it (it fell back to legacy commits): composite instead.
    var isUsable: Bool { get }
    /// Sets the image shown (in panel orientation). Throws when it is larger than `maximumImageSize`.
    func setImage(_ image: CursorImage) throws
    /// Shows the image with its top-left corner at `origin` in panel pixels (it may lie partly off the panel), or
    /// hides it (nil), from the output's next commit on.
    func place(at origin: (x: Int, y: Int)?)
}

/// A cursor image: premultiplied ARGB words (Cairo's ARGB32 and DRM's ARGB8888 on little-endian), row by row, and
/// the hotspot, the point of the image that sits on the pointer. An immutable value; any thread.
public struct CursorImage: Sendable, Equatable {
    public var size: Size
    public var pixels: [UInt32]
    /// The pointer's spot, in the image's continuous coordinates (the top-left corner is (0, 0)).
    public var hotspot: (x: Double, y: Double)

    public init(size: Size, pixels: [UInt32], hotspot: (x: Double, y: Double)) {
        precondition(pixels.count == size.width * size.height, "cursor image: \(pixels.count) pixels for \(size)")
        self.size = size
        self.pixels = pixels
        self.hotspot = hotspot
    }

    /// The image turned as the output turns the scene (`rotation`), so a cursor drawn for the scene looks on the
    /// panel as the composited one would; the hotspot turns with it.
    public func rotated(_ rotation: OutputRotation) -> CursorImage {
        let turned = rotation.sceneToPanel(sceneSize: size)
        let panelSize = rotation.swapsAxes ? Size(width: size.height, height: size.width) : size
        var out = [UInt32](repeating: 0, count: pixels.count)
        for y in 0..<size.height {
            for x in 0..<size.width {
                let to = rotation.panelRect(Rect(x: x, y: y, width: 1, height: 1), sceneSize: size)
                out[to.y * panelSize.width + to.x] = pixels[y * size.width + x]
            }
        }
        let spot = turned.apply(x: hotspot.x, y: hotspot.y)
        return CursorImage(size: panelSize, pixels: out, hotspot: spot)
    }

    /// Where the image's top-left corner goes for a pointer at `point` (panel pixels).
    public func origin(forPointerAt point: (x: Double, y: Double)) -> (x: Int, y: Int) {
        (Int((point.x - hotspot.x).rounded(.down)), Int((point.y - hotspot.y).rounded(.down)))
    }

    public static func == (l: CursorImage, r: CursorImage) -> Bool {
        l.size == r.size && l.pixels == r.pixels && l.hotspot == r.hotspot
    }
}
