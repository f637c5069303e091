import Foundation
import KioskCore
import KioskRender
import KioskScene
import Logging

private let logger = Logger(label: "kioskd.web")

/// What a web widget reports to the stage, for `web` events. An immutable value; any thread.
public struct WebEventReport: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        /// The page finished loading.
        case loaded
        /// The page could not be loaded: the last frame (or the placeholder) stays, with the offline badge, and it
        /// is loaded again after a backoff delay.
        case failed
        /// The web process ended (a crash, its memory limit, killed) or stopped answering: the last frame stays,
        /// and the page is loaded again in a new web process after a backoff delay.
        case crashed
        /// The main frame went to a new address.
        case navigated
        /// A navigation away from the allowed origins (or to a new window) was refused.
        case refused
        /// The page's bridge emitted an action (`window.kioskd.emit(action, payload)`), as an `on_press` `emit` does.
        case emit
    }

    /// The widget's id, when it has one.
    public var id: String?
    public var kind: Kind
    public var url: String
    public var message: String?
    /// For `emit`: the action's name, and its payload as JSON text.
    public var action: String? = nil
    public var payload: String? = nil
}

/// One web widget's page: made when the widget's page is first shown (WebKit is loaded only then), its frames shown
/// on the widget's body layer as they come, each with its damage. Until the first frame the body shows the
/// widget's placeholder (its `placeholder` image, or its background).
///
/// Never black, never stuck. A page that fails to load, and a web process that ends (a crash, the memory limit, a
/// kill), leave the last frame on screen: the page is loaded again after a `RetryBackoff` delay (1 s doubling to
/// 60 s, jittered), for as long as it keeps failing; the backoff starts over once a load finishes. `reload_every`
/// loads the page again on a timer. While the page shown is not the one asked for (a failed load, an ended web
/// process), a small badge (`offline_badge`) sits in the widget's corner over the last frame.
///
/// Hangs. While a page is loaded, a ping (a one-line script) goes to its web process every `pingInterval`, from the
/// web engine's own thread (an idle kiosk's loop does not wake for it); a ping unanswered for `hangTimeout` ends the
/// web process, which is then handled as a crash. Both are `HangWatch.standard` (5 s, 10 s) unless a test shortens
/// them. Main thread, with the stage.
final class WebSlot {
    let node: WidgetNode
    private(set) var properties: WebProperties
    private unowned let engine: LayerEngine
    private let maker: (any WebPageMaking)?
    private var backoff: RetryBackoff
    private(set) var page: (any WebPage)?
    private var retryTimer: TimerHandle?
    private(set) var retryDue: MonotonicInstant?
    private var reloadTimer: TimerHandle?
    private var requestedSize: Size?
    private(set) var lastSurface: LayerSurface?
    private(set) var framesReceived = 0
    private(set) var framesShown = 0
    private(set) var loads = 0
    private(set) var failures = 0
    private(set) var processExits = 0
    /// Web processes started again after one ended or hung (`web_restarts`).
    private(set) var restarts = 0
    private(set) var hangs = 0
    /// How often a loaded page is pinged, and how long an unanswered ping (or a `web.eval` script) may wait.
    struct HangWatch {
        var pingInterval: Duration
        var hangTimeout: Duration
        static let standard = HangWatch(pingInterval: .seconds(5), hangTimeout: .seconds(10))
        /// A shorter watch for tests: a ping every half of `hangTimeout`, as in the standard one.
        init(hangTimeout: Duration) { self.init(pingInterval: hangTimeout / 2, hangTimeout: hangTimeout) }
        init(pingInterval: Duration, hangTimeout: Duration) {
            self.pingInterval = pingInterval
            self.hangTimeout = hangTimeout
        }
    }
    private let hangWatch: HangWatch
    /// Scripts of `evaluate` waiting for their answer.
    private var scripts: [UInt64: (Result<String, StageError>) -> Void] = [:]
    /// Over the last frame while the page shown is not the one asked for.
    private var badge: Layer?
    /// The address the main frame is at (after redirects and links).
    private(set) var currentURL: String?
    /// A crash or hang is being recovered from: the next load that finishes counts a restart.
    private var restarting = false
    /// Errors that are not a request's answer (crashes, hangs) for the stage's `error` events.
    var onError: ((String) -> Void)?
    private(set) var refusedNavigations = 0
    private(set) var lastError: String?
    private(set) var state = "idle"
    var onReport: ((WebEventReport) -> Void)?
    var problem: String? { lastError ?? (maker == nil ? Self.noEngine : nil) }
    static let noEngine = "web pages are not available (WPE WebKit was not set up)"

