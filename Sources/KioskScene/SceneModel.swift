import Foundation
import KioskCore

/// A validated scene: what the screen shows, page by page. Produced only by `SceneLoader`, so every value in it
/// has passed validation. An immutable value: safe to use and share from any thread.
public struct Scene: Sendable, Equatable {
    public var size: SceneSize
    public var background: Fill?
    /// `background: {image: …}`: a picture over the whole scene, under every page (the `background` colour shows
    /// while it loads, and through its transparent parts). A file, or a URL shown from the asset cache.
    public var backgroundImage: ImageProperties? = nil
    /// `fonts:`: font files (absolute paths, or URLs shown from the asset cache) whose families text may name,
    /// besides the system's; a family of a URL not yet fetched falls back as an unknown one does.
    public var fonts: [String] = []
    /// The font widgets inherit when they name none.
    public var font: Font
    /// Initial values of data-binding keys, shown until the first update arrives.
    public var data: [String: String]
    public var pages: [Page]
    /// Topics whose messages set data keys; the runtime hands them to the MQTT client, if one runs.
    public var dataSources: [DataSource] = []
    /// `data_sources` entries fetched over HTTP (`http:` and `rss:`).
    public var httpDataSources: [HTTPDataSource] = []
    /// `timezone:`: the zone pages' `when:` rules are read in; nil for the system's.
    public var timeZone: String? = nil
    /// `fallback:`: the page shown when no page's rules hold (it is in the loop only then).
    public var fallback: String? = nil
    /// `unsynchronized:`: what the schedule does until the clock is synchronized.
    public var unsynchronized: PageSchedule.Unsynchronized = .fallback

    /// The pages' dayparting (`when:`, `priority:`, `fallback:`), in the scene's time zone or `systemZone`.
    public func pageSchedule(systemZone: TimeZone = .current) -> PageSchedule {
        PageSchedule(entries: pages.map { PageSchedule.Entry(name: $0.name, rules: $0.rules, priority: $0.priority, duration: $0.duration) },
                     fallback: fallback, timeZone: timeZone.flatMap(TimeZone.init(identifier:)) ?? systemZone,
                     unsynchronized: unsynchronized)
    }

    /// Whether anything in the scene follows the wall clock's rules: pages' dayparting, or a video playlist's items
    /// with `when:` rules or a `priority:`.
    public var hasSchedule: Bool {
        pageSchedule().isActive || allWidgets.contains { if case .video(let v) = $0.content { v.isScheduled } else { false } }
    }

    /// The zone the scene's rules (pages' and playlist items') are read in: `timezone:`, else `systemZone`.
    public func scheduleZone(systemZone: TimeZone = .current) -> TimeZone {
        timeZone.flatMap(TimeZone.init(identifier:)) ?? systemZone
    }

    /// All widgets of all pages, containers before their children.
    public var allWidgets: [Widget] { pages.flatMap { $0.widgets.flatMap { $0.flattened } } }
}

/// How big the scene is drawn. An immutable value; any thread.
public enum SceneSize: Sendable, Equatable {
    /// The scene takes the size of the display mode, so one file fits any panel.
    case display
    /// A fixed design size, in pixels.
    case fixed(width: Int, height: Int)
}

/// One screenful of widgets, shown in turn with a transition. An immutable value; any thread.
public struct Page: Sendable, Equatable {
    public var name: String
    /// Seconds the page stays up in a loop; nil stays until told to change.
    public var duration: Double?
    public var transition: Transition
    public var widgets: [Widget]
    public var location: SourceLocation
    /// `duration: video`: the page advances when its first video widget ends (its whole playlist, once).
    public var advancesAfterVideo = false
    /// `when:`: the page is in the loop while any rule holds; empty for always.
    public var rules: [DaypartRule] = []
    /// `priority:`: of the pages whose rules hold, only those of the highest priority are shown.
    public var priority = 0
}

