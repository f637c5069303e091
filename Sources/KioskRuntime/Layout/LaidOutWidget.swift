import KioskCore
import KioskScene

/// A widget placed by `SceneLayout`, with its children placed inside it. An immutable value; any thread.
public struct LaidOutWidget: Sendable, Equatable {
    public var widget: Widget
    /// In the parent's coordinates (the page, or the container), whole pixels.
    public var frame: Rect
    public var children: [LaidOutWidget]

    public init(widget: Widget, frame: Rect, children: [LaidOutWidget] = []) {
        self.widget = widget
        self.frame = frame
        self.children = children
    }

    /// This widget and its descendants, depth first (containers before their children, so in drawing order), each
    /// with its frame in the coordinates `frame` is in moved by `origin`: the page's coordinates for a page-level
    /// widget and the default origin.
    public func flattened(origin: (x: Int, y: Int) = (0, 0)) -> [(widget: Widget, frame: Rect)] {
        let absolute = Rect(x: origin.x + frame.x, y: origin.y + frame.y, width: frame.width, height: frame.height)
        return [(widget, absolute)] + children.flatMap { $0.flattened(origin: (absolute.x, absolute.y)) }
    }
}
