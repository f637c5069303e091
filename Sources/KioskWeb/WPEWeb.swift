import CKioskWeb
import Foundation
import KioskCore

/// Why WPE WebKit cannot make a page. An immutable value; any thread.
public struct WebError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// WPE WebKit for one main loop: loads the library when the first page is made (a kiosk whose scenes have no `web`
/// widget never maps WebKit), makes `WPEWebPage`s, and hands each page what the web thread left in its mailbox when
/// the loop's waker fires. WebKit itself runs on a thread of its own (CKioskWeb), with its web and network processes
/// beside kioskd; frames arrive as shared-memory buffers, copied once into a `LayerSurface`.
///
/// Lives on the main thread.
public final class WPEWeb: WebPageMaking {
    private var waker: Waker?
    private var pages: [ObjectIdentifier: WeakPage] = [:]

    public init(loop: MainLoop) throws {
        waker = try loop.makeWaker { [weak self] in self?.drain() }
    }

    /// What every page of the process shares, set before the first page: where cookies, storage and caches persist
    /// (nil: nowhere) and the web process's memory limit (0: WebKit's own), over which it is ended and reported.
    public static func configure(dataDirectory: String?, memoryLimitMB: Int) {
        kiosk_web_configure(dataDirectory, UInt32(clamping: max(memoryLimitMB, 0)))
    }

    /// Removes every page's cookies, storage and caches.
    public static func clearData() {
        kiosk_web_clear_data()
    }

    /// Whether WPE WebKit can be loaded in this process, or why not.
    public static func availability() -> Result<Void, WebError> {
        var message = [CChar](repeating: 0, count: 512)
        guard kiosk_web_load(&message, message.count) == 1 else {
            return .failure(WebError(String(cString: message)))
        }
        return .success(())
    }

    /// - Throws: `WebError` when WPE WebKit is missing.
    public func makePage(_ request: WebPageRequest) throws -> any WebPage {
        guard let waker else { throw WebError("web: no main loop") }
        try Self.availability().get()
        let mailbox = WebMailbox(waker: waker, opaque: request.background.alpha >= 1)
        let page = try WPEWebPage(request: request, mailbox: mailbox)
        pages[ObjectIdentifier(mailbox)] = WeakPage(page: page)
        return page
    }

    private func drain() {
        for (id, entry) in pages {
            guard let page = entry.page, !page.isClosed else {
                pages[id] = nil
                continue
            }
            page.takeMailbox()
        }
    }

    private struct WeakPage {
        weak var page: WPEWebPage?
    }
}

/// What the web thread leaves for the main thread, one page's worth: the newest frame not yet taken (with the
/// damage of every frame it overtook) and the events in order. Everything behind one lock, the loop woken after
/// each write. Shared across threads, immutable apart from the locked state, hence `Sendable`.
final class WebMailbox: Sendable {
    struct Contents {
        var frame: WebFrame?
        var events: [WebPageEvent] = []
        var isClosed = false
    }

    /// Events beyond this many untaken are dropped (a page that fails in a loop cannot grow the mailbox).
    static let eventCapacity = 64

    let contents = Lock(Contents())
    private let waker: Waker
    let opaque: Bool

    init(waker: Waker, opaque: Bool) {
        self.waker = waker
        self.opaque = opaque
    }

    /// On the web thread: a frame, copied out of WebKit's buffer.
    func deliver(pixels: UnsafePointer<UInt8>, width: Int, height: Int, stride: Int, damage: Rect) {
        let surface = LayerSurface(size: Size(width: width, height: height), isOpaque: opaque)
        for row in 0..<height {
            (surface.bytes + row * surface.stride).copyMemory(from: pixels + row * stride, byteCount: width * 4)
        }
        let delivered = contents.withLock { box -> Bool in
            guard !box.isClosed else { return false }
            var joined = damage
            if let previous = box.frame {
                joined = previous.surface.size == surface.size ? previous.damage.joined(with: damage) : Rect(size: surface.size)
            }
            box.frame = WebFrame(surface: surface, damage: joined)
            return true
        }
        if delivered { waker.wake() }
    }

