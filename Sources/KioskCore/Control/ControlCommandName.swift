/// Every command the control socket answers, by the name a request gives it: the one list of them. The command
/// registry (KioskControl) registers handlers only under these, and the MQTT settings decoder (KioskScene), which
/// cannot see the registry, checks `mqtt.allow` against the same cases, so a command cannot be known to one and not
/// the other. A plain value.
public enum ControlCommandName: String, CaseIterable, Comparable, Sendable {
    case animate
    case cacheClear = "cache.clear"
    case cacheRefresh = "cache.refresh"
    case dataGet = "data.get"
    case dataSet = "data.set"
    case logLevel = "log.level"
    case outputInfo = "output.info"
    case outputPower = "output.power"
    case outputVerify = "output.verify"
    case pageShow = "page.show"
    case ping
    case plays
    case sceneGet = "scene.get"
    case sceneLoad = "scene.load"
    case screenshot
    case stats
    case subscribe
    case unsubscribe
    case version
    case videoLoad = "video.load"
    case videoPause = "video.pause"
    case videoPlay = "video.play"
    case videoSeek = "video.seek"
    case videoState = "video.state"
    case webClearData = "web.clear_data"
    case webEval = "web.eval"
    case webNavigate = "web.navigate"
    case webReload = "web.reload"
    case webState = "web.state"
    case widgetGet = "widget.get"
    case widgetSet = "widget.set"

    /// Other names answered: for clients and `mqtt.allow` lists written before the monitor was called the output,
    /// `display.info` is `output.info` and `display.power` is `output.power`; `display.verify` is `output.verify`.
    public static let aliases: [String: ControlCommandName] = ["display.info": .outputInfo, "display.power": .outputPower,
                                                               "display.verify": .outputVerify]

    /// The command `name` means: its own name or an alias; nil for a name no command has.
    public init?(wireName name: String) {
        guard let command = ControlCommandName(rawValue: name) ?? Self.aliases[name] else { return nil }
        self = command
    }

    /// Every name a request may give, the aliases among them, sorted: what a misspelt name is compared with.
    public static var acceptedNames: [String] { (allCases.map(\.rawValue) + aliases.keys).sorted() }

    public static func < (a: ControlCommandName, b: ControlCommandName) -> Bool { a.rawValue < b.rawValue }
}