/// How a page replaces the previous one. An immutable value; any thread.
public struct Transition: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable { case cut, fade, slideLeft = "slide-left", slideRight = "slide-right" }
    public var kind: Kind
    /// Seconds; zero for `cut`.
    public var duration: Double
    public var easing: Easing

    public init(kind: Kind, duration: Double, easing: Easing) {
        self.kind = kind
        self.duration = duration
        self.easing = easing
    }

    public static let cut = Transition(kind: .cut, duration: 0, easing: .linear)
}

/// A timing curve, in the names CSS uses. An immutable value; any thread.
public enum Easing: Sendable, Equatable {
    case linear, easeIn, easeOut, easeInOut
    case cubicBezier(Double, Double, Double, Double)

    static let names: [String: Easing] = ["linear": .linear, "ease-in": .easeIn, "ease-out": .easeOut, "ease-in-out": .easeInOut]
}

/// Where a value came from in the scene file, kept so that later stages (rendering, live reload) can still
/// point at the line. An immutable value; any thread.
public struct SourceLocation: Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int
    public var description: String { "\(file):\(line):\(column)" }

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }
}

/// The widget type names a scene may use. An immutable value; any thread.
public enum WidgetType: String, Sendable, CaseIterable {
    case rect, panel, text, image, clock, ticker, progress, qrcode, sparkline, button, fps, video, web, row, column, stack

    public var isContainer: Bool { self == .row || self == .column || self == .stack }
}

/// One widget: placement, style and what it shows. Each becomes a layer when rendering arrives.
/// An immutable value; any thread.
public struct Widget: Sendable, Equatable {
    /// Unique across the scene when given; the control socket and bindings address widgets by it.
    public var id: String?
    public var content: WidgetContent
    public var frame: Frame
    /// Share of the free space along a row's or column's axis; 0 keeps the natural size.
    public var grow: Double
    public var style: Style
    public var onChange: ChangeAnimation?
    public var location: SourceLocation
    /// What a press on the widget (a tap, a click, Enter on a focused button) does; nil only reports it.
    public var onPress: PressAction? = nil

    public var type: WidgetType { content.type }

    /// This widget followed by its descendants, depth first.
    public var flattened: [Widget] { [self] + content.children.flatMap { $0.flattened } }
}

/// What a widget shows, with the properties only that type has. An immutable value; any thread.
public enum WidgetContent: Sendable, Equatable {
    case rect, panel, fps
    case text(TextProperties)
    case image(ImageProperties)
    case clock(ClockProperties)
    case ticker(TickerProperties)
    case progress(ProgressProperties)
    case qrcode(QRCodeProperties)
    case sparkline(SparklineProperties)
    case button(ButtonProperties)
    case video(VideoProperties)
    case web(WebProperties)
    case row(ContainerProperties)
    case column(ContainerProperties)
    case stack(children: [Widget])

    public var type: WidgetType {
        switch self {
        case .rect: .rect
        case .panel: .panel
        case .fps: .fps
        case .text: .text
        case .image: .image
        case .clock: .clock
        case .ticker: .ticker
        case .progress: .progress
        case .qrcode: .qrcode
        case .sparkline: .sparkline
        case .button: .button
        case .video: .video
        case .web: .web
        case .row: .row
        case .column: .column
        case .stack: .stack
        }
    }

    public var children: [Widget] {
        switch self {
        case .row(let c), .column(let c): c.children
        case .stack(let children): children
        default: []
        }
    }
}

/// Absolute placement inside the parent; a nil edge or size is left to layout. An immutable value; any thread.
public struct Frame: Sendable, Equatable {
    public var x: Length?
    public var y: Length?
    public var width: Length?
    public var height: Length?
}

/// A size in pixels or a share of the parent's size. An immutable value; any thread.
public enum Length: Sendable, Equatable {
    case pixels(Double)
    /// 0...100.
    case percent(Double)

    /// The length in pixels inside a parent `parent` pixels long.
    public func resolve(in parent: Double) -> Double {
        switch self {
        case .pixels(let p): p
        case .percent(let p): parent * p / 100
        }
    }
}

