import KioskCore

/// kioskd's configuration file (`/etc/kioskd/kioskd.yaml`): one key per `kioskd run` option, the control socket
/// in its own section, input devices and screen power in theirs, the MQTT broker in `mqtt:`, what video may open in
/// `video:`, and the outputs in `outputs:`. Every value is
/// optional: a key left out keeps the option's default, and an option given on the command line overrides the
/// key. Relative paths are already resolved against the file's folder. An immutable value; any thread.
public struct KioskConfig: Sendable, Equatable {
    /// `--backend`.
    public enum Backend: String, Sendable, CaseIterable { case auto, drm, fbdev, headless }
    /// `--render-strategy`.
    public enum RenderStrategy: String, Sendable, CaseIterable { case roundRobin = "round-robin", priority }
    /// `--log-level`.
    public enum LogLevel: String, Sendable, CaseIterable { case trace, debug, info, notice, warning, error, critical }

    /// The `control:` section: the control socket and what its commands may touch.
    public struct Control: Sendable, Equatable {
        public var socket: String?
        public var socketGroup: String?
        public var allowUIDs: [UInt32] = []
        public var allowGIDs: [UInt32] = []
        /// The only folder `screenshot` with a server-side path may write into.
        public var screenshotDirectory: String?
        public init() {}
    }

    /// The `health:` section: what a black or frozen screen does to the health signal (`ScreenHealthSettings`).
    public struct Health: Sendable, Equatable {
        /// Problems that make the signal unhealthy, so the watchdog lets systemd restart kioskd; nil: none.
        public var restartOn: Set<ScreenHealthSettings.Problem>?
        /// Expected changes a frozen screen misses before it counts.
        public var frozenAfter: Int?
        /// Seconds a black screen lasts before it counts.
        public var blackAfter: Double?
        /// Seconds between scanout verifications; 0: none on a schedule (`off`).
        public var verifyEvery: Double?
        public init() {}

        /// The settings these keys make, defaults where a key is left out.
        public var settings: ScreenHealthSettings {
            var settings = ScreenHealthSettings()
            if let restartOn { settings.restartOn = restartOn }
            if let frozenAfter { settings.frozenAfter = frozenAfter }
            if let blackAfter { settings.blackAfter = .milliseconds(Int64((blackAfter * 1000).rounded())) }
            if let verifyEvery { settings.verifyEvery = verifyEvery == 0 ? nil : .milliseconds(Int64((verifyEvery * 1000).rounded())) }
            return settings
        }
    }

    /// The `memory:` section: what images may cost.
    public struct Memory: Sendable, Equatable {
        /// Images whose header declares more pixels are refused (`kioskd check`, `scene.load`, at render time).
        public var maxImagePixels: Int?
        /// Pages after the current one in a timed loop that keep rendered surfaces.
        public var preloadPages: Int?
        /// What layer surfaces may hold, in MiB; beyond it, surfaces not on screen are purged.
        public var surfaceBudgetMB: Int?
        public init() {}

        /// The default surface budget: on a 512 MB board, room for the page on screen and the next at 1920x1080 with
        /// a few layers each, and for a page that waits for its purge.
        public static let defaultSurfaceBudgetMB = 64
        public static let defaultPreloadPages = 1

    }

    /// The `web:` section: what every web widget's pages share.
    public struct Web: Sendable, Equatable {
        /// `memory_limit_mb`: the web process's memory limit (WebKit's memory pressure settings); over it the web
        /// process is ended and its pages loaded again, not the kiosk. 0 leaves WebKit's own. Nil is the default.
        public var memoryLimitMB: Int?
        /// `allow_eval`: whether `web.eval` may run scripts in pages (off by default).
        public var allowEval: Bool?
        /// `data_dir`: where cookies, local storage and caches persist; nil is `$STATE_DIRECTORY/web` under the unit,
        /// else nowhere (each start clean).
        public var dataDirectory: String?
        public init(memoryLimitMB: Int? = nil, allowEval: Bool? = nil, dataDirectory: String? = nil) {
            self.memoryLimitMB = memoryLimitMB
            self.allowEval = allowEval
            self.dataDirectory = dataDirectory
        }

        public static let defaultMemoryLimitMB = 256
        public static let memoryLimitRange = 0...65_536

