import CCairo
import KioskCore
import KioskRender

/// Not product code: the baseline `kioskd bench` measures the engine against, what a kiosk written by hand does.
/// Every frame it redraws every item, single-threaded, into one buffer: the background, then each item's content
/// at its frame with its opacity, clipped to the item's frame and its clipping ancestors (so a ticker's long strip
/// costs only its visible part). Two ways to draw an item, both measured:
/// - `direct`: the content draws straight onto the frame's Cairo context (`CairoCanvas.draw(_:at:clip:opacity:)`),
///   no surface of its own: what a hand-written redraw loop does.
/// - `throughSurfaces`: the content draws into a temporary surface of its size, which is then painted at its frame,
///   as the engine's render workers and compositor do, minus the caching.
///
/// A plain `Sendable` value; `render` runs on the calling thread and keeps nothing between calls.
public struct NaiveFrameRenderer: Sendable {
    public enum Strategy: String, Sendable, CaseIterable {
        case direct
        case throughSurfaces = "through_surfaces"
    }

    public var strategy: Strategy
    /// Painted first, over the whole frame. Alpha is ignored: the screen has none.
    public var background: Color

    public init(strategy: Strategy, background: Color = .black) {
        self.strategy = strategy
        self.background = background
    }

    public func render(items: [SceneItem], into buffer: PixelBuffer) throws {
        try CairoCanvas.withCanvas(on: buffer) { canvas in
            canvas.fill(Color(red: background.red, green: background.green, blue: background.blue, alpha: 1))
            for item in items {
                switch strategy {
                case .direct:
                    try canvas.draw(item.content, at: item.frame, clip: item.clip, opacity: item.opacity)
                case .throughSurfaces:
                    let visible = item.clip.map { item.frame.intersection($0) } ?? item.frame
                    guard !visible.isEmpty else { continue }
                    let layer = LayerSurface(size: item.frame.size, isOpaque: item.content.isOpaque)
                    try item.content.draw(into: layer, isCancelled: { false })
                    canvas.paint(layer, at: item.frame, clip: item.clip, opacity: item.opacity)
                }
            }
        }
    }
}