    /// On the web thread: an event.
    func deliver(_ event: WebPageEvent) {
        let delivered = contents.withLock { box -> Bool in
            guard !box.isClosed, box.events.count < Self.eventCapacity else { return false }
            box.events.append(event)
            return true
        }
        if delivered { waker.wake() }
    }

    func take() -> (frame: WebFrame?, events: [WebPageEvent]) {
        contents.withLock { box in
            defer { box.frame = nil; box.events.removeAll() }
            return (box.frame, box.events)
        }
    }

    func close() {
        contents.withLock { box in
            box.isClosed = true
            box.frame = nil
            box.events.removeAll()
        }
    }
}

/// One page in WPE WebKit. Main thread; its C view lives on the web thread, reached only through CKioskWeb's queue.
public final class WPEWebPage: WebPage {
    public var onFrame: ((WebFrame) -> Void)?
    public var onEvent: ((WebPageEvent) -> Void)?
    private var view: OpaquePointer?
    private let mailbox: WebMailbox
    private(set) var isClosed = false

    init(request: WebPageRequest, mailbox: WebMailbox) throws {
        self.mailbox = mailbox
        let context = Unmanaged.passRetained(mailbox).toOpaque()
        var callbacks = kiosk_web_callbacks()
        callbacks.frame = { context, pixels, width, height, stride, x, y, w, h in
            guard let context, let pixels else { return }
            Unmanaged<WebMailbox>.fromOpaque(context).takeUnretainedValue().deliver(
                pixels: pixels, width: Int(width), height: Int(height), stride: Int(stride),
                damage: Rect(x: Int(x), y: Int(y), width: Int(w), height: Int(h)))
        }
        callbacks.event = { context, kind, message in
            guard let context else { return }
            let text = message.map { String(cString: $0) } ?? ""
            let event: WebPageEvent? = switch Int(kind) {
            case Int(KIOSK_WEB_LOADED): .loaded
            case Int(KIOSK_WEB_LOAD_FAILED): .loadFailed(message: text)
            case Int(KIOSK_WEB_PROCESS_GONE): .processGone(message: text)
            case Int(KIOSK_WEB_NAVIGATION_REFUSED): .navigationRefused(url: text)
            case Int(KIOSK_WEB_NAVIGATED): .navigated(url: text)
            case Int(KIOSK_WEB_HUNG): .hung(message: text)
            case Int(KIOSK_WEB_MESSAGE): .bridgeMessage(text: text)
            case Int(KIOSK_WEB_FOCUS_LEFT): .focusLeft(backwards: text == "backward")
            default: nil
            }
            if let event { Unmanaged<WebMailbox>.fromOpaque(context).takeUnretainedValue().deliver(event) }
        }
        callbacks.script = { context, id, ok, text in
            guard let context else { return }
            let event = WebPageEvent.scriptResult(id: id, ok: ok == 1, text: text.map { String(cString: $0) } ?? "")
            Unmanaged<WebMailbox>.fromOpaque(context).takeUnretainedValue().deliver(event)
        }
        callbacks.closed = { context in
            guard let context else { return }
            Unmanaged<WebMailbox>.fromOpaque(context).release()
        }
        var options = kiosk_web_options()
        options.width = Int32(clamping: request.size.width)
        options.height = Int32(clamping: request.size.height)
        options.zoom = request.zoom
        options.background_red = request.background.red
        options.background_green = request.background.green
        options.background_blue = request.background.blue
        options.background_alpha = request.background.alpha
        options.hide_scrollbars = request.scrollbars ? 0 : 1
        func milliseconds(_ d: Duration?) -> Int32 { d.map { Int32(clamping: Int64($0.milliseconds.rounded())) } ?? 0 }
        options.ping_interval_ms = milliseconds(request.pingInterval)
        options.hang_timeout_ms = milliseconds(request.hangTimeout)
        options.bridge = request.bridge ? 1 : 0
        let origins: String? = request.allowedOrigins?.joined(separator: "\n")
        let made: OpaquePointer? = request.userAgent.withOptionalCString { agent in
            origins.withOptionalCString { origins in
                options.user_agent = agent
                options.allowed_origins = origins
                return kiosk_web_view_new(request.url, &options, callbacks, context)
            }
        }
        guard let made else {
            Unmanaged<WebMailbox>.fromOpaque(context).release()
            throw WebError("web: WPE WebKit could not make a view")
        }
        view = made
    }

