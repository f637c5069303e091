import Foundation
import KioskCore
import Yams

/// Walks a composed config file into a `KioskConfig` with the scene decoder's machinery: every problem is a
/// located diagnostic (`FILE:LINE:COL: key: problem`), unknown keys get the nearest known one, and decoding goes
/// on so one `kioskd check-config` shows them all. Used once, by one thread, inside `ConfigLoader`.
struct ConfigDecoder {
    static let topKeys = ["scene", "board", "backend", "fbdev", "device", "driver", "connector", "mode", "commit", "buffers",
                          "rotation", "frames", "stats_out", "screenshot", "capture", "watch", "keep_going",
                          "render_strategy", "fps_overlay", "repaint_window", "log_level", "control", "input", "idle", "mqtt", "memory", "health", "video", "web", "cache", "vnc", "wall", "sync", "outputs"] + reservedSections
    static let controlKeys = ["socket", "socket_group", "allow_uid", "allow_gid", "screenshot_dir"]
    static let memoryKeys = ["max_image_pixels", "preload_pages", "surface_budget_mb"]
    static let videoKeys = ["allowed_schemes"]
    /// Sections the file format sets aside for capabilities to come; kioskd accepts them and warns that it does
    /// not use them yet, so a config written for a newer kioskd still starts an older one.
    static let reservedSections: [String] = []

    let scene: SceneDecoder
    let baseDirectory: String

    init(file: String, baseDirectory: String) {
        scene = SceneDecoder(file: file, baseDirectory: baseDirectory, limits: SceneLimits())
        self.baseDirectory = baseDirectory
    }

    func config(_ root: Node) -> KioskConfig {
        var config = KioskConfig()
        guard let f = scene.fields(root, "", allowed: Self.topKeys, expected: "a mapping of settings (scene, board, mode, control, ...)") else {
            return config
        }
        func value(_ key: String) -> Node? { f[key]?.value }
        func text(_ key: String) -> String? { value(key).flatMap { nonEmpty($0, key) } }
        config.scene = text("scene").map { $0 == "default" ? $0 : path($0) }
        config.board = text("board").map(path)
        config.backend = value("backend").flatMap { scene.choice($0, "backend", KioskConfig.Backend.self) }
        config.device = text("device").map { $0 == "auto" ? $0 : path($0) }
        config.fbdev = text("fbdev").map(path)
        config.driver = text("driver")
        config.connector = text("connector")
        config.mode = value("mode").flatMap { modeRequest($0, "mode") }
        config.commit = value("commit").flatMap { scene.choice($0, "commit", CommitChoice.self) }
        config.buffers = value("buffers").flatMap { scene.integer($0, "buffers", in: 2...3) }
        config.rotation = value("rotation").flatMap { rotation($0, "rotation") }
        config.frames = value("frames").flatMap { scene.integer($0, "frames", in: 1...Int(Int32.max)) }
        config.statsOut = text("stats_out").map(path)
        config.screenshot = text("screenshot").map(path)
        config.capture = text("capture").map(path)
        config.watch = value("watch").flatMap { scene.bool($0, "watch") }
        config.keepGoing = value("keep_going").flatMap { scene.bool($0, "keep_going") }
        config.renderStrategy = value("render_strategy").flatMap { scene.choice($0, "render_strategy", KioskConfig.RenderStrategy.self) }
        config.fpsOverlay = value("fps_overlay").flatMap { scene.bool($0, "fps_overlay") }
        config.repaintWindow = value("repaint_window").flatMap { repaintWindow($0, "repaint_window") }
        config.logLevel = value("log_level").flatMap { scene.choice($0, "log_level", KioskConfig.LogLevel.self) }
        if let node = value("control") { config.control = control(node) }
        if let node = value("input") { config.input = input(node) }
        if let node = value("idle") { config.idle = idle(node) }
        if let node = value("mqtt") { config.mqtt = mqtt(node) }
        if let node = value("memory") { config.memory = memory(node) }
        if let node = value("health") { config.health = health(node) }
        if let node = value("video") { config.video = video(node) }
        if let node = value("vnc") { config.vnc = vnc(node) }
        if let node = value("wall") { config.wall = wall(node, "wall") }
        if let entry = f["sync"] {
            config.sync = sync(entry.value)
            if config.sync != nil, f["mqtt"] == nil {
                scene.error(entry.key, "sync", "a sync group meets on the fleet's MQTT broker: add an mqtt: section")
            }
        }
        if let node = value("web") { config.web = web(node) }
        if let node = value("cache") { config.cache = cache(node) }
        if let node = value("outputs") { config.outputs = outputs(node) }
        for name in Self.reservedSections {
            guard let entry = f[name] else { continue }
            config.reservedSections.append(name)
            reserved(entry.value, name)
        }
        return config
    }

    private func control(_ node: Node) -> KioskConfig.Control {
        var control = KioskConfig.Control()
        guard let f = scene.fields(node, "control", allowed: Self.controlKeys, expected: "a mapping (socket, socket_group, allow_uid, allow_gid, screenshot_dir)") else {
            return control
        }
        control.socket = f["socket"].flatMap { nonEmpty($0.value, "control.socket") }.map { $0 == "none" ? $0 : path($0) }
        control.socketGroup = f["socket_group"].flatMap { nonEmpty($0.value, "control.socket_group") }
        control.allowUIDs = f["allow_uid"].map { ids($0.value, "control.allow_uid") } ?? []
        control.allowGIDs = f["allow_gid"].map { ids($0.value, "control.allow_gid") } ?? []
        control.screenshotDirectory = f["screenshot_dir"].flatMap { nonEmpty($0.value, "control.screenshot_dir") }.map(path)
        return control
    }

