import Foundation
import KioskCore
import KioskTestSupport
import KioskWeb
import XCTest

/// WPE WebKit itself, on a real main loop: a page's frames arrive as surfaces of the page's size, a change to a small
/// part of the page arrives with a small damage rectangle, a static page sends no frames, a failed load and a killed
/// web process are reported, and a page loads again in a new web process after one ended.
final class WPEWebTests: XCTestCase {
    private var loop: MainLoop!
    private var web: WPEWeb!
    private var pages: [any WebPage] = []

    override func setUpWithError() throws {
        // WebKit is part of what the suite's set-up installs; a machine without it fails here, it does not skip.
        if case .failure(let error) = WPEWeb.availability() { XCTFail("WPE WebKit: \(error)"); throw error }
        loop = try MainLoop.epoll()
        web = try WPEWeb(loop: loop)
    }

    override func tearDown() {
        for page in pages { page.close() }
        pages = []
        web = nil
        loop = nil
    }

    /// The page file of the last `page(_:)`.
    private var pageFile: URL?

    private func page(_ html: String, size: Size = Size(width: 200, height: 100), allowedOrigins: [String]? = nil,
                      background: Color = .white) throws -> (page: any WebPage, frames: Box<[WebFrame]>, events: Box<[WebPageEvent]>) {
        let dir = try KioskdProcess.scratchDirectory("web-page")
        let file = dir.appendingPathComponent("page.html")
        try html.write(to: file, atomically: true, encoding: .utf8)
        pageFile = file
        let page = try web.makePage(WebPageRequest(url: file.absoluteString, size: size, background: background,
                                                   allowedOrigins: allowedOrigins))
        pages.append(page)
        let frames = Box<[WebFrame]>([]), events = Box<[WebPageEvent]>([])
        page.onFrame = { [weak page] frame in
            frames.value.append(frame)
            page?.frameShown()
        }
        page.onEvent = { events.value.append($0) }
        return (page, frames, events)
    }

    private func rgb(_ surface: LayerSurface, _ x: Int, _ y: Int) -> UInt32 { surface.pixel(x: x, y: y) & 0xFFFFFF }

    func testAPageArrivesAsFramesAndASmallChangeAsASmallDamage() throws {
        let (_, frames, events) = try page("""
            <html><body style="margin:0;background:#e02000">
            <div id="dot" style="position:absolute;left:10px;top:10px;width:8px;height:8px;background:#0000ff"></div>
            <script>setTimeout(() => { document.getElementById('dot').style.background = '#00ff00' }, 300)</script>
            </body></html>
            """)
        try Poll.until("the page's first frame", timeout: 30, turning: loop) {
            frames.value.contains { rgb($0.surface, 100, 50) == 0xE02000 }
        }
        XCTAssertTrue(events.value.contains(.loaded), "\(events.value)")
        let first = try XCTUnwrap(frames.value.first { rgb($0.surface, 100, 50) == 0xE02000 })
        XCTAssertEqual(first.surface.size, Size(width: 200, height: 100))
        XCTAssertEqual(rgb(first.surface, 12, 12), 0x0000FF)
        try Poll.until("the dot turned green", timeout: 30, turning: loop) {
            frames.value.last.map { rgb($0.surface, 12, 12) == 0x00FF00 } ?? false
        }
        let changed = try XCTUnwrap(frames.value.last)
        // Only the dot changed: the damage holds it and is far smaller than the page.
        XCTAssertTrue(changed.damage.intersection(Rect(x: 10, y: 10, width: 8, height: 8)) == Rect(x: 10, y: 10, width: 8, height: 8), "\(changed.damage)")
        XCTAssertLessThanOrEqual(changed.damage.width * changed.damage.height, 32 * 32, "\(changed.damage)")
        XCTAssertEqual(rgb(changed.surface, 100, 50), 0xE02000)

        // A static page sends nothing more.
        let count = frames.value.count
        let until = ContinuousClock.now + .milliseconds(600)
        while ContinuousClock.now < until { loop.runOnce(timeout: .milliseconds(50)) }
        XCTAssertEqual(frames.value.count, count, "a page that does not change sends no frames")
    }

