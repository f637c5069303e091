import Foundation
import KioskCore
import KioskScene
import Logging

private let logger = Logger(label: "kioskd.web")

/// What a web widget reports to the stage, for `web` events. An immutable value; any thread.
public struct WebEventReport: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable {
        /// The page finished loading.
        case loaded
        /// The page could not be loaded: the last frame (or the placeholder) stays, and it is loaded again after
        /// a backoff delay.
        case loadFailed = "load_failed"
        /// The web process ended: the last frame stays, and the page is loaded again (in a new web process) after
        /// a backoff delay.
        case processGone = "process_gone"
        /// A navigation away from the allowed origins (or to a new window) was refused.
        case navigationRefused = "navigation_refused"
    }

    /// The widget's id, when it has one.
    public var id: String?
    public var kind: Kind
    public var url: String
    public var message: String?
}

/// One web widget's page: made when the widget's page is first shown (WebKit is loaded only then), its frames shown
/// on the widget's body layer as they come, each with its damage. Until the first frame the body shows the
/// widget's placeholder (its `placeholder` image, or its background).
///
/// Never black, never stuck. A page that fails to load, and a web process that ends (a crash, the memory limit, a
/// kill), leave the last frame on screen: the page is loaded again after a `RetryBackoff` delay (1 s doubling to
/// 60 s, jittered), for as long as it keeps failing; the backoff starts over once a load finishes. `reload_every`
/// loads the page again on a timer. Main thread, with the stage.
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
    private(set) var refusedNavigations = 0
    private(set) var lastError: String?
    private(set) var state = "idle"
    var onReport: ((WebEventReport) -> Void)?
    var problem: String? { lastError ?? (maker == nil ? Self.noEngine : nil) }
    static let noEngine = "web pages are not available (WPE WebKit was not set up)"

    init(node: WidgetNode, properties: WebProperties, engine: LayerEngine, maker: (any WebPageMaking)?,
         retryBackoff: RetryBackoff) {
        self.node = node
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
        let request = WebPageRequest(url: properties.url, size: size, zoom: properties.zoom, background: pageBackground,
                                     userAgent: properties.userAgent, allowedOrigins: properties.allowedOrigins,
                                     scrollbars: properties.scrollbars)
        do {
            let made = try maker.makePage(request)
            made.onFrame = { [weak self] frame in self?.show(frame) }
            made.onEvent = { [weak self] event in self?.handle(event) }
            page = made
            requestedSize = size
            state = "loading"
            loads += 1
            armReload()
        } catch {
            lastError = "\(error)"
            state = "failed"
            logger.error("web \(node.id ?? properties.url): \(error)")
            onReport?(WebEventReport(id: node.id, kind: .loadFailed, url: properties.url, message: "\(error)"))
        }
    }

    private func show(_ frame: WebFrame) {
        framesReceived += 1
        guard let body = node.body, frame.surface.size == body.frame.size else {
            // A frame of the size before a resize: the next one comes at the new size.
            page?.frameShown()
            return
        }
        engine.showExternalSurface(frame.surface, on: body) { [weak self] wasShown in
            guard let self else { return }
            if wasShown {
                framesShown += 1
                lastSurface = frame.surface
            }
            page?.frameShown()
        }
    }

    private func handle(_ event: WebPageEvent) {
        switch event {
        case .loaded:
            state = "loaded"
            lastError = nil
            backoff.reset()
            onReport?(WebEventReport(id: node.id, kind: .loaded, url: properties.url, message: nil))
        case .loadFailed(let message):
            failed(kind: .loadFailed, message: message)
        case .processGone(let message):
            processExits += 1
            failed(kind: .processGone, message: message)
        case .navigationRefused(let url):
            refusedNavigations += 1
            logger.warning("web \(node.id ?? properties.url): navigation to \(url) refused (not in allowed_origins)")
            onReport?(WebEventReport(id: node.id, kind: .navigationRefused, url: url, message: nil))
        }
    }

    /// Keeps the last frame, reports once per failure, and loads the page again after the backoff delay.
    private func failed(kind: WebEventReport.Kind, message: String) {
        failures += 1
        state = kind == .processGone ? "process_gone" : "failed"
        lastError = message
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

    /// `web.load`: another address for this widget until the scene is loaded again.
    func load(url: String) {
        properties.url = url
        reload()
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

    /// A pointer event at (x, y) in the widget's body, in the page's pixels.
    func pointer(_ kind: WebPointer, x: Int, y: Int) {
        page?.pointer(kind, x: x, y: y)
    }

    func close() {
        retryTimer?.cancel()
        retryTimer = nil
        reloadTimer?.cancel()
        reloadTimer = nil
        page?.close()
        page = nil
        state = "closed"
    }
}
