import KioskCore
import KioskScene

/// Why a runtime request on the scene failed. `code` is the control protocol's snake_case error code.
/// An immutable value; any thread.
public struct StageError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, Equatable {
        /// No widget, page or key by that name.
        case notFound = "not_found"
        /// A property name or value the widget cannot take.
        case invalidArgument = "invalid_argument"
        /// A scene that failed validation; `message` holds its diagnostics, one a line.
        case invalidScene = "invalid_scene"
        /// A file that could not be read.
        case ioError = "io_error"
        /// What was asked for could not be done now (a web page not loaded, a script that failed or timed out).
        case failed
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}

/// A JSON-shaped value: what `widget.get` returns and `widget.set` takes, independent of any wire format.
/// An immutable value; any thread.
public enum PropertyValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([PropertyValue])
    case object([String: PropertyValue])
}

/// What happened to the scene, for control-socket subscribers and logs. An immutable value; any thread.
public enum StageEvent: Sendable, Equatable {
    /// A scene replaced the previous one (at start, `scene.load`, or live reload). `source` is the path or
    /// `"inline"`.
    case sceneLoaded(source: String, pages: [String])
    /// Data keys changed (the keys and their new values).
    case dataChanged([String: String])
    /// A page became the current one.
    case pageShown(name: String)
    /// Something failed without a request to answer: an invalid scene on live reload, a failed render.
    case error(code: String, message: String)
    /// A video widget started, ended, looped or failed.
    case video(VideoEventReport)
    /// A web widget's page loaded, failed, lost its web process or refused a navigation.
    case web(WebEventReport)
}

/// How `animate` moves a property: the pop animation kinds. An immutable value; any thread.
public enum AnimationRequest: Sendable, Equatable {
    case basic(duration: Double, timing: TimingFunction)
    /// `velocity` nil keeps the velocity of an animation it interrupts (or zero).
    case spring(stiffness: Double, damping: Double, mass: Double, velocity: [Double]?)
    /// Moves from the current value at `velocity` (units per second), slowing by `deceleration` per millisecond
    /// (pop's 0.998); the `to` value of the request is ignored.
    case decay(velocity: [Double], deceleration: Double)
}

/// The runtime scene as the control socket drives it. Main thread only, like the engine that hosts it.
public protocol SceneControlling: AnyObject {
    /// `scene.get`: `{source, size: {width, height}, pages: [name], current_page, data_keys: [..],
    /// widgets: [{id, type, page}]}`.
    var sceneDescription: PropertyValue { get }
    /// `scene.load` from a file: read, validated and measured off the main thread, then built on it;
    /// `completion` runs on the main thread once the new scene is being built (it replaces the current one when
    /// completely rendered), or with `.ioError` / `.invalidScene`, the current scene staying on screen.
    func loadScene(path: String, then completion: @escaping (Result<Void, StageError>) -> Void)
    /// `scene.load` from inline YAML (JSON is YAML); relative image paths resolve against `baseDirectory`. Like
    /// `loadScene(path:then:)`, the parsing happens off the main thread.
    func loadScene(yaml: String, baseDirectory: String, then completion: @escaping (Result<Void, StageError>) -> Void)
    /// `widget.get`: the widget's current properties, named as in the scene file (`text`, `foreground`, `x`, ...),
    /// plus `type`, `page` and `frame` (`{x, y, width, height}` in pixels, as laid out).
    func widget(id: String) throws(StageError) -> [String: PropertyValue]
    /// `widget.set`: changes properties named as in the scene file; all are checked before any is applied.
    /// `completion` runs on the main thread: at once, unless an image `path` is set, whose file is checked off the
    /// main loop first (a path that is not a regular file is `.invalidArgument`, naming what it is).
    func setWidget(id: String, properties: [String: PropertyValue], then completion: @escaping (Result<Void, StageError>) -> Void)
    /// `data.set`: every key at once; the change shows in one composed frame. Refused whole beyond `DataLimits`.
    func setData(_ values: [String: String]) throws(StageError)
    /// `data.get`: the values of `keys`, or all keys when nil; a key with no value is absent.
    func data(keys: [String]?) -> [String: String]
    /// `page.show`: `transition` nil uses the page's own.
    func showPage(_ name: String, transition: Transition?) throws(StageError)
    /// `animate`: `property` is one of `opacity`, `x`, `y`, `position` (2 values), `scale`, `rotation` (degrees),
    /// `foreground`/`background` (4 values, 0...1 RGBA), `value` (progress).
    /// `at`, when given, is when the animation starts, in nanoseconds since the epoch on the group clock in a sync
    /// group (so every member starts it at the same vblank, and one that hears of it late catches up at once), else
    /// on the wall clock; at most `SceneStage.maximumAnimationLead` ahead.
    func animate(id: String, property: String, to: [Double], _ request: AnimationRequest, at: Int64?) throws(StageError)
    /// `listener` hears every `StageEvent`, on the main thread, until the token is cancelled or freed; every
    /// listener hears every event, in the order added (see `Listeners`).
    func addEventListener(_ listener: @escaping (StageEvent) -> Void) -> ListenerToken
}

extension SceneControlling {
    /// `animate` starting at the next frame.
    public func animate(id: String, property: String, to: [Double], _ request: AnimationRequest) throws(StageError) {
        try animate(id: id, property: property, to: to, request, at: nil)
    }
}