    func testAFailedLoadIsReportedAndTheWebProcessCanEndAndComeBack() throws {
        let (page, frames, events) = try page("<html><body style='margin:0;background:#123456'></body></html>")
        try Poll.until("the page's first frame", timeout: 30, turning: loop) {
            frames.value.contains { rgb($0.surface, 5, 5) == 0x123456 }
        }
        // The web process ends as a crash would.
        (page as? WPEWebPage)?.terminateProcess()
        try Poll.until("the web process's end reported", timeout: 30, turning: loop) {
            events.value.contains { if case .processGone = $0 { true } else { false } }
        }
        // Loading again starts a new web process, which renders the page (changed meanwhile, so that its frame
        // differs from the last one: an unchanged frame is not sent).
        try "<html><body style='margin:0;background:#654321'></body></html>".write(to: pageFile!, atomically: true, encoding: .utf8)
        page.reload()
        try Poll.until("the page again, from a new web process", timeout: 30, turning: loop) {
            frames.value.last.map { rgb($0.surface, 5, 5) == 0x654321 } ?? false
        }
        // An address that cannot be loaded is reported with the address.
        page.load(url: "http://127.0.0.1:\(try LoopbackPort.free())/nothing")
        try Poll.until("the failed load reported", timeout: 30, turning: loop) {
            events.value.contains { if case .loadFailed(let message) = $0 { message.contains("127.0.0.1") } else { false } }
        }
    }

    func testANavigationOutsideTheAllowedOriginsIsRefused() throws {
        let (_, frames, events) = try page("""
            <html><body style="margin:0;background:#445566">
            <script>setTimeout(() => { location.href = 'https://elsewhere.invalid/' }, 200)</script></body></html>
            """, allowedOrigins: ["https://example.com"])
        try Poll.until("the refusal", timeout: 30, turning: loop) {
            events.value.contains(.navigationRefused(url: "https://elsewhere.invalid/"))
        }
        // The page stays: its own frame is what the widget shows.
        try Poll.until("the page's own frame", timeout: 30, turning: loop) {
            frames.value.contains { rgb($0.surface, 5, 5) == 0x445566 }
        }
    }

    /// A surface given back once nothing shows it is where a later frame of the page is written, rather than new
    /// memory for every frame.
    func testARecycledSurfaceTakesALaterFrame() throws {
        let (page, frames, _) = try page("""
            <html><body style="margin:0;background:#203040">
            <div id="box" style="position:absolute;left:0;top:10px;width:20px;height:20px;background:#ffffff"></div>
            <script>let x = 0; setInterval(() => { x = (x + 7) % 180; document.getElementById('box').style.left = x + 'px' }, 16)</script>
            </body></html>
            """)
        try Poll.until("the page's first frame", timeout: 30, turning: loop) { !frames.value.isEmpty }
        let recycled = frames.value[0].surface
        page.recycle(recycled)
        try Poll.until("a later frame in the recycled surface", timeout: 30, turning: loop) {
            frames.value.dropFirst().contains { $0.surface === recycled }
        }
    }

    /// The libraries load off the loop: a page made while they load is returned at once and keeps what it was asked
    /// meanwhile (here a new size), and opens when the load is done.
    func testAPageMadeWhileTheEngineLoadsOpensWhenItHasLoaded() throws {
        let release = DispatchSemaphore(value: 0)
        web = try WPEWeb(loop: loop, load: {
            release.wait()
            return WPEWeb.availability()
        })
        let (page, frames, events) = try self.page("<html><body style=\"margin:0;background:#e02000\"></body></html>")
        XCTAssertNil(web.engineState, "still loading")
        page.resize(to: Size(width: 120, height: 60))
        release.signal()
        try Poll.until("the page's first frame, at the size asked for while loading", timeout: 30, turning: loop) {
            frames.value.contains { $0.surface.size == Size(width: 120, height: 60) && rgb($0.surface, 60, 30) == 0xE02000 }
        }
        XCTAssertTrue(events.value.contains(.loaded), "\(events.value)")
        guard case .success? = web.engineState else { return XCTFail("loaded: \(String(describing: web.engineState))") }
    }

    /// An engine whose libraries cannot be loaded: the page made before that was known reports it, and a page made
    /// afterwards is refused with the same reason.
    func testAnEngineThatCannotLoadIsReportedByItsPages() throws {
        web = try WPEWeb(loop: loop, load: { .failure(WebError("WPE WebKit is not installed: test")) })
        let (_, frames, events) = try page("<html><body></body></html>")
        try Poll.until("the page's report", timeout: 10, turning: loop) { !events.value.isEmpty }
        XCTAssertEqual(events.value, [.engineUnavailable(message: "WPE WebKit is not installed: test")])
        XCTAssertTrue(frames.value.isEmpty)
        XCTAssertThrowsError(try web.makePage(WebPageRequest(url: "about:blank", size: Size(width: 10, height: 10)))) { error in
            XCTAssertEqual("\(error)", "WPE WebKit is not installed: test")
        }
    }
}

/// A reference a closure fills in. Main thread.
final class Box<Value> {
    var value: Value
    init(_ value: Value) { self.value = value }
}
