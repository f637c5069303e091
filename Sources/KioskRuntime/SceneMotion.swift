import Glibc
import KioskCore
import KioskRender
import KioskScene
import Logging

private let logger = Logger(label: "kioskd.scene")

/// What moves by itself in the running scene: clocks (a timer at each wall-clock second), `fps` widgets (a timer
/// each second), tickers (on the display link), and the animations of bound values (a progress bar easing to its
/// value, `on_change` pulses and flashes).
///
/// Clocks follow the wall clock when it is set. The loop's timers run on CLOCK_MONOTONIC, which a step of the wall
/// clock (NTP at boot on a board without an RTC, `date -s`) does not move; a repeating timer aligned once would
/// from then on tick mid-second and show each second late, by up to a second, for good. So each tick is a one-shot
/// timer armed from the wall clock just read, to just after its next second boundary: after a step either way
/// (+0.4 s, or −3 h) the next tick, at most a second away, shows the new time and lands on the new boundaries.
/// Not a timerfd on CLOCK_REALTIME with TFD_TIMER_CANCEL_ON_SET, which would see the step at once: it would be a
/// second kind of loop timer, on epoll only, for a gain of under a second once per step, where re-arming costs
/// nothing the once-a-second wake-up does not already pay, and works with the manual clock of the tests as well.
///
/// A change of the local time zone (/etc/localtime replaced) re-renders the clocks at once: see
/// `LocalTimeZoneSource`.
///
/// Lives on the main thread with the engine and the nodes it moves.
final class SceneMotion {
    /// How long after a second boundary of the wall clock clocks tick (`SceneStage.clockTickMargin`).
    static let tickMargin = SceneStage.clockTickMargin

    private let engine: LayerEngine
    private let builder: SceneBuilder
    private let localZone: LocalTimeZoneSource
    private var nodes: [WidgetNode] = []
    private var scene: Scene?
    private var clockTimer: TimerHandle?
    private var fpsTimer: TimerHandle?
    /// The watch on the local time zone, once a scene with a clock was shown; nil before, when there is nothing
    /// to watch (TZ set), or when it could not be set up (logged once).
    private var zoneWatch: AnyObject?
    private var zoneWatchStarted = false

    /// The group's time in a sync group: tickers are placed by it (`startTicker`), and clocks, which show it
    /// (`SceneBuilder.clockTime`), turn to it at once and tick on its seconds.
    weak var timeline: GroupTimeline? {
        didSet {
            guard clockTimer != nil else { return }
            tickClocks()
            armClockTick()
        }
    }

    init(engine: LayerEngine, builder: SceneBuilder, localZone: LocalTimeZoneSource) {
        self.engine = engine
        self.builder = builder
        self.localZone = localZone
    }

    deinit {
        clockTimer?.cancel()
        fpsTimer?.cancel()
    }

    /// Moves the nodes of the scene now shown: starts its tickers and the clock and fps timers it needs.
    func start(_ nodes: [WidgetNode], of scene: Scene) {
        self.nodes = nodes
        self.scene = scene
        for node in nodes { startTicker(node) }
        clockTimer?.cancel()
        fpsTimer?.cancel()
        clockTimer = nil
        fpsTimer = nil
        if nodes.contains(where: { $0.widget.type == .clock }) {
            armClockTick()
            // Any clock, not only those in the local zone: `widget.set` may move one there.
            watchLocalZone()
        }
        if nodes.contains(where: { $0.widget.type == .fps }) {
            fpsTimer = engine.loop.addTimer(after: .seconds(1), repeating: .seconds(1)) { [weak self] in self?.tickFPS() }
        }
    }

    /// Arms the next clock tick just after the next second boundary of the time clocks show (the wall clock's, or
    /// a sync group's), as it reads now.
    private func armClockTick() {
        clockTimer?.cancel()
        let untilNextSecond = Duration.nanoseconds(1_000_000_000 - builder.clockTime().nanosecondsIntoSecond) + Self.tickMargin
        clockTimer = engine.loop.addTimer(after: untilNextSecond) { [weak self] in
            guard let self else { return }
            self.tickClocks()
            self.armClockTick()
        }
    }

    /// Re-renders each clock whose text changed (a minutes-only clock re-renders once a minute).
    func tickClocks() {
        guard let scene else { return }
        let time = builder.now()
        for node in nodes {
            guard case .clock(let c) = node.widget.content, let body = node.body else { continue }
            let text = ClockContent.format(time: time, format: c.format, timeZone: SceneBuilder.zone(c.timezone))
            guard text != node.clockText else { continue }
            body.content = builder.content(for: node, scene: scene)
            // New text must reach the screen: the frozen-screen watch counts it (`LayerEngine.expectChange(in:)`).
            engine.expectChange(in: body)
        }
    }