/// Look of a widget; nil fields inherit or take the type's default. An immutable value; any thread.
public struct Style: Sendable, Equatable {
    public var background: Fill?
    public var foreground: Color?
    public var cornerRadius: Double?
    public var border: Border?
    /// 0...1.
    public var opacity: Double?
    public var font: Font?

    public init(background: Fill? = nil, foreground: Color? = nil, cornerRadius: Double? = nil, border: Border? = nil,
                opacity: Double? = nil, font: Font? = nil) {
        self.background = background
        self.foreground = foreground
        self.cornerRadius = cornerRadius
        self.border = border
        self.opacity = opacity
        self.font = font
    }
}

/// A solid colour or a linear gradient. An immutable value; any thread.
public enum Fill: Sendable, Equatable {
    case colour(Color)
    /// Colours spread evenly along a line at `angle` degrees (0 = left to right, 90 = top to bottom).
    case linearGradient(colours: [Color], angle: Double)
}

/// An immutable value; any thread.
public struct Border: Sendable, Equatable {
    public var width: Double
    public var colour: Color
}

/// Font request as Pango takes it; unknown families fall back when rendering. An immutable value; any thread.
public struct Font: Sendable, Equatable {
    public var family: String?
    /// Pixels.
    public var size: Double?
    public var weight: FontWeight?

    public static let defaultFamily = "Sans"
}

/// Pango's weight names. An immutable value; any thread.
public enum FontWeight: String, Sendable, CaseIterable {
    case thin, light, normal, medium, semibold, bold, heavy
}

/// An effect played when a widget's bound value changes. An immutable value; any thread.
public enum ChangeAnimation: String, Sendable, CaseIterable {
    case pulse, flash, none
}

/// A number given in the scene or read from a data key. An immutable value; any thread.
public enum NumberSource: Sendable, Equatable {
    case constant(Double)
    /// The key's value mapped from `min...max` onto the property's range.
    case bound(key: String, min: Double, max: Double)
}

/// An immutable value; any thread.
public struct TextProperties: Sendable, Equatable {
    public enum Wrap: String, Sendable, CaseIterable { case none, word, char, wordChar = "word-char" }
    public enum Ellipsize: String, Sendable, CaseIterable { case none, start, middle, end }
    public enum Alignment: String, Sendable, CaseIterable { case left, center, right }
    public var text: Template
    /// The text is Pango markup; a literal `<` must then be written `&lt;`.
    public var markup: Bool
    public var wrap: Wrap
    public var ellipsize: Ellipsize
    public var align: Alignment
    public var maxLines: Int?
    /// Shrink the font until the text fits instead of cutting it.
    public var shrinkToFit: Bool
}

/// An immutable value; any thread.
public struct ImageProperties: Sendable, Equatable {
    public enum Fit: String, Sendable, CaseIterable { case contain, cover, fill, none }
    /// Absolute: resolved against the scene file's folder.
    public var path: String
    public var fit: Fit
    /// Offered to an overlay plane (`plane: true`): scanned out directly where the output has a free one.
    public var plane: Bool
    /// For a `path` that is a URL: seconds between revalidations of the cached copy (`refresh`, 5...86400; default
    /// 300).
    public var refreshSeconds: Int

    public static let defaultRefreshSeconds = 300
    public static let refreshRange = 5...86_400

    public init(path: String, fit: Fit, plane: Bool = false, refreshSeconds: Int = ImageProperties.defaultRefreshSeconds) {
        self.path = path; self.fit = fit; self.plane = plane; self.refreshSeconds = refreshSeconds
    }
}

/// An immutable value; any thread.
public struct ClockProperties: Sendable, Equatable {
    /// strftime(3) format.
    public var format: String
    /// An IANA zone name; nil is the system's zone.
    public var timezone: String?
}

/// An immutable value; any thread.
public struct TickerProperties: Sendable, Equatable {
    public var text: Template
    /// Pixels per second, leftwards.
    public var speed: Double
}

/// An immutable value; any thread.
public struct ProgressProperties: Sendable, Equatable {
    /// 0...1 when constant.
    public var value: NumberSource
}

