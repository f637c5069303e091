import KioskCore
import KioskRuntime
import Logging

/// Whether the wall clock can be trusted, told to every output's stage (`SceneStage.clockSynchronized`: until it
/// is synchronized, schedules follow the scene's `unsynchronized:`, and the moment it is, the schedule applies at
/// once). Read at start, then, while any output's scene has a schedule (pages' or playlist items'), every second
/// until synchronized and every 30 seconds after (NTP can lose it); an idle kiosk with no schedule is not woken for
/// it. `stats` reads it afresh (`clock_synchronized`), and so does the MQTT state. Main thread.
final class ClockTrust {
    static let pollUnsynchronized: Duration = .seconds(1)
    static let pollSynchronized: Duration = .seconds(30)

    let source: ClockSynchronization
    private let loop: MainLoop
    private let stages: [SceneStage]
    private let logger: Logger
    private(set) var synchronized: Bool
    private var timer: TimerHandle?
    private var sceneListeners: [ListenerToken] = []
    private let changeListeners = Listeners<Bool>()

    init(source: ClockSynchronization, loop: MainLoop, stages: [SceneStage], logger: Logger) {
        self.source = source
        self.loop = loop
        self.stages = stages
        self.logger = logger
        synchronized = source.isSynchronized()
        if !synchronized { logger.notice("clock: not synchronized (\(source.description)); schedules follow unsynchronized: until it is") }
        for stage in stages { stage.clockSynchronized = synchronized }
        // A scene loaded later may bring a schedule: the polling follows.
        sceneListeners = stages.map { stage in
            stage.addEventListener { [weak self] event in
                if case .sceneLoaded = event { self?.arm() }
            }
        }
        arm()
    }

    deinit { timer?.cancel() }

    /// `listener` hears each change, synchronized or not, on the main thread.
    func addChangeListener(_ listener: @escaping (Bool) -> Void) -> ListenerToken { changeListeners.add(listener) }

    /// Reads the source now and applies a change; returns what it read.
    @discardableResult
    func read() -> Bool {
        let now = source.isSynchronized()
        guard now != synchronized else { return now }
        synchronized = now
        logger.notice("clock: \(now ? "synchronized" : "no longer synchronized") (\(source.description))")
        for stage in stages { stage.clockSynchronized = now }
        changeListeners.emit(now)
        return now
    }

    private func arm() {
        timer?.cancel()
        timer = nil
        guard stages.contains(where: { $0.scene.hasSchedule }) else { return }
        timer = loop.addTimer(after: synchronized ? Self.pollSynchronized : Self.pollUnsynchronized) { [weak self] in
            self?.read()
            self?.arm()
        }
    }
}
