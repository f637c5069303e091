import KioskCore
import KioskScene

/// Places a page's widgets: turns the `x`, `y`, `width`, `height` and `grow` of the scene file, and the `spacing`,
/// `padding` and `align` of rows and columns, into whole-pixel frames. Pure and stateless; any thread, as long as
/// `measure` may be called there.
///
/// These are the rules scene authors write against.
///
/// **Absolute placement** — the widgets of a page, the children of a `stack`, and the children of a `row` or
/// `column` that are taken out of the flow (below):
/// - `x` and `y` default to 0; pixels, or percent of the parent's width (`x`) and height (`y`); pixels may be
///   negative.
/// - `width` and `height` are pixels or percent of the parent's width and height. One that is not given is the
///   widget's natural size (the text's, the clock's, the button's, the ticker's height...), the width capped at
///   what is left of the parent right of `x`. A widget without a natural size (typically a rect, panel, image or
///   progress bar; and any row, column or stack at this level) fills the rest of the parent instead: parent
///   width − x, parent height − y. Either way a size is never negative: a widget placed past the parent's edge
///   without a size is empty.
/// - Later widgets are drawn over earlier ones: z-order is the order in the file.
///
/// **Rows and columns** lay their children out left to right (`row`) or top to bottom (`column`), inside `padding`
/// on all four sides, with `spacing` between neighbours. Along that main axis:
/// - a child takes its explicit `width` (row) or `height` (column), pixels or percent of the container's inner
///   size (its size less the padding);
/// - else, with `grow: 0` (the default), its natural size, or 0 when it has none (a rect with neither size nor
///   grow is invisible: give it a size or a grow);
/// - else (`grow` above 0) 0 to start with;
/// - then the free space — the inner size less the children's sizes and the spacings, when that is positive — is
///   shared among the children with a `grow` in proportion to it (`grow: 2` gets twice what `grow: 1` gets). A
///   child with an explicit size and a grow gets its share on top of its size.
///
/// Children start at the container's inner start edge; what is left after the last child stays empty.
///
/// Across (height in a row, width in a column) a child takes its explicit size (percent of the inner cross size);
/// else, with the container's `align: stretch` (the default), the whole inner cross size; else its natural size,
/// or the whole inner cross size when it has none. `align` places children across: `start` (top, left), `center`,
/// `end` (bottom, right); `stretch` places a child with an explicit cross size at the start.
///
/// **Out of the flow**: a child of a row or column with `x` or `y` takes no part in the row or column (no space,
/// no spacing) and is placed as an absolute child of the container — relative to the container's own frame, the
/// padding ignored, like CSS `position: absolute` — over the children before it and under those after it.
///
/// **Natural size of a container** (a row, column or stack inside a row or column, with no explicit size along an
/// axis and, along the main axis, no grow):
/// - a row's width is the sum of its children's natural widths (their pixel widths where given, 0 for a child
///   with neither) plus the spacings and twice the padding; its height the tallest child's natural height plus
///   twice the padding; a column likewise with the axes swapped. Children out of the flow do not count.
/// - a stack's is the box from its origin around those children that have pixel positions (or none) and pixel or
///   natural sizes; a stack with no such child has none and fills.
///
/// **Overflow**: nothing is shrunk. Children that do not fit keep their sizes and reach past the container (or
/// the screen); a container smaller than its padding has an empty inside. Sizes are never negative.
///
/// **Pixels**: everything is computed in fractions and only the edges are rounded, to the nearest pixel in page
/// coordinates. Neighbours therefore share their edges exactly — three `grow: 1` children of a 100 pixel row are
/// 33, 34 and 33 pixels wide, with no gap and no overlap — and equal shares may differ by one pixel.
public enum SceneLayout {
    /// Lays out a page's widgets in a `size` page. `measure(widget, maxWidth)` gives a widget's natural size
    /// (text, clock, button, ticker height...) when set no wider than `maxWidth` pixels (nil: unbounded), or nil
    /// when it has none; it is never asked about rows, columns and stacks, and may be asked more than once about
    /// a widget with different widths.
    public static func layout(
        _ widgets: [Widget], in size: Size, measure: (Widget, _ maxWidth: Double?) -> Size?
    ) -> [LaidOutWidget] {
        withoutActuallyEscaping(measure) { measure in
            let engine = LayoutEngine(measure: measure)
            let page = LayoutBox(x: 0, y: 0, width: Double(max(size.width, 0)), height: Double(max(size.height, 0)))
            return widgets.map { engine.place($0, in: engine.absoluteBox(of: $0, in: page), parentOrigin: (0, 0)) }
        }
    }
}

/// A rectangle in page coordinates, in fractional pixels. A plain value.
struct LayoutBox: Equatable {
    var x: Double
    var y: Double
    var width: Double
    var height: Double
}

/// A size in fractional pixels. A plain value.
struct LayoutSize: Equatable {
    var width: Double
    var height: Double
}