    deinit {
        if !isClosed { close() }
    }

    /// From the factory's drain: what the web thread left, handed on in order (events first, so a failure is known
    /// before the frame that follows a reload).
    func takeMailbox() {
        let (frame, events) = mailbox.take()
        for event in events {
            guard !isClosed else { return }
            onEvent?(event)
        }
        if let frame, !isClosed { onFrame?(frame) }
    }

    public func frameShown() {
        guard let view, !isClosed else { return }
        kiosk_web_view_frame_done(view)
    }

    public func load(url: String) {
        guard let view, !isClosed else { return }
        kiosk_web_view_load(view, url)
    }

    public func reload() {
        guard let view, !isClosed else { return }
        kiosk_web_view_reload(view)
    }

    public func resize(to size: Size) {
        guard let view, !isClosed else { return }
        kiosk_web_view_resize(view, Int32(clamping: size.width), Int32(clamping: size.height))
    }

    public func pointer(_ kind: WebPointer, x: Int, y: Int) {
        guard let view, !isClosed else { return }
        let code: Int32 = switch kind {
        case .motion: 0
        case .press: 1
        case .release: 2
        }
        kiosk_web_view_pointer(view, code, Int32(clamping: x), Int32(clamping: y), Self.milliseconds())
    }

    public func key(code: UInt32, pressed: Bool) {
        guard let view, !isClosed else { return }
        kiosk_web_view_key(view, code, pressed ? 1 : 0, Self.milliseconds())
    }

    public func focus(backwards: Bool) {
        guard let view, !isClosed else { return }
        kiosk_web_view_focus(view, backwards ? 1 : 0)
    }

    /// Event times for WebKit: milliseconds of the monotonic clock, wrapping.
    private static func milliseconds() -> UInt32 {
        UInt32(truncatingIfNeeded: DispatchTime.now().uptimeNanoseconds / 1_000_000)
    }

    private var nextScript: UInt64 = 0

    public func evaluate(script: String) -> UInt64 {
        nextScript += 1
        guard let view, !isClosed else { return nextScript }
        kiosk_web_view_evaluate(view, nextScript, script)
        return nextScript
    }

    public func terminateProcess() {
        guard let view, !isClosed else { return }
        kiosk_web_view_terminate_process(view)
    }

    public func close() {
        guard !isClosed else { return }
        isClosed = true
        mailbox.close()
        onFrame = nil
        onEvent = nil
        if let view { kiosk_web_view_close(view) }
        view = nil
    }
}

private extension Rect {
    /// The smallest rectangle holding both.
    func joined(with other: Rect) -> Rect {
        guard !isEmpty else { return other }
        guard !other.isEmpty else { return self }
        let x0 = Swift.min(x, other.x), y0 = Swift.min(y, other.y)
        return Rect(x: x0, y: y0, width: Swift.max(maxX, other.maxX) - x0, height: Swift.max(maxY, other.maxY) - y0)
    }
}

private extension Optional where Wrapped == String {
    func withOptionalCString<R>(_ body: (UnsafePointer<CChar>?) -> R) -> R {
        switch self {
        case .some(let text): text.withCString { body($0) }
        case .none: body(nil)
        }
    }
}
