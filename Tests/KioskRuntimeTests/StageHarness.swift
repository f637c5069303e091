import Foundation
import KioskCore
import KioskTestSupport
import KioskDisplay
import KioskRender
import KioskRuntime
import KioskScene
import XCTest

/// The wall clock a harness's stage reads; a test may set or step it. Main thread.
///
/// Standing (as made), it reads `seconds` plus the manual loop's time into its current second: what clocks show
/// changes only when a test moves `seconds`, and the stage's clock ticks land one second of loop time apart. After
/// `run()` it runs with the loop's clock, as CLOCK_REALTIME runs beside CLOCK_MONOTONIC, and `step(by:)` sets it
/// forwards or back the way NTP or `date -s` does, without moving the loop's clock.
final class ManualWallClock {
    private let loop: MainLoop
    private var standing: Int
    /// While running: the wall time minus the loop's time, in nanoseconds.
    private var offset: Int64?

    init(_ seconds: Int, loop: MainLoop) {
        standing = seconds
        self.loop = loop
    }

    /// The time now.
    func now() -> WallTime {
        let loopNanoseconds = Int64(loop.now.nanoseconds)
        if let offset { return WallTime(nanoseconds: loopNanoseconds + offset) }
        return WallTime(seconds: standing, nanoseconds: loopNanoseconds % 1_000_000_000)
    }

    /// The whole second it shows; setting it moves the clock by whole seconds.
    var seconds: Int {
        get { now().seconds }
        set {
            if let offset {
                self.offset = offset + Int64(newValue - now().seconds) * 1_000_000_000
            } else {
                standing = newValue
            }
        }
    }

    /// From now on it runs with the loop's clock, from the time it reads now.
    func run() {
        guard offset == nil else { return }
        offset = now().nanoseconds - Int64(loop.now.nanoseconds)
    }

    /// Sets the running clock forwards (positive) or back by `duration`.
    func step(by duration: Duration) {
        precondition(offset != nil, "ManualWallClock.step(by:): run() it first")
        offset! += duration.nanosecondsClamped
    }
}

/// A scene on a real engine, compositor and headless backend, driven by a manual clock: renders run on a
/// `.manual` pool when the harness turns the loop, so every run is deterministic. Main thread.
final class StageHarness {
    /// 2023-11-14 22:13:20 UTC: what every clock in these tests shows unless the test moves `wallClock`.
    static let fixedTime = 1_700_000_000

    /// What the stage's clocks read; starts at `fixedTime`.
    let wallClock: ManualWallClock
    let loop: MainLoop
    let poller: ManualPoller
    let backend: HeadlessBackend
    let compositor: ShadowCompositor
    let pool: RenderQueuePool
    let engine: LayerEngine
    let stage: SceneStage
    let directory: URL
    /// The listeners a test added to the engine or the stage, kept as long as the harness.
    var listeners: [ListenerToken] = []

