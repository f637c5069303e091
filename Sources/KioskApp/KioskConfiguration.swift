import KioskCore
import KioskDisplay
import KioskScene

/// What one kiosk runs with, from its three sources by one rule: a setting the command line gives wins, else the
/// config file's, else the board file's, else the default (`resolve`). The command line is read into the config
/// file's own type (`KioskConfig`), and the board file is one too (`BoardConfig.layer`), so each setting is declared
/// once and merged in one place. A plain value.
public struct KioskConfiguration: Sendable, Equatable {
    /// Every setting, resolved; a key no source gives is nil here, and its default is the accessor's below.
    public var settings: KioskConfig
    /// The board's name (the board file's `board:`), for the log.
    public var boardName: String?
    /// The backlight idle dimming uses (the board file's `backlight`); nil takes the first one present.
    public var backlight: String?
    /// `--capture-pages`: the folder each output's page-change captures go to (command line only).
    public var capturePages: String?
    /// `--backlight-dir`: where backlights are looked for (command line only); nil is /sys/class/backlight.
    public var backlightDirectory: String?
    /// `--clock-synchronized-file`: a file whose existence says the clock is synchronized (command line only, for
    /// tests); nil reads the kernel's NTP state and systemd-timesyncd's flag (`ClockSynchronization.system`).
    public var clockSynchronizedFile: String?
    /// `--plays-db`, else plays.db in the unit's state directory: where proof of play is recorded; nil records none.
    public var playsDatabase: String?
    /// The unit's state directory (`$STATE_DIRECTORY`, `/var/lib/kioskd` under the unit): scanout mismatch images go
    /// to its `scanout/` folder; nil keeps none.
    public var stateDirectory: String?
    /// `--verify-corrupt-composed` (hidden, for tests): `output.verify` accepts `corrupt_composed: true`, which spoils
    /// its copy of the composed frame before comparing, so a mismatch can be shown on hardware that scans out correctly.
    public var verifyCorruptComposed = false
    /// `--web-hang-timeout` (hidden, for tests): how long a web widget's page may leave a ping unanswered before its
    /// web process is ended (pinged every half of it); nil keeps the standard 10 s (pinged every 5 s).
    public var webHangTimeout: Duration?

    public init(settings: KioskConfig = KioskConfig(), boardName: String? = nil, backlight: String? = nil) {
        self.settings = settings
        self.boardName = boardName
        self.backlight = backlight
    }

    /// The card asked for by path, nil for any (`auto`, or none given).
    public var device: String? { settings.device == "auto" ? nil : settings.device }
    public var commit: CommitChoice { settings.commit ?? .auto }
    public var buffers: Int { settings.buffers ?? 2 }
    public var rotation: OutputRotation { settings.rotation ?? .degrees0 }
    public var renderStrategy: KioskConfig.RenderStrategy { settings.renderStrategy ?? .roundRobin }
    public var watch: Bool { settings.watch ?? true }
    public var fpsOverlay: Bool { settings.fpsOverlay ?? false }
    public var keepGoing: Bool { settings.keepGoing ?? false }
    public var repaintWindow: RepaintWindow.Mode { settings.repaintWindow ?? .off }
    /// Whether a DRM card was asked for, by path or by driver: `--backend auto` then means drm.
    public var drmRequested: Bool { device != nil || settings.driver != nil }

