import CCairo
import KioskCore

/// The baseline the compositor is measured against: what a simple kiosk does. Every frame it redraws every item,
/// single-threaded, and blends straight into the back buffer, reading it as it goes. It uses the same content
/// drawing and the same painting as the layer path, so both put the same picture on screen; only the work differs.
///
/// A plain `Sendable` value; `render` runs on the calling thread and keeps nothing between calls.
public struct NaiveFrameRenderer: Sendable {
    /// Painted first, over the whole frame. Alpha is ignored: the screen has none.
    public var background: Color

    public init(background: Color = .black) {
        self.background = background
    }

    /// Draws the whole frame into `buffer`: the background, then each item back to front at its frame (scaled when
    /// the frame's size differs from the size the content is drawn at, which here it never does).
    public func render(items: [(content: any LayerContent, frame: Rect)], into buffer: PixelBuffer) throws {
        try CairoCanvas.withCanvas(on: buffer) { canvas in
            let cr = canvas.cairoContext
            paintBackground(background, on: cr)
            for item in items where !item.frame.isEmpty {
                let layer = LayerSurface(size: Size(width: item.frame.width, height: item.frame.height),
                                         isOpaque: item.content.isOpaque)
                try item.content.draw(into: layer, isCancelled: { false })
                paintLayerSurface(layer, frame: item.frame, opacity: 1, clip: nil, on: cr)
            }
        }
    }
}