    init(node: WidgetNode, properties: WebProperties, engine: LayerEngine, maker: (any WebPageMaking)?,
         retryBackoff: RetryBackoff, hangWatch: HangWatch = .standard) {
        self.node = node
        self.hangWatch = hangWatch
        self.properties = properties
        self.engine = engine
        self.maker = maker
        backoff = retryBackoff
    }

    private var pageBackground: Color {
        if case .colour(let c)? = node.widget.style.background { return c }
        return .white
    }

    /// Makes the page, if it has none yet.
    func start() {
        guard page == nil, let maker, let body = node.body else { return }
        let size = body.frame.size
        guard size.width > 0, size.height > 0 else { return }
        let made = WebPageRequest(url: properties.url, size: size, zoom: properties.zoom, background: pageBackground,
                                     userAgent: properties.userAgent, allowedOrigins: properties.allowedOrigins,
                                     scrollbars: properties.scrollbars, pingInterval: hangWatch.pingInterval,
                                     hangTimeout: hangWatch.hangTimeout)
        var request = made
        request.bridge = properties.bridge
        do {
            let newPage = try maker.makePage(request)
            newPage.onFrame = { [weak self] frame in self?.show(frame) }
            newPage.onEvent = { [weak self] event in self?.handle(event) }
            page = newPage
            requestedSize = size
            state = "loading"
            loads += 1
            armReload()
        } catch {
            unavailable("\(error)")
        }
    }

    /// No page can be made (the web engine is missing): the placeholder stays, and `web.reload` tries again.
    private func unavailable(_ message: String) {
        page?.close()
        page = nil
        reloadTimer?.cancel()
        reloadTimer = nil
        lastError = message
        state = "failed"
        logger.error("web \(node.id ?? properties.url): \(message)")
        onReport?(WebEventReport(id: node.id, kind: .failed, url: properties.url, message: message))
    }

    /// The newest frame a new web process made before its page finished loading: shown at the load's end, so
    /// the blank document a new process paints first never replaces the last frame.
    private var heldFrame: WebFrame?

    private func show(_ frame: WebFrame) {
        framesReceived += 1
        if restarting {
            heldFrame = frame
            page?.frameShown()
            return
        }
        present(frame, acknowledging: true)
    }

    /// Puts `frame` on the body. `acknowledging` tells WebKit it may render the next once the frame is shown (a held
    /// frame was acknowledged when it was held).
    private func present(_ frame: WebFrame, acknowledging: Bool) {
        guard let body = node.body, frame.surface.size == body.frame.size else {
            // A frame of the size before a resize: the next one comes at the new size.
            if acknowledging { page?.frameShown() }
            return
        }
        engine.showExternalSurface(frame.surface, on: body) { [weak self] wasShown in
            guard let self else { return }
            if wasShown {
                framesShown += 1
                replaceLastSurface(with: frame.surface)
            }
            if acknowledging { page?.frameShown() }
        }
    }

    /// The frame shown now replaces the one before, whose surface goes back to the page to be written again when
    /// nothing else holds it (the engine let go of it once the new frame was shown).
    private func replaceLastSurface(with surface: LayerSurface) {
        guard var previous = lastSurface, previous !== surface else {
            lastSurface = surface
            return
        }
        lastSurface = surface
        if isKnownUniquelyReferenced(&previous) { page?.recycle(previous) }
    }