    /// The configuration of `commandLine` over `configFile` over `boardFile`: for each setting, the first source
    /// that gives it. A few settings are one choice made of several keys, taken whole from the first source that
    /// makes it: the card (`device` or `driver`), the input devices (`input.devices` or `input.seat`), the outputs,
    /// and the idle timetable. Lists that add up are joined in that order: the control socket's allowed uids and
    /// gids, and the input device map (whose first matching entry decides). Pure.
    public static func resolve(commandLine: KioskConfig, configFile: KioskConfig = KioskConfig(),
                               boardFile: BoardConfig = BoardConfig()) -> KioskConfiguration {
        let layers = [commandLine, configFile, boardFile.layer]
        func first<T>(_ key: KeyPath<KioskConfig, T?>) -> T? { layers.lazy.compactMap { $0[keyPath: key] }.first }
        func firstNonEmpty<T>(_ key: KeyPath<KioskConfig, [T]>) -> [T] { layers.first { !$0[keyPath: key].isEmpty }?[keyPath: key] ?? [] }
        var s = KioskConfig()
        s.scene = first(\.scene)
        s.board = first(\.board)
        s.backend = first(\.backend)
        s.fbdev = first(\.fbdev)
        let card = layers.first { $0.device != nil || $0.driver != nil }
        s.device = card?.device
        s.driver = card?.driver
        s.connector = first(\.connector)
        s.mode = first(\.mode)
        s.commit = first(\.commit)
        s.buffers = first(\.buffers)
        s.rotation = first(\.rotation)
        s.frames = first(\.frames)
        s.statsOut = first(\.statsOut)
        s.screenshot = first(\.screenshot)
        s.capture = first(\.capture)
        s.watch = first(\.watch)
        s.keepGoing = first(\.keepGoing)
        s.renderStrategy = first(\.renderStrategy)
        s.fpsOverlay = first(\.fpsOverlay)
        s.repaintWindow = first(\.repaintWindow)
        s.logLevel = first(\.logLevel)
        s.control.socket = first(\.control.socket)
        s.control.socketGroup = first(\.control.socketGroup)
        s.control.screenshotDirectory = first(\.control.screenshotDirectory)
        s.control.allowUIDs = layers.flatMap(\.control.allowUIDs)
        s.control.allowGIDs = layers.flatMap(\.control.allowGIDs)
        let inputSource = layers.first { !$0.input.devices.isEmpty || $0.input.seat != nil }
        s.input.devices = inputSource?.input.devices ?? []
        s.input.seat = inputSource?.input.seat
        s.input.calibration = first(\.input.calibration)
        s.input.map = layers.flatMap(\.input.map)
        s.idle.dimAfter = first(\.idle.dimAfter)
        s.idle.dimLevel = first(\.idle.dimLevel)
        s.idle.blankAfter = first(\.idle.blankAfter)
        s.idle.schedule = firstNonEmpty(\.idle.schedule)
        s.mqtt = first(\.mqtt)
        s.vnc = first(\.vnc)
        s.wall = first(\.wall)
        s.memory.maxImagePixels = first(\.memory.maxImagePixels)
        s.memory.preloadPages = first(\.memory.preloadPages)
        s.memory.surfaceBudgetMB = first(\.memory.surfaceBudgetMB)
        s.health.restartOn = first(\.health.restartOn)
        s.health.frozenAfter = first(\.health.frozenAfter)
        s.health.blackAfter = first(\.health.blackAfter)
        s.health.verifyEvery = first(\.health.verifyEvery)
        s.video.allowedSchemes = first(\.video.allowedSchemes)
        s.cache.maxMB = first(\.cache.maxMB)
        s.cache.maxAssetMB = first(\.cache.maxAssetMB)
        s.cache.proxy = first(\.cache.proxy)
        s.cache.directory = first(\.cache.directory)
        s.web.memoryLimitMB = first(\.web.memoryLimitMB)
        s.web.allowEval = first(\.web.allowEval)
        s.web.dataDirectory = first(\.web.dataDirectory)
        s.outputs = firstNonEmpty(\.outputs)
        s.reservedSections = configFile.reservedSections
        return KioskConfiguration(settings: s, boardName: boardFile.name, backlight: boardFile.backlight)
    }

    /// Settings that cannot work together, each error naming the options: a count out of range, a writeback capture
    /// without a DRM card or with legacy commits, `--capture` without `--frames`.
    /// - Throws: `KioskConfigurationError` with the first problem.
    public func validate() throws(KioskConfigurationError) {
        if let buffers = settings.buffers, !(2...3).contains(buffers) { throw KioskConfigurationError("--buffers \(buffers): must be 2 or 3") }
        if let frames = settings.frames, frames < 1 { throw KioskConfigurationError("--frames \(frames): must be at least 1") }
        for (option, given) in [("--capture", settings.capture), ("--capture-pages", capturePages)] where given != nil {
            guard settings.backend != .headless, settings.backend != .fbdev else {
                throw KioskConfigurationError("\(option) needs --backend drm (writeback is a DRM feature)")
            }
            guard commit != .legacy else { throw KioskConfigurationError("\(option) needs atomic commits, but the commit API is legacy (--commit, or commit: in the config or board file)") }
        }
        if settings.capture != nil, settings.frames == nil {
            throw KioskConfigurationError("--capture captures the last of --frames N; give --frames")
        }
    }
}

/// Settings that cannot work together, in a message naming the options. A plain value.
public struct KioskConfigurationError: Error, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

extension KioskConfig.RenderStrategy {
    /// The render pool's strategy of this choice.
    public var poolStrategy: RenderQueuePool.Strategy { self == .priority ? .priority : .roundRobin }
}