    /// Loads `yaml` (written to a scene file in a fresh directory, so relative image paths resolve there).
    convenience init(yaml: String, size: Size = Size(width: 1024, height: 768), rotation: OutputRotation = .degrees0,
                     files: [String: Data] = [:], limits: SceneLimits = SceneLimits(),
                     sceneLimits: SceneLimits = SceneLimits(), localZone: LocalTimeZoneSource = .system,
                     wall: WallSettings? = nil) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-stage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, data) in files {
            let url = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        }
        let scenePath = directory.appendingPathComponent("scene.yaml").path
        try Data(yaml.utf8).write(to: URL(fileURLWithPath: scenePath))
        try self.init(path: scenePath, size: size, rotation: rotation, directory: directory, limits: limits,
                      sceneLimits: sceneLimits, localZone: localZone, wall: wall)
    }

    /// `size` is the panel's mode; with `rotation` 90 or 270 the scene is laid out at the swapped size.
    /// `limits` apply to the loads the stage makes; the scene at `path` itself is loaded with `sceneLimits`, the
    /// default ones unless given (as if its files changed on disk after it was checked).
    init(path: String, size: Size = Size(width: 1024, height: 768), rotation: OutputRotation = .degrees0,
         directory: URL? = nil, limits: SceneLimits = SceneLimits(), sceneLimits: SceneLimits = SceneLimits(),
         localZone: LocalTimeZoneSource = .system, wall: WallSettings? = nil) throws {
        self.directory = directory ?? URL(fileURLWithPath: (path as NSString).deletingLastPathComponent)
        // Clocks without a zone show local time: make it the same on every machine the goldens are checked on.
        setenv("TZ", "UTC", 1)
        tzset()
        (loop, poller) = MainLoop.manual()
        let physical = size
        backend = try HeadlessBackend(mode: OutputMode(width: physical.width, height: physical.height, refreshMilliHz: 60_000), bufferCount: 2)
        compositor = try ShadowCompositor(size: physical, rotation: rotation)
        pool = RenderQueuePool(strategy: .manual)
        engine = try LayerEngine(loop: loop, backend: backend, compositor: compositor, pool: pool)
        let wallClock = ManualWallClock(StageHarness.fixedTime, loop: loop)
        self.wallClock = wallClock
        let loaded = try SceneLoader.load(path: path, limits: sceneLimits)
        stage = SceneStage(engine: engine, scene: loaded.scene, source: path, limits: limits, clock: { wallClock.now() },
                           localZone: localZone, wall: wall)
        try engine.start()
    }

    var scenePath: String { directory.appendingPathComponent("scene.yaml").path }
    var stats: EngineStats { engine.stats }
    /// Off: queued renders wait on the pool (in flight, never finishing) until it is on again.
    var runsQueuedJobs = true

    /// Iterations at the current instant until nothing is left to do now (renders run as they are queued).
    func settleNow(file: StaticString = #filePath, line: UInt = #line) {
        for _ in 0..<10_000 {
            let wakeups = loop.wakeups
            loop.runOnce(timeout: .zero)
            if runsQueuedJobs, pool.runQueued() > 0 { continue }
            if loop.wakeups == wakeups && engine.transaction.isEmpty && (engine.rendersInFlight == 0 || !runsQueuedJobs) { return }
        }
        XCTFail("the loop never went quiet", file: file, line: line)
    }

    /// Starts an off-loop request (a load, a `widget.set` that checks a file) with `start` and turns the loop at the
    /// current instant until its completion has run on the loop thread (the worker wakes the loop), for at most 10
    /// seconds of real time.
    func awaitLoad(file: StaticString = #filePath, line: UInt = #line,
                   _ start: (@escaping (Result<Void, StageError>) -> Void) -> Void) -> Result<Void, StageError>? {
        var outcome: Result<Void, StageError>?
        start { outcome = $0 }
        do {
            try Poll.until("the request to complete", timeout: 10, interval: 0) {
                guard outcome == nil else { return true }
                loop.runOnce(timeout: .zero)
                if outcome == nil { sched_yield() }
                return outcome != nil
            }
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
        return outcome
    }

    /// `scene.load` of a file, waited for; throws what the load failed with.
    func loadScene(path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try awaitLoad(file: file, line: line) { stage.loadScene(path: path, then: $0) }?.get()
    }

    /// `scene.load` of inline YAML, waited for; throws what the load failed with.
    func loadScene(yaml: String, baseDirectory: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try awaitLoad(file: file, line: line) { stage.loadScene(yaml: yaml, baseDirectory: baseDirectory, then: $0) }?.get()
    }

    /// `widget.set`, waited for; throws what it failed with.
    func setWidget(id: String, properties: [String: PropertyValue], file: StaticString = #filePath, line: UInt = #line) throws {
        try awaitLoad(file: file, line: line) { stage.setWidget(id: id, properties: properties, then: $0) }?.get()
    }

    /// A reload of the scene file, waited for: whether the new version was accepted.
    func reload(file: StaticString = #filePath, line: UInt = #line) -> Bool {
        var accepted: Bool?
        _ = awaitLoad(file: file, line: line) { done in
            stage.reload(path: scenePath) { ok in
                accepted = ok
                done(.success(()))
            }
        }
        return accepted ?? false
    }

    /// Runs `duration` of manual time, jumping from timer to timer (vblanks, clocks) as epoll would sleep.
    func run(for duration: Duration, file: StaticString = #filePath, line: UInt = #line) {
        runManualTime(loop, poller, for: duration, settlingAtEnd: true) { settleNow(file: file, line: line) }
    }

    /// Runs whole frames until nothing renders and the newest composition is on screen (animations may go on:
    /// then two more frames make sure the last composition was flipped).
    func settle(file: StaticString = #filePath, line: UInt = #line) {
        for _ in 0..<600 {
            run(for: backend.info.mode.frameDuration, file: file, line: line)
            guard !engine.isRendering(engine.rootLayer), engine.rendersInFlight == 0 else { continue }
            if engine.isAnimating {
                run(for: backend.info.mode.frameDuration * 2, file: file, line: line)
                return
            }
            if !backend.isFlipPending && !engine.hasPendingWork { return }
        }
        XCTFail("the scene never finished rendering", file: file, line: line)
    }

    /// The frame on screen (the headless backend's front buffer), as XRGB8888 bytes of the physical mode size.
    func screen(file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        try XCTUnwrap(backend.frontBufferSnapshot(), "no frame on screen", file: file, line: line)
    }

    /// The pixel on screen at (x, y) in physical coordinates, as 0xRRGGBB.
    func pixel(x: Int, y: Int) throws -> UInt32 {
        let bytes = try screen()
        let o = (y * backend.info.mode.width + x) * 4
        return UInt32(bytes[o + 2]) << 16 | UInt32(bytes[o + 1]) << 8 | UInt32(bytes[o])
    }

    func string(_ value: PropertyValue?) -> String? {
        if case .string(let s)? = value { return s }
        return nil
    }
}