        /// Where the pages' data persists: `data_dir`, else the unit's state directory's `web` folder, else nowhere.
        public func resolvedDataDirectory(environment: [String: String]) -> String? {
            if let dataDirectory { return dataDirectory }
            guard let state = environment["STATE_DIRECTORY"]?.split(separator: ":").first, !state.isEmpty else { return nil }
            return "\(state)/web"
        }
    }

    /// The `video:` section: what video widgets and `video.load` may open.
    public struct Video: Sendable, Equatable {
        /// `allowed_schemes`: the URI schemes a video source may use (a path is `file`); nil is the default list,
        /// `VideoSchemes.defaultAllowed`.
        public var allowedSchemes: [String]?
        public init(allowedSchemes: [String]? = nil) {
            self.allowedSchemes = allowedSchemes
        }

        public var schemes: VideoSchemes { allowedSchemes.map(VideoSchemes.init) ?? VideoSchemes() }
    }

    /// The `cache:` section: where assets named by URL are kept and how much they may take.
    public struct Cache: Sendable, Equatable {
        /// `max_mb`: the whole cache, MiB; past it the least recently shown assets not on screen are removed.
        public var maxMB: Int?
        /// `max_asset_mb`: one asset, MiB; a larger download is stopped at this size and refused.
        public var maxAssetMB: Int?
        /// `proxy`: the proxy asset downloads go through; nil takes libcurl's from the environment (http_proxy,
        /// https_proxy, no_proxy).
        public var proxy: String?
        /// `dir`: the folder the assets are kept in (resolved); nil is `$CACHE_DIRECTORY/assets` (the unit's
        /// `CacheDirectory=`), else /var/cache/kioskd/assets for root, else the user's cache folder.
        public var directory: String?
        public init() {}

        public static let defaultMaxMB = 1024
        public static let defaultMaxAssetMB = 256
        /// What either limit may be: 1 MiB to 1 TiB.
        public static let megabyteRange = 1...(1 << 20)

        public var totalBytes: Int { (maxMB ?? Self.defaultMaxMB) << 20 }
        public var assetBytes: Int { min(maxAssetMB ?? Self.defaultMaxAssetMB, maxMB ?? Self.defaultMaxMB) << 20 }

        /// Why `text` cannot be a proxy URL, or nil when it can.
        public static func proxyProblem(_ text: String) -> String? {
            let schemes = ["http", "https", "socks5", "socks5h"]
            guard text.utf8.count <= 2048 else { return "the URL is longer than 2048 bytes" }
            guard !text.contains(where: { $0.isWhitespace || $0.isNewline }) else { return "'\(text)': a URL has no spaces or line breaks" }
            guard let colon = text.range(of: "://") else {
                return "'\(text)' is not a URL: expected \(schemes.map { "\($0)://" }.joined(separator: ", ")) then host[:port], such as http://proxy.lan:3128"
            }
            let scheme = text[..<colon.lowerBound].lowercased()
            guard schemes.contains(scheme) else {
                return "scheme '\(scheme)' is not a proxy scheme; expected one of \(schemes.joined(separator: ", "))"
            }
            let rest = text[colon.upperBound...]
            let authority = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let hostPort = authority.split(separator: "@").last ?? ""
            guard !hostPort.isEmpty, !hostPort.hasPrefix(":") else { return "'\(text)': the URL names no host" }
            if !hostPort.hasSuffix("]"), let portText = hostPort.split(separator: ":", omittingEmptySubsequences: false).dropFirst().last {
                guard let port = Int(portText), (1...65535).contains(port) else { return "'\(text)': the port must be a number from 1 to 65535" }
            }
            return nil
        }
    }

    /// One entry of the `outputs:` section: what one connector shows, and in which mode and rotation.
    public struct Output: Sendable, Equatable {
        /// The connector's name (`HDMI-A-1`), as `kioskd devices` shows it.
        public var connector: String
        public var mode: ModeRequest?
        public var rotation: OutputRotation?
        /// The scene file (resolved), `default` for the kiosk's scene mirrored, nil for the same.
        public var scene: String?
        /// This output's place in a video wall (`wall:`), nil for the kiosk's.
        public var wall: WallSettings?
        public init(connector: String, mode: ModeRequest? = nil, rotation: OutputRotation? = nil, scene: String? = nil,
                    wall: WallSettings? = nil) {
            self.wall = wall
            self.connector = connector
            self.mode = mode
            self.rotation = rotation
            self.scene = scene
        }
    }

