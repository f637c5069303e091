import KioskCore
import KioskRender
import KioskScene

/// One widget of the running scene: its model (changed by `widget.set`), the layer that shows it, and the state
/// its moving parts keep. Main thread, with the layer tree.
///
/// Layers: `layer` is placed where layout put the widget and draws the widget's box (background, corner radius,
/// border) when it has one; `body` is a child inset by the border that draws what the widget shows (text, image,
/// clock, ...), so a text change re-renders the text alone. A ticker's body is the moving strip inside a layer
/// that clips to its bounds; a progress bar's body is a coloured fill whose width follows the value, which moves
/// pixels without any render. An enabled button has a second child, `pressedBody`, that holds its pressed look,
/// rendered ahead while hidden: a press only swaps which of the two is shown, so it needs no render.
final class WidgetNode {
    var widget: Widget
    let page: String
    let layer: Layer
    var body: Layer?
    /// An enabled button's pressed look (`<id>.pressed`), a sibling of `body` with the same frame; shown instead of
    /// `body` while a contact holds the button down.
    var pressedBody: Layer?
    var children: [WidgetNode] = []
    /// Whether `widget.set` hid it.
    var isHidden = false
    /// The progress value on screen (it animates towards the bound value).
    var progressShown: Double = 0
    var progressAnimation: LayerEngine.AnimationToken?
    /// The sparkline's series, oldest first.
    var series: [Double] = []
    /// The ticker strip's width, for wrapping around.
    var tickerStripWidth = 0
    var tickerStart: MonotonicInstant?
    var tickerToken: LayerEngine.AnimationToken?
    /// The text last set on a clock, so it re-renders only when the text changes.
    var clockText = ""
    /// Button look, `widget.set {state}`.
    var buttonState: ButtonProperties.State = .normal
    /// Whether a contact (finger, pointer, key) holds the button down now: `pressedBody` is shown.
    var isPressedDown = false

    init(widget: Widget, page: String) {
        self.widget = widget
        self.page = page
        layer = Layer(name: widget.id ?? widget.type.rawValue)
    }

    var id: String? { widget.id }

    /// The data keys whose change redraws this widget.
    var boundKeys: [String] {
        switch widget.content {
        case .text(let t): t.text.keys
        case .ticker(let t): t.text.keys
        case .qrcode(let q): q.text.keys
        case .button(let b): b.label.keys
        case .progress(let p): if case .bound(let key, _, _) = p.value { [key] } else { [] }
        case .sparkline(let s): [s.bind]
        default: []
        }
    }

    /// This node and its descendants, depth first.
    var flattened: [WidgetNode] { [self] + children.flatMap(\.flattened) }
}