    private func handle(_ event: WebPageEvent) {
        switch event {
        case .loaded:
            state = "loaded"
            lastError = nil
            backoff.reset()
            if restarting {
                restarting = false
                restarts += 1
                if let held = heldFrame {
                    heldFrame = nil
                    present(held, acknowledging: false)
                }
            }
            setBadge(false)
            onReport?(WebEventReport(id: node.id, kind: .loaded, url: currentURL ?? properties.url, message: nil))
            watchFirstFrame()
            if properties.bridge, let data = dataSource?() { pushData(data) }
        case .loadFailed(let message):
            failed(kind: .failed, message: message)
        case .processGone(let message):
            processExits += 1
            failScripts("the web process ended")
            restarting = true
            onError?("web \(node.id ?? properties.url): \(message)")
            failed(kind: .crashed, message: message)
        case .navigationRefused(let url):
            refusedNavigations += 1
            logger.warning("web \(node.id ?? properties.url): navigation to \(url) refused (not in allowed_origins)")
            onReport?(WebEventReport(id: node.id, kind: .refused, url: url, message: nil))
        case .navigated(let url):
            currentURL = url
            onReport?(WebEventReport(id: node.id, kind: .navigated, url: url, message: nil))
        case .bridgeMessage(let text):
            guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
                  let action = object["action"] as? String, !action.isEmpty, action.utf8.count <= 256 else {
                logger.warning("web \(node.id ?? properties.url): a bridge message that is not {action, payload} was ignored")
                return
            }
            let payload = object["payload"].flatMap { value -> String? in
                guard !(value is NSNull) else { return nil }
                return (try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])).map { String(decoding: $0, as: UTF8.self) }
            }
            onReport?(WebEventReport(id: node.id, kind: .emit, url: currentURL ?? properties.url, message: nil,
                                     action: action, payload: payload))
        case .hung(let message):
            hangs += 1
            logger.error("web \(node.id ?? properties.url): \(message); ending its web process")
        case .scriptResult(let id, let ok, let text):
            scripts.removeValue(forKey: id)?(ok ? .success(text) : .failure(StageError(.failed, "the script failed: \(text)")))
        case .focusLeft(let backwards):
            onFocusLeft?(backwards)
        case .engineUnavailable(let message):
            unavailable(message)
        }
    }

    /// Keeps the last frame, reports once per failure, and loads the page again after the backoff delay.
    private func failed(kind: WebEventReport.Kind, message: String) {
        failures += 1
        state = kind == .crashed ? "crashed" : "failed"
        lastError = message
        setBadge(true)
        let delay = backoff.nextDelay()
        logger.error("web \(node.id ?? properties.url): \(message); loading it again in \(delay)")
        onReport?(WebEventReport(id: node.id, kind: kind, url: properties.url, message: message))
        retryTimer?.cancel()
        retryDue = engine.loop.now + delay
        retryTimer = engine.loop.addTimer(after: delay) { [weak self] in
            guard let self else { return }
            retryTimer = nil
            retryDue = nil
            loadAgain()
        }
    }

    private func loadAgain() {
        guard let page else { return start() }
        state = "loading"
        loads += 1
        page.load(url: properties.url)
    }

    private func armReload() {
        reloadTimer?.cancel()
        reloadTimer = nil
        guard let seconds = properties.reloadEverySeconds else { return }
        reloadTimer = engine.loop.addTimer(after: .seconds(seconds), repeating: .seconds(seconds)) { [weak self] in
            guard let self, retryTimer == nil else { return }
            loadAgain()
        }
    }

    /// `web.reload`: the page loaded again now (a pending retry is replaced).
    func reload() {
        retryTimer?.cancel()
        retryTimer = nil
        retryDue = nil
        if page == nil { start() } else { loadAgain() }
    }

    /// `web.navigate`: another address for this widget until the scene is loaded again.
    func load(url: String) {
        properties.url = url
        reload()
    }

    /// Whether `url` may be shown in this widget: any, without `allowed_origins`; else the scene's page's origin or
    /// one of those.
    func allows(_ url: String) -> Bool {
        guard let allowed = properties.allowedOrigins else { return true }
        guard let origin = WebProperties.origin(Self.originPart(of: url)) else { return false }
        if let own = WebProperties.origin(Self.originPart(of: sceneURL)), own == origin { return true }
        return allowed.contains(origin)
    }

    /// The address the scene gives the widget.
    private var sceneURL: String {
        if case .web(let w) = node.widget.content { return w.url }
        return properties.url
    }

    private static func originPart(of url: String) -> String {
        guard let components = URLComponents(string: url) else { return url }
        var origin = URLComponents()
        origin.scheme = components.scheme
        origin.host = components.host
        origin.port = components.port
        return origin.string ?? url
    }

    /// `web.eval`: runs `script` in the page; `done` gets its value as text, or why not.
    func evaluate(_ script: String, done: @escaping (Result<String, StageError>) -> Void) {
        guard let page, state == "loaded" else {
            return done(.failure(StageError(.failed, "the page is not loaded (state \(state))")))
        }
        let id = page.evaluate(script: script)
        scripts[id] = done
        let timeout = hangWatch.hangTimeout
        _ = engine.loop.addTimer(after: timeout) { [weak self] in
            self?.scripts.removeValue(forKey: id)?(.failure(StageError(.failed, "the script did not finish within \(timeout)")))
        }
    }

    private func failScripts(_ why: String) {
        let waiting = scripts
        scripts.removeAll()
        for done in waiting.values { done(.failure(StageError(.failed, why))) }
    }

    /// Shows or hides the offline badge over the widget's last frame.
    private func setBadge(_ shown: Bool) {
        guard let text = properties.offlineBadge else { return }
        if !shown {
            badge?.isHidden = true
            return
        }
        let layer: Layer
        if let badge {
            layer = badge
        } else {
            layer = Layer(name: "\(node.layer.name ?? "web").badge")
            layer.content = RectContent(fill: .solid(Color(red: 0, green: 0, blue: 0, alpha: 0.75)), cornerRadius: 4)
            let label = Layer(name: "\(node.layer.name ?? "web").badge.text")
            label.content = TextContent(text, font: "Sans Bold 12", color: .white, alignment: .center, wraps: false,
                                        centersVertically: true)
            layer.addChild(label)
            node.layer.addChild(layer)
            badge = layer
        }
        let width = min(max(12 * text.count, 64), node.layer.frame.size.width)
        layer.frame = Rect(x: node.layer.frame.size.width - width - 4, y: 4, width: width, height: min(22, node.layer.frame.size.height))
        layer.children.first?.frame = Rect(x: 0, y: 0, width: width, height: layer.frame.size.height)
        layer.isHidden = false
    }

    /// After `widget.set` or a relayout: a page whose widget changed size is told its new size; the last frame is
    /// shown again over the placeholder the change rendered.
    func widgetChanged() {
        guard let body = node.body else { return }
        if let page, let requestedSize, body.frame.size != requestedSize, body.frame.size.width > 0, body.frame.size.height > 0 {
            self.requestedSize = body.frame.size
            page.resize(to: body.frame.size)
        } else if let lastSurface, lastSurface.size == body.frame.size {
            engine.showExternalSurface(lastSurface, on: body)
        }
    }

    /// A page that loaded and drew nothing within this long is reported (the web process cannot draw: no EGL display,
    /// a sandbox that keeps it from its memory); once per page.
    static let firstFrameTimeout: Duration = .seconds(10)
    private var firstFrameTimer: TimerHandle?
    private var reportedNoFrame = false

    private func watchFirstFrame() {
        guard framesReceived == 0, !reportedNoFrame, firstFrameTimer == nil else { return }
        firstFrameTimer = engine.loop.addTimer(after: Self.firstFrameTimeout) { [weak self] in
            guard let self else { return }
            firstFrameTimer = nil
            guard framesReceived == 0, page != nil, !reportedNoFrame else { return }
            reportedNoFrame = true
            let message = "web \(node.id ?? properties.url): the page loaded but its web process drew no frame in \(Self.firstFrameTimeout) (see the web process's messages in the log: EGL, memory)"
            logger.error("\(message)")
            lastError = message
            onError?(message)
        }
    }

    /// The scene's data, for the bridge (the stage's values).
    var dataSource: (() -> [String: String])?

    /// The bridge's data: `values` set in the page's `window.kioskd.data`, and its `on` handlers called.
    func pushData(_ values: [String: String]) {
        guard properties.bridge, state == "loaded", let page, !values.isEmpty,
              let json = try? JSONSerialization.data(withJSONObject: values) else { return }
        _ = page.evaluate(script: "window.kioskd && window.kioskd._set(\(String(decoding: json, as: UTF8.self)))")
    }

    /// A scene point (engine root coordinates) in the page's pixels, clamped to the page.
    func pagePoint(fromRootX x: Double, y: Double) -> (x: Int, y: Int) {
        guard let body = node.body, let local = body.convertFromTreeRoot(x: x, y: y) else { return (0, 0) }
        let size = body.frame.size
        return (min(max(Int(local.x.rounded(.down)), 0), max(size.width - 1, 0)),
                min(max(Int(local.y.rounded(.down)), 0), max(size.height - 1, 0)))
    }

    /// Tab went past the page's last tab stop (`backwards`: Shift-Tab before its first).
    var onFocusLeft: ((_ backwards: Bool) -> Void)?

    /// A keyboard's key (the kernel's code) for the page's focused element.
    func key(code: UInt32, pressed: Bool) {
        page?.key(code: code, pressed: pressed)
    }

    /// The focus ring entered the widget: the page's first tab stop (last when `backwards`) takes the keys.
    func focus(backwards: Bool) {
        page?.focus(backwards: backwards)
    }

    /// A pointer event at (x, y) in the widget's body, in the page's pixels.
    func pointer(_ kind: WebPointer, x: Int, y: Int) {
        page?.pointer(kind, x: x, y: y)
    }

    func close() {
        retryTimer?.cancel()
        retryTimer = nil
        reloadTimer?.cancel()
        reloadTimer = nil
        firstFrameTimer?.cancel()
        firstFrameTimer = nil
        failScripts("the widget was closed")
        badge?.removeFromParent()
        badge = nil
        page?.close()
        page = nil
        state = "closed"
    }
}