/// An immutable value; any thread.
public struct QRCodeProperties: Sendable, Equatable {
    public var text: Template
}

/// An immutable value; any thread.
public struct SparklineProperties: Sendable, Equatable {
    /// Data key whose every new value is appended to the series.
    public var bind: String
    /// Values kept; the oldest drops off.
    public var capacity: Int
}

/// An immutable value; any thread.
public struct ButtonProperties: Sendable, Equatable {
    public enum State: String, Sendable, CaseIterable { case normal, pressed, disabled }
    public var label: Template
    /// Style overrides per state, applied over the widget's own style.
    public var states: [State: Style]
    public var enabled: Bool
}

/// A clip or a playlist of clips, decoded by GStreamer. An immutable value; any thread.
public struct VideoProperties: Sendable, Equatable {
    /// One clip of a playlist with its dayparting: `when:` rules (it may play while any holds; none for always) and
    /// `priority:` (of the items that may play, only those of the highest do). An immutable value; any thread.
    public struct Item: Sendable, Equatable {
        public var source: String
        public var rules: [DaypartRule]
        public var priority: Int

        public init(source: String, rules: [DaypartRule] = [], priority: Int = 0) {
            self.source = source
            self.rules = rules
            self.priority = priority
        }
    }

    /// Played in order, those whose rules hold at each item boundary: `source` alone, or the `playlist`.
    public var items: [Item]
    /// The items' clips, in order. Files are absolute paths (resolved against the scene file's folder); URIs
    /// (`scheme://...`) are kept as written. Setting it replaces the playlist with items that have no rules.
    public var sources: [String] {
        get { items.map(\.source) }
        set { items = newValue.map { Item(source: $0) } }
    }
    /// Starts again after the last item (`looped` event); otherwise the widget keeps the last frame.
    public var loop: Bool
    public var fit: VideoFit
    /// No audio at all; otherwise audio goes to the default sink.
    public var muted: Bool
    /// 0...1.
    public var volume: Double
    /// An image shown until the first frame, when a clip fails and while no item is scheduled; nil shows the
    /// widget's background (or black).
    public var placeholder: String?
    /// Seconds between revalidations of the items named by an `https://` or `http://` URL, which play from the
    /// asset cache (`refresh`, 5...86400; default 300, as for images).
    public var refreshSeconds: Int

    public init(items: [Item], loop: Bool, fit: VideoFit, muted: Bool, volume: Double, placeholder: String?,
                refreshSeconds: Int = ImageProperties.defaultRefreshSeconds) {
        self.items = items
        self.loop = loop
        self.fit = fit
        self.muted = muted
        self.volume = volume
        self.placeholder = placeholder
        self.refreshSeconds = refreshSeconds
    }

    public init(sources: [String], loop: Bool, fit: VideoFit, muted: Bool, volume: Double, placeholder: String?) {
        self.init(items: sources.map { Item(source: $0) }, loop: loop, fit: fit, muted: muted, volume: volume, placeholder: placeholder)
    }

    /// Whether any item has `when:` rules or a `priority:`.
    public var isScheduled: Bool { items.contains { !$0.rules.isEmpty || $0.priority != 0 } }

    /// The items' dayparting, in `timeZone` (the scene's), with the scene's `unsynchronized:`.
    public func playlistSchedule(timeZone: TimeZone, unsynchronized: PageSchedule.Unsynchronized) -> PlaylistSchedule {
        PlaylistSchedule(entries: items.map { PlaylistSchedule.Entry(rules: $0.rules, priority: $0.priority) },
                         timeZone: timeZone, unsynchronized: unsynchronized)
    }
}

/// An immutable value; any thread.
public struct ContainerProperties: Sendable, Equatable {
    public enum Alignment: String, Sendable, CaseIterable { case start, center, end, stretch }
    public var spacing: Double
    public var padding: Double
    /// Cross-axis alignment of the children.
    public var align: Alignment
    public var children: [Widget]
}
