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
/// The libraries are loaded on a thread of their own (`WebLibraryLoad`): mapping WebKit and what it brings takes
/// tens of milliseconds (docs/bench-log.md), which the loop does not wait for. Pages made meanwhile are returned at
/// once and open their views when the load is done (their widgets show the placeholder until the first frame, as
/// always); when it fails they report `engineUnavailable`, and later pages are refused with the same error.
///
/// Lives on the main thread.
public final class WPEWeb: WebPageMaking {
    private var waker: Waker?
    private var pages: [ObjectIdentifier: WeakPage] = [:]
    private let library: WebLibraryLoad
    /// Pages made while the libraries load, opened (or failed) when they are.
    private var waiting: [WeakPage] = []

    /// `load` loads the web engine's libraries, on a thread of its own (tests hold it back to see the pages wait).
    public init(loop: MainLoop, load: @escaping @Sendable () -> Result<Void, WebError> = WPEWeb.availability) throws {
        library = WebLibraryLoad(load: load)
        waker = try loop.makeWaker { [weak self] in self?.drain() }
    }

    /// What every page of the process shares, set before the first page: where cookies, storage and caches persist
    /// (nil: nowhere) and the web process's memory limit (0: WebKit's own), over which it is ended and reported.
    public static func configure(dataDirectory: String?, memoryLimitMB: Int) {
        kiosk_web_configure(dataDirectory, UInt32(clamping: max(memoryLimitMB, 0)))
    }

    /// Removes every page's cookies, storage and caches. Loading WebKit for it (when no page did yet) happens on a
    /// thread of its own, not the caller's.
    public static func clearData() {
        Thread.detachNewThread { kiosk_web_clear_data() }
    }

    /// Whether WPE WebKit can be loaded in this process, or why not.
    public static func availability() -> Result<Void, WebError> {
        var message = [CChar](repeating: 0, count: 512)
        guard kiosk_web_load(&message, message.count) == 1 else {
            return .failure(WebError(String(cString: message)))
        }
        return .success(())
    }

    /// - Throws: `WebError` when WPE WebKit is missing (known once it was loaded).
    public func makePage(_ request: WebPageRequest) throws -> any WebPage {
        guard let waker else { throw WebError("web: no main loop") }
        let loaded = library.result
        if case .failure(let error)? = loaded { throw error }
        let mailbox = WebMailbox(waker: waker, opaque: request.background.alpha >= 1)
        let page = WPEWebPage(request: request, mailbox: mailbox)
        pages[ObjectIdentifier(mailbox)] = WeakPage(page: page)
        if loaded == nil {
            waiting.append(WeakPage(page: page))
            library.start(waking: waker)
        } else {
            try page.open()
        }
        return page
    }

    /// Whether the libraries are loaded, or why they cannot be; nil while they load (or before the first page).
    public var engineState: Result<Void, WebError>? { library.result }

    private func drain() {
        if !waiting.isEmpty, let loaded = library.result {
            let pending = waiting.compactMap(\.page)
            waiting = []
            for page in pending where !page.isClosed {
                do {
                    try loaded.get()
                    try page.open()
                } catch {
                    page.fail("\(error)")
                }
            }
        }
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

/// The one load of the web engine's libraries of a `WPEWeb`, on a thread of its own, started by the first page; the
/// loop's waker fires when it is done. Its result is read under a lock by the main thread, written once by the
/// loading thread, hence `Sendable`.
final class WebLibraryLoad: Sendable {
    private let state = Lock<(started: Bool, result: Result<Void, WebError>?)>((false, nil))
    private let load: @Sendable () -> Result<Void, WebError>

    init(load: @escaping @Sendable () -> Result<Void, WebError>) {
        self.load = load
    }

    var result: Result<Void, WebError>? { state.withLock { $0.result } }

    /// Starts the load unless it was started; `waker` fires when it is done.
    func start(waking waker: Waker) {
        let first = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        let load = self.load
        let state = self.state
        Thread.detachNewThread {
            let result = load()
            state.withLock { $0.result = result }
            waker.wake()
        }
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
        /// Surfaces the main thread no longer uses, for the next frames: a frame of a page is hundreds of KiB in a
        /// mapping of its own, which the kernel would otherwise map and zero anew for every frame.
        var spare: [LayerSurface] = []
    }

    /// Events beyond this many untaken are dropped (a page that fails in a loop cannot grow the mailbox).
    static let eventCapacity = 64
    /// Spare surfaces kept at most (one being shown, one in the mailbox, one being written is the steady state).
    static let spareCapacity = 2

    let contents = Lock(Contents())
    private let waker: Waker
    let opaque: Bool

    init(waker: Waker, opaque: Bool) {
        self.waker = waker
        self.opaque = opaque
    }

    /// On the web thread: a frame, copied out of WebKit's buffer (into a spare surface of its size if there is one).
    func deliver(pixels: UnsafePointer<UInt8>, width: Int, height: Int, stride: Int, damage: Rect) {
        let size = Size(width: width, height: height)
        let spare = contents.withLock { box -> LayerSurface? in
            guard let index = box.spare.firstIndex(where: { $0.size == size }) else { return nil }
            return box.spare.remove(at: index)
        }
        let surface = spare ?? LayerSurface(size: size, isOpaque: opaque)
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

    /// On the main thread: a frame's surface nothing else holds (the lock orders the main thread's last reads of it
    /// before the web thread's writes).
    func recycle(_ surface: LayerSurface) {
        contents.withLock { box in
            guard !box.isClosed, box.spare.count < Self.spareCapacity else { return }
            box.spare.append(surface)
        }
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
            box.spare.removeAll()
        }
    }
}

/// One page in WPE WebKit. Main thread; its C view lives on the web thread, reached only through CKioskWeb's queue.
/// Until it is opened (the libraries still loading) it keeps the address and size asked for, and drops input.
public final class WPEWebPage: WebPage {
    public var onFrame: ((WebFrame) -> Void)?
    public var onEvent: ((WebPageEvent) -> Void)?
    private var view: OpaquePointer?
    private let mailbox: WebMailbox
    private var request: WebPageRequest
    private(set) var isClosed = false

    init(request: WebPageRequest, mailbox: WebMailbox) {
        self.mailbox = mailbox
        self.request = request
    }

    /// The engine could not be loaded: the page reports it and stays empty.
    func fail(_ message: String) {
        mailbox.deliver(.engineUnavailable(message: message))
    }

    /// Makes the view, loading the address asked for last, at the size asked for last.
    func open() throws {
        guard view == nil, !isClosed else { return }
        let request = self.request
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
        request.url = url
        guard let view, !isClosed else { return }
        kiosk_web_view_load(view, url)
    }

    public func reload() {
        guard let view, !isClosed else { return }
        kiosk_web_view_reload(view)
    }

    public func resize(to size: Size) {
        request.size = size
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

    public func recycle(_ surface: LayerSurface) {
        guard !isClosed else { return }
        mailbox.recycle(surface)
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
