/// What a web page is asked to show. An immutable value; any thread.
public struct WebPageRequest: Sendable, Equatable {
    public var url: String
    /// The page's size in pixels: the size of the layer that shows it.
    public var size: Size
    public var zoom: Double
    /// Shown where the page draws no background; alpha 0 lets the layers below show through.
    public var background: Color
    public var userAgent: String?
    /// Origins (`scheme://host[:port]`) the page may navigate to beside its own; nil allows any.
    public var allowedOrigins: [String]?
    public var scrollbars: Bool
    /// While the page is loaded, a ping goes to it every `pingInterval` (off the main loop); one unanswered for
    /// `hangTimeout` ends its web process (`hung`, then `processGone`). Nil turns the watch off.
    public var pingInterval: Duration?
    public var hangTimeout: Duration?
    /// Gives the page `window.kioskd` (data, on, emit) while it is at its own origin or an allowed one.
    public var bridge = false

    public init(url: String, size: Size, zoom: Double = 1, background: Color = .white, userAgent: String? = nil,
                allowedOrigins: [String]? = nil, scrollbars: Bool = false, pingInterval: Duration? = nil,
                hangTimeout: Duration? = nil) {
        self.url = url
        self.size = size
        self.zoom = zoom
        self.background = background
        self.userAgent = userAgent
        self.allowedOrigins = allowedOrigins
        self.scrollbars = scrollbars
        self.pingInterval = pingInterval
        self.hangTimeout = hangTimeout
    }
}

/// One frame of a page: its pixels (the page's whole size, premultiplied ARGB32) and the rectangle that changed
/// since the page's previous frame. Made on the web engine's thread after the last write; immutable from then on.
public struct WebFrame: Sendable {
    public let surface: LayerSurface
    public let damage: Rect

    public init(surface: LayerSurface, damage: Rect) {
        self.surface = surface
        self.damage = damage
    }
}

/// What a page reports to its owner, on the main thread. An immutable value; any thread.
public enum WebPageEvent: Sendable, Equatable {
    /// The page finished loading.
    case loaded
    /// The page could not be loaded (the network, the server, a bad address); the message is the engine's.
    case loadFailed(message: String)
    /// The web process ended (a crash, the memory limit, killed); the page shows nothing new until reloaded.
    case processGone(message: String)
    /// A navigation to an origin the widget does not allow (or to a new window) was refused.
    case navigationRefused(url: String)
    /// The main frame went to a new address (a load, a link, a redirect, a script).
    case navigated(url: String)
    /// The loaded page answered no ping for the request's `hangTimeout`: its web process is being ended.
    case hung(message: String)
    /// The page's bridge sent a message (`window.kioskd.emit`): a JSON object `{action, payload}` as text.
    case bridgeMessage(text: String)
    /// The script `id` of `evaluate` ran: with its value as text, or failed with the engine's message.
    case scriptResult(id: UInt64, ok: Bool, text: String)
    /// Tab went past the page's last tab stop (Shift-Tab, `backwards`, before its first; either on a page with none):
    /// the keyboard focus leaves the page.
    case focusLeft(backwards: Bool)
    /// The web engine could not be loaded (its libraries are missing): the page shows nothing, ever.
    case engineUnavailable(message: String)
}

/// A pointer event on a page, in the page's pixels. An immutable value; any thread.
public enum WebPointer: Sendable, Equatable {
    case motion, press, release
}

/// One web page being rendered: frames come on the engine's thread and are handed to `onFrame` on the main thread,
/// the newest only (frames the main thread had no time for are merged, their damage joined). The engine renders no
/// further frame until `frameShown` is called, so a page runs no faster than it is shown. Implementations:
/// `WPEWebPage` (KioskWeb); fakes in tests. Main thread.
public protocol WebPage: AnyObject {
    var onFrame: ((WebFrame) -> Void)? { get set }
    var onEvent: ((WebPageEvent) -> Void)? { get set }
    /// The last frame handed to `onFrame` was shown (or dropped): the engine may render the next.
    func frameShown()
    func load(url: String)
    func reload()
    func resize(to size: Size)
    func pointer(_ kind: WebPointer, x: Int, y: Int)
    /// A keyboard's key, by the kernel's key code (`KEY_A` is 30), pressed or released: the engine maps it through
    /// the system's keymap (with the modifiers held) and gives it to the page's focused element.
    func key(code: UInt32, pressed: Bool)
    /// The keyboard focus enters the page: its first tab stop takes it (its last when `backwards`).
    func focus(backwards: Bool)
    /// A surface of one of the page's frames that nothing shows or holds any more (the caller held its only
    /// reference): the engine may write a later frame into it rather than into new memory.
    func recycle(_ surface: LayerSurface)
    /// Runs `script` in the page; its `scriptResult` event carries the returned id.
    func evaluate(script: String) -> UInt64
    /// Ends the page's web process (a hung page); `processGone` follows, and `reload` starts a new one.
    func terminateProcess()
    /// Stops rendering and lets go of the page; no callback runs after it.
    func close()
}

/// Makes pages for the main loop it belongs to. Main thread.
public protocol WebPageMaking: AnyObject {
    /// A page for `request`, already loading (or waiting for the engine's libraries to load, off the loop). Problems
    /// loading it come later, as events; this throws only when no page can be made at all (the web engine is known
    /// to be missing; found missing by the load, it is the page's `engineUnavailable` event).
    func makePage(_ request: WebPageRequest) throws -> any WebPage
}