/// One `SceneLayout.layout` call: the measuring function and the rules. Lives for that call only, on its thread.
private struct LayoutEngine {
    let measure: (Widget, Double?) -> Size?

    /// Edges beyond this many pixels are clamped before conversion to `Int`, so an absurd size cannot trap.
    static let edgeLimit = Double(1 << 24)

    // MARK: Placing

    /// The widget with its frame (rounded from `box`) relative to the parent's rounded origin, and its children.
    func place(_ widget: Widget, in box: LayoutBox, parentOrigin: (x: Int, y: Int)) -> LaidOutWidget {
        let left = Self.pixel(box.x), top = Self.pixel(box.y)
        let right = max(left, Self.pixel(box.x + box.width)), bottom = max(top, Self.pixel(box.y + box.height))
        let frame = Rect(x: left - parentOrigin.x, y: top - parentOrigin.y, width: right - left, height: bottom - top)
        let children: [LaidOutWidget]
        switch widget.content {
        case .stack(let stacked):
            children = stacked.map { place($0, in: absoluteBox(of: $0, in: box), parentOrigin: (left, top)) }
        case .row(let container):
            children = flow(container, horizontal: true, in: box, origin: (left, top))
        case .column(let container):
            children = flow(container, horizontal: false, in: box, origin: (left, top))
        default:
            children = []
        }
        return LaidOutWidget(widget: widget, frame: frame, children: children)
    }

    /// Where an absolutely placed widget goes in `parent` (see `SceneLayout`).
    func absoluteBox(of widget: Widget, in parent: LayoutBox) -> LayoutBox {
        let x = widget.frame.x?.resolve(in: parent.width) ?? 0
        let y = widget.frame.y?.resolve(in: parent.height) ?? 0
        let roomWidth = max(parent.width - x, 0), roomHeight = max(parent.height - y, 0)
        var width = widget.frame.width.map { Self.size($0.resolve(in: parent.width)) }
        var height = widget.frame.height.map { Self.size($0.resolve(in: parent.height)) }
        if width == nil || height == nil, !widget.type.isContainer, let natural = measured(widget, maxWidth: width ?? roomWidth) {
            width = width ?? min(natural.width, roomWidth)
            height = height ?? natural.height
        }
        return LayoutBox(x: parent.x + x, y: parent.y + y, width: width ?? roomWidth, height: height ?? roomHeight)
    }

    /// The children of a row (`horizontal`) or column filling `box` (see `SceneLayout`).
    func flow(_ container: ContainerProperties, horizontal: Bool, in box: LayoutBox, origin: (x: Int, y: Int)) -> [LaidOutWidget] {
        let padding = Self.size(container.padding), spacing = Self.size(container.spacing)
        let inner = LayoutBox(x: box.x + padding, y: box.y + padding,
                              width: max(box.width - 2 * padding, 0), height: max(box.height - 2 * padding, 0))
        let innerMain = horizontal ? inner.width : inner.height
        let innerCross = horizontal ? inner.height : inner.width
        let children = container.children
        let inFlow = children.indices.filter { !Self.isOutOfFlow(children[$0]) }

        func mainLength(_ w: Widget) -> Length? { horizontal ? w.frame.width : w.frame.height }

        var main = [Double](repeating: 0, count: children.count)
        var cross = [Double](repeating: 0, count: children.count)
        // A row knows its children's widths only after sharing the free space, so their heights come last; a column
        // needs its children's widths first to measure their heights.
        var naturalWidths: [Int: LayoutSize] = [:]
        if !horizontal {
            for i in inFlow { cross[i] = crossSize(of: children[i], horizontal: false, align: container.align, innerCross: innerCross, width: innerCross) }
        }
        for i in inFlow {
            let child = children[i]
            if let explicit = mainLength(child) {
                main[i] = Self.size(explicit.resolve(in: innerMain))
            } else if child.grow <= 0, let natural = naturalSize(of: child, maxWidth: horizontal ? innerMain : cross[i]) {
                main[i] = horizontal ? natural.width : natural.height
                if horizontal { naturalWidths[i] = natural }
            }
        }
        let taken = inFlow.reduce(0) { $0 + main[$1] } + spacing * Double(max(inFlow.count - 1, 0))
        let free = innerMain - taken
        let totalGrow = inFlow.reduce(0) { $0 + max(children[$1].grow, 0) }
        if free > 0, totalGrow > 0 {
            for i in inFlow where children[i].grow > 0 { main[i] += free * children[i].grow / totalGrow }
        }
        if horizontal {
            for i in inFlow {
                // The height measured with the natural width holds while the width is still that.
                let known = naturalWidths[i].flatMap { $0.width == main[i] ? $0 : nil }
                cross[i] = crossSize(of: children[i], horizontal: true, align: container.align, innerCross: innerCross, width: main[i], known: known)
            }
        }

        var cursor = horizontal ? inner.x : inner.y
        var boxes: [Int: LayoutBox] = [:]
        for i in inFlow {
            let crossStart = horizontal ? inner.y : inner.x
            let slack = innerCross - cross[i]
            // A stretch child has the whole inner cross size, or an explicit one and then sits at the start.
            let offset: Double = switch container.align {
            case .start, .stretch: 0
            case .center: slack / 2
            case .end: slack
            }
            boxes[i] = horizontal
                ? LayoutBox(x: cursor, y: crossStart + offset, width: main[i], height: cross[i])
                : LayoutBox(x: crossStart + offset, y: cursor, width: cross[i], height: main[i])
            cursor += main[i] + spacing
        }
        return children.indices.map { i in
            place(children[i], in: boxes[i] ?? absoluteBox(of: children[i], in: box), parentOrigin: origin)
        }
    }