    public var scene: String?
    public var board: String?
    public var backend: Backend?
    public var device: String?
    /// `--fbdev`: the framebuffer device of the fbdev backend.
    public var fbdev: String?
    public var driver: String?
    public var connector: String?
    public var mode: ModeRequest?
    public var commit: CommitChoice?
    public var buffers: Int?
    public var rotation: OutputRotation?
    public var frames: Int?
    public var statsOut: String?
    public var screenshot: String?
    public var capture: String?
    public var watch: Bool?
    /// Show the diagnostic page for a missing or invalid scene instead of exiting (`--keep-going`).
    public var keepGoing: Bool?
    public var renderStrategy: RenderStrategy?
    public var fpsOverlay: Bool?
    /// `repaint_window`: when frames are presented while something animates (`RepaintWindow.Mode`); nil is off.
    public var repaintWindow: RepaintWindow.Mode?
    public var logLevel: LogLevel?
    public var control = Control()
    public var input = Input()
    public var idle = Idle()
    /// The `mqtt:` section: the broker to join a fleet through; nil when the file has none (or an empty one).
    public var mqtt: MQTTSettings?
    public var memory = Memory()
    public var health = Health()
    public var video = Video()
    /// The `vnc:` section: the remote view; nil when the file has none (VNC is off).
    public var vnc: VNCSettings?
    /// The `wall:` section: the kiosk's output as one panel of a video wall; nil for a scene shown whole. An
    /// `outputs:` entry's own `wall:` wins for that output.
    public var wall: WallSettings?
    /// The `sync:` section: the sync group this kiosk moves in step with; nil for none.
    public var sync: SyncSettings?
    public var web = Web()
    public var cache = Cache()
    /// The `outputs:` section's entries, in file order.
    public var outputs: [Output] = []
    /// Sections reserved for later capabilities, present in the file: their keys are accepted and not yet used.
    public var reservedSections: [String] = []

    public init() {}

    /// The scene limits the `memory:` and `video:` sections imply: they apply to every scene the kiosk loads.
    public static func sceneLimits(memory: Memory, video: Video) -> SceneLimits {
        SceneLimits(maximumImagePixels: memory.maxImagePixels ?? ImagePixelLimit.defaultMaximum, videoSchemes: video.schemes)
    }

    /// The scene limits of this file.
    public var sceneLimits: SceneLimits { Self.sceneLimits(memory: memory, video: video) }

    /// The default path kioskd reads when `--config` is not given (and the file exists).
    public static let defaultPath = "/etc/kioskd/kioskd.yaml"
    /// Where `screenshot` writes server-side files unless `control.screenshot_dir` says otherwise.
    public static let defaultScreenshotDirectory = "/var/lib/kioskd/screenshots"

    /// Every key the file may hold, section keys as `section.key`: the documentation lists each of these.
    public static var allKeys: [String] {
        let sections = ["control", "input", "idle", "mqtt", "memory", "health", "video", "web", "cache", "vnc", "wall", "sync", "outputs"]
        var keys: [String] = ConfigDecoder.topKeys.filter { !sections.contains($0) }
        keys += ConfigDecoder.controlKeys.map { "control." + $0 }
        keys += ConfigDecoder.inputKeys.map { "input." + $0 }
        keys += ConfigDecoder.idleKeys.map { "idle." + $0 }
        keys += MQTTSettings.keys.map { "mqtt." + $0 }
        keys += ConfigDecoder.memoryKeys.map { "memory." + $0 }
        keys += ConfigDecoder.healthKeys.map { "health." + $0 }
        keys += ConfigDecoder.videoKeys.map { "video." + $0 }
        keys += ConfigDecoder.webKeys.map { "web." + $0 }
        keys += ConfigDecoder.cacheKeys.map { "cache." + $0 }
        keys += VNCSettings.keys.map { "vnc." + $0 }
        keys += WallSettings.keys.map { "wall." + $0 }
        keys += SyncSettings.keys.map { "sync." + $0 }
        keys += ConfigDecoder.outputKeys.map { "outputs." + $0 }
        return keys + ConfigDecoder.reservedSections
    }

}