    /// Starts watching the local time zone, once per stage. A watch that cannot be set up is logged once; the
    /// clocks keep ticking, and a change of the zone shows after a restart.
    private func watchLocalZone() {
        guard !zoneWatchStarted else { return }
        zoneWatchStarted = true
        do {
            zoneWatch = try localZone.watch(engine.loop) { [weak self] in self?.localZoneChanged() }
        } catch {
            logger.warning("clocks: cannot watch the local time zone: \(error); a change of it shows after a restart")
        }
    }

    /// The local time zone changed: glibc loads it again (tzset), and every clock whose text it changes is
    /// re-rendered now, not at the next tick.
    private func localZoneChanged() {
        localZone.reload()
        logger.info("clocks: the local time zone changed (now \(Self.localZoneName())); clocks re-rendered")
        tickClocks()
    }

    /// The local zone's abbreviation now, e.g. "JST", for the log.
    private static func localZoneName() -> String {
        ClockContent.format(time: WallClock.seconds(), format: "%Z", timeZone: .local)
    }

    private func tickFPS() {
        guard let scene else { return }
        for node in nodes where node.widget.type == .fps {
            node.body?.content = builder.content(for: node, scene: scene)
        }
    }

    /// Tickers move on the display link: the strip's position is a function of the vblank time, so the text is
    /// rendered once and only moves. Restarts a ticker that was moving (after `widget.set`).
    func startTicker(_ node: WidgetNode) {
        guard case .ticker = node.widget.content, node.body != nil else { return }
        node.tickerStart = nil
        if let token = node.tickerToken { engine.removeAnimation(token) }
        node.tickerToken = engine.addAnimation(target: node) { [weak engine, weak self] node, tick in
            guard node.body != nil else { return false }
            let start = node.tickerStart ?? tick.nextVblank
            node.tickerStart = start
            // In a sync group the strip is where the group's time puts it, the same on every member.
            let seconds = self?.timeline?.groupTime(at: tick.nextVblank).map { Double($0) / 1e9 } ?? (tick.nextVblank - start).milliseconds / 1000
            if SceneMotion.placeTicker(node, at: seconds), let strip = node.body {
                // A strip moved by whole pixels inside the widget changes the screen: the frozen-screen watch counts it.
                engine?.expectChange(in: strip)
            }
            return true
        }
    }

    /// Puts a ticker's strip where it is `t` seconds after it started: entering at the right edge, leaving at the
    /// left, then again.
    /// Returns whether the strip moved.
    @discardableResult
    static func placeTicker(_ node: WidgetNode, at t: Double) -> Bool {
        guard case .ticker(let ticker) = node.widget.content, let strip = node.body else { return false }
        let width = node.layer.frame.width
        let travel = Double(width + max(node.tickerStripWidth, 1))
        let offset = (t * ticker.speed).truncatingRemainder(dividingBy: travel)
        var frame = strip.frame
        frame.x = width - Int(offset.rounded())
        guard frame != strip.frame else { return false }
        strip.frame = frame
        return true
    }

    /// A progress bar eases to its new value over a third of a second; only the fill layer's width changes.
    func animateProgress(_ node: WidgetNode, to target: Double) {
        if let token = node.progressAnimation { engine.removeAnimation(token) }
        let from = node.progressShown
        var start: MonotonicInstant?
        node.progressAnimation = engine.addAnimation(target: node) { [weak builder] node, tick in
            guard let builder, let body = node.body else { return false }
            let t0 = start ?? tick.nextVblank
            start = t0
            let f = min((tick.nextVblank - t0).milliseconds / 300, 1)
            node.progressShown = from + (target - from) * TimingFunction.easeOut.value(at: f)
            body.frame = builder.progressFrame(node, value: node.progressShown)
            if f >= 1 { node.progressAnimation = nil }
            return f < 1
        }
    }

    /// `on_change`: pulse scales the widget up and back; flash dims and restores it.
    func playChangeEffect(on node: WidgetNode) {
        guard let effect = node.widget.onChange, effect != .none else { return }
        var start: MonotonicInstant?
        let baseOpacity = node.widget.style.opacity ?? 1
        engine.addAnimation(target: node.layer) { layer, tick in
            let t0 = start ?? tick.nextVblank
            start = t0
            let f = min((tick.nextVblank - t0).milliseconds / 450, 1)
            let bump = sin(Double.pi * TimingFunction.easeInOut.value(at: f))
            switch effect {
            case .pulse: layer.transform.scaleX = 1 + 0.08 * bump; layer.transform.scaleY = 1 + 0.08 * bump
            case .flash: layer.opacity = baseOpacity * (1 - 0.6 * bump)
            case .none: break
            }
            return f < 1
        }
    }
}
