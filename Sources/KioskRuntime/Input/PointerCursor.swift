import KioskCore
import KioskRender

/// The pointer's cursor, composited: an arrow layer above the scene on the engine's root, its tip on the pointer,
/// shown when a pointer device moves or clicks, hidden `hideAfter` seconds after the last of those and at once on
/// any touch (a touchscreen never shows a cursor). It is left out of hit-testing, so it never covers the widget
/// under it, and it stays across scene loads. One timer at a time, re-armed only when it fires, so a stream of
/// motion costs no timer work. Lives on the main thread with the engine.
public final class PointerCursor {
    public static let defaultHideAfter = 3.0

    public let hideAfter: Double
    public let layer: Layer
    private let loop: MainLoop
    private var lastMotion: MonotonicInstant
    private var timer: TimerHandle?

    public init(engine: LayerEngine, hideAfter: Double = PointerCursor.defaultHideAfter) {
        self.hideAfter = hideAfter
        loop = engine.loop
        lastMotion = engine.loop.now
        layer = Layer(frame: Rect(size: CursorContent.size), content: CursorContent(), name: "cursor")
        layer.zPosition = .greatestFiniteMagnitude
        layer.isHitTestable = false
        layer.isHidden = true
        engine.rootLayer.addChild(layer)
    }

    deinit {
        timer?.cancel()
        layer.removeFromParent()
    }

    /// Whether the cursor is drawn now.
    public var isShown: Bool { !layer.isHidden }

    /// The pointer moved (or clicked) at the point, in the engine root's coordinates: show the cursor there.
    public func show(at point: (x: Double, y: Double)) {
        lastMotion = loop.now
        let frame = Rect(x: Int(point.x.rounded(.down)), y: Int(point.y.rounded(.down)),
                         width: CursorContent.size.width, height: CursorContent.size.height)
        if layer.frame != frame { layer.frame = frame }
        layer.isHidden = false
        if timer == nil { arm() }
    }

    /// A touch: no cursor.
    public func hide() {
        layer.isHidden = true
        timer?.cancel()
        timer = nil
    }

    private func arm() {
        timer = loop.addTimer(at: lastMotion + .nanoseconds(Int64(hideAfter * 1e9))) { [weak self] in self?.fired() }
    }

    private func fired() {
        timer = nil
        if loop.now - lastMotion >= .nanoseconds(Int64(hideAfter * 1e9)) {
            layer.isHidden = true
        } else {
            arm()
        }
    }
}