    /// A flowing child's size across its row (`horizontal`) or column. A row child's natural height is measured at
    /// its final `width`, unless `known` was already measured there; a column child's natural width at the inner
    /// width.
    private func crossSize(of child: Widget, horizontal: Bool, align: ContainerProperties.Alignment, innerCross: Double,
                           width: Double, known: LayoutSize? = nil) -> Double {
        if let explicit = horizontal ? child.frame.height : child.frame.width { return Self.size(explicit.resolve(in: innerCross)) }
        if align == .stretch { return innerCross }
        if horizontal {
            return (known ?? naturalSize(of: child, maxWidth: width))?.height ?? innerCross
        }
        return naturalSize(of: child, maxWidth: innerCross)?.width ?? innerCross
    }

    // MARK: Natural sizes

    /// A widget's natural size: `measure`'s for content, the rules of `SceneLayout` for containers.
    func naturalSize(of widget: Widget, maxWidth: Double?) -> LayoutSize? {
        switch widget.content {
        case .row(let container), .column(let container):
            let horizontal = widget.type == .row
            let padding = Self.size(container.padding), spacing = Self.size(container.spacing)
            let innerMaxWidth = maxWidth.map { max($0 - 2 * padding, 0) }
            let sizes = container.children.filter { !Self.isOutOfFlow($0) }.map { intrinsicSize(of: $0, maxWidth: innerMaxWidth) }
            let mains = sizes.map { horizontal ? $0.width : $0.height }
            let crosses = sizes.map { horizontal ? $0.height : $0.width }
            let mainSize = mains.reduce(0, +) + spacing * Double(max(sizes.count - 1, 0)) + 2 * padding
            let crossSize = (crosses.max() ?? 0) + 2 * padding
            return horizontal ? LayoutSize(width: mainSize, height: crossSize) : LayoutSize(width: crossSize, height: mainSize)
        case .stack(let children):
            var extent: LayoutSize?
            for child in children {
                guard let x = Self.pixels(child.frame.x, default: 0), let y = Self.pixels(child.frame.y, default: 0) else { continue }
                let width = Self.pixels(child.frame.width, default: nil), height = Self.pixels(child.frame.height, default: nil)
                let natural = (width != nil && height != nil) ? nil : naturalSize(of: child, maxWidth: width ?? maxWidth)
                guard let w = width ?? natural?.width, let h = height ?? natural?.height else { continue }
                extent = LayoutSize(width: max(extent?.width ?? 0, x + w), height: max(extent?.height ?? 0, y + h))
            }
            return extent.map { LayoutSize(width: max($0.width, 0), height: max($0.height, 0)) }
        default:
            return measured(widget, maxWidth: maxWidth)
        }
    }

    /// A child's size as its container's natural size counts it: pixel sizes where given, else natural, else 0.
    private func intrinsicSize(of widget: Widget, maxWidth: Double?) -> LayoutSize {
        let width = Self.pixels(widget.frame.width, default: nil), height = Self.pixels(widget.frame.height, default: nil)
        if let width, let height { return LayoutSize(width: width, height: height) }
        let natural = naturalSize(of: widget, maxWidth: width ?? maxWidth)
        return LayoutSize(width: width ?? natural?.width ?? 0, height: height ?? natural?.height ?? 0)
    }

    private func measured(_ widget: Widget, maxWidth: Double?) -> LayoutSize? {
        measure(widget, maxWidth.map { max($0, 0) }).map { LayoutSize(width: Double(max($0.width, 0)), height: Double(max($0.height, 0))) }
    }

    // MARK: Helpers

    static func isOutOfFlow(_ widget: Widget) -> Bool { widget.frame.x != nil || widget.frame.y != nil }

    /// A length in pixels when it does not depend on the parent's size: `default` when absent, nil for percent.
    private static func pixels(_ length: Length?, default value: Double?) -> Double? {
        switch length {
        case nil: value
        case .pixels(let p)?: p
        case .percent?: nil
        }
    }

    /// A size as layout uses it: never negative, never NaN.
    static func size(_ value: Double) -> Double { value > 0 ? value : 0 }

    /// The pixel edge nearest to `value`, clamped so that the conversion cannot trap.
    static func pixel(_ value: Double) -> Int {
        guard !value.isNaN else { return 0 }
        return Int(min(max(value, -edgeLimit), edgeLimit).rounded())
    }
}