    private func memory(_ node: Node) -> KioskConfig.Memory {
        var memory = KioskConfig.Memory()
        if node.scalar != nil, scene.resolves(node, to: .null) { return memory }
        guard let f = scene.fields(node, "memory", allowed: Self.memoryKeys,
                                   expected: "a mapping (max_image_pixels, preload_pages, surface_budget_mb)") else {
            return memory
        }
        memory.maxImagePixels = f["max_image_pixels"].flatMap { scene.integer($0.value, "memory.max_image_pixels", in: 1...(1 << 40)) }
        memory.preloadPages = f["preload_pages"].flatMap { scene.integer($0.value, "memory.preload_pages", in: 0...100) }
        memory.surfaceBudgetMB = f["surface_budget_mb"].flatMap { scene.integer($0.value, "memory.surface_budget_mb", in: 1...65536) }
        return memory
    }

    /// A reserved section: a mapping (or empty) whose keys this version does not use yet, each one a warning.
    private func reserved(_ node: Node, _ name: String) {
        if node.scalar != nil, scene.resolves(node, to: .null) { return }
        guard let mapping = node.mapping else { scene.error(node, name, "expected a mapping"); return }
        for (key, _) in mapping {
            scene.report(.warning, scene.location(key), SceneDecoder.child(name, key.scalar?.string ?? "?"),
                         "the '\(name)' section is reserved for a later kioskd; this version does not use it")
        }
    }

    /// One id, or a list of them.
    private func ids(_ node: Node, _ path: String) -> [UInt32] {
        let items = node.sequence.map(Array.init) ?? [node]
        return items.enumerated().compactMap { index, item in
            scene.integer(item, node.sequence == nil ? path : "\(path)[\(index)]", in: 0...Int(UInt32.max - 1)).map(UInt32.init)
        }
    }

    /// A string that is not empty.
    func nonEmpty(_ node: Node, _ path: String) -> String? {
        guard let s = scene.string(node, path) else { return nil }
        guard !s.isEmpty else { scene.error(node, path, "expected a non-empty string"); return nil }
        return s
    }

    /// `WxH`, `WxH@Hz` or `WxH@59.94`; the error says which part is wrong.
    func modeRequest(_ node: Node, _ path: String) -> ModeRequest? {
        guard let s = nonEmpty(node, path) else { return nil }
        do { return try ModeRequest(validating: s) } catch let error as ModeRequestError {
            scene.error(node, path, error.message)
        } catch { scene.error(node, path, "\(error)") }
        return nil
    }

    /// 0, 90, 180 or 270 degrees clockwise.
    func rotation(_ node: Node, _ path: String) -> OutputRotation? {
        if let r = node.scalar.flatMap({ OutputRotation(parsing: $0.string) }) { return r }
        scene.error(node, path, "expected one of \(OutputRotation.allowedValues) (degrees clockwise)")
        return nil
    }

    /// `auto`, `off`, or a lead in milliseconds (0 is `off`).
    func repaintWindow(_ node: Node, _ path: String) -> RepaintWindow.Mode? {
        if let mode = node.scalar.flatMap({ RepaintWindow.Mode($0.string) }) { return mode }
        scene.error(node, path, "expected auto, off, or the lead before the vblank in milliseconds (0 to 999)")
        return nil
    }

    /// A path relative to the config file's folder; a URL (a scene by URL) as it is.
    func path(_ s: String) -> String {
        s.hasPrefix("/") || RemoteAsset.looksRemote(s) ? s : (baseDirectory as NSString).appendingPathComponent(s)
    }
}

/// Reads and validates kioskd's config file. Synchronous file I/O: call it before the loop starts or from the
/// CLI. Stateless; any thread.
public enum ConfigLoader {
    /// Config files are a page or two; anything larger is not one.
    public static let maximumBytes = 256 * 1024

    /// - Throws: every error found, located; the warnings (reserved sections) come back with the config.
    public static func load(path: String) throws(SceneValidationError) -> (config: KioskConfig, warnings: [SceneDiagnostic]) {
        let data = try SceneLoader.readDocument(path: path, maximumBytes: maximumBytes, kind: "config")
        let base = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return try parse(data: data, file: path, baseDirectory: base)
    }

    public static func parse(data: Data, file: String, baseDirectory: String) throws(SceneValidationError) -> (config: KioskConfig, warnings: [SceneDiagnostic]) {
        // An empty file (or one with only comments) is a valid config that changes nothing.
        guard let root = try DocumentDecoder.composeIfAny(data, file: file, maximumBytes: maximumBytes,
                                                          maximumFlowDepth: SceneLimits().maximumFlowDepth) else {
            return (KioskConfig(), [])
        }
        let decoder = ConfigDecoder(file: file, baseDirectory: baseDirectory)
        let config = decoder.config(root)
        let diagnostics = decoder.scene.sortedDiagnostics
        guard !diagnostics.contains(where: { $0.severity == .error }) else { throw SceneValidationError(diagnostics: diagnostics) }
        return (config, diagnostics)
    }
}
