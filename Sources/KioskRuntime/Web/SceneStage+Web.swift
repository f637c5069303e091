import KioskCore
import KioskScene

/// The stage's web widgets (`SceneWebs`) for the control socket: state and reload, by widget id.
extension SceneStage: WebControlling {
    /// Makes the pages of web widgets; `kioskd` sets WPE WebKit here. Setting it makes the scene's pages again.
    public var webPages: (any WebPageMaking)? {
        get { webs.maker }
        set {
            webs.maker = newValue
            webs.adopt(nodes, currentPage: currentPage)
        }
    }

    /// The backoff every web widget of scenes adopted from now on starts from (tests give it a known random source).
    public var webRetryBackoff: RetryBackoff {
        get { webs.retryBackoff }
        set { webs.retryBackoff = newValue }
    }

    /// How long a loaded page of web widgets adopted from now on may leave a ping (sent every half of it) or a
    /// `web.eval` script unanswered before its web process is ended: 10 s unless a test shortens it.
    public var webHangTimeout: Duration {
        get { webs.hangWatch.hangTimeout }
        set { webs.hangWatch = WebSlot.HangWatch(hangTimeout: newValue) }
    }

    /// `web.state`: the widget's page, its state and counters.
    public func webState(id: String?) throws(StageError) -> [String: PropertyValue] {
        let slot = try webSlot(id)
        return [
            "id": slot.node.id.map(PropertyValue.string) ?? .null,
            "url": .string(slot.properties.url),
            "state": .string(slot.state),
            "loads": .number(Double(slot.loads)),
            "failures": .number(Double(slot.failures)),
            "current_url": slot.currentURL.map(PropertyValue.string) ?? .null,
            "process_exits": .number(Double(slot.processExits)),
            "restarts": .number(Double(slot.restarts)),
            "hangs": .number(Double(slot.hangs)),
            "navigations_refused": .number(Double(slot.refusedNavigations)),
            "frames_received": .number(Double(slot.framesReceived)),
            "frames_shown": .number(Double(slot.framesShown)),
            "error": slot.problem.map(PropertyValue.string) ?? .null,
            "retry_in": slot.retryDue.map { .number(max($0 - engine.loop.now, .zero).milliseconds / 1000) } ?? .null,
        ]
    }

    /// `web.reload`: the page loaded again now.
    public func reloadWeb(id: String?) throws(StageError) {
        try webSlot(id).reload()
    }

    /// `web.navigate`: another address for the widget until the scene is loaded again; within its
    /// `allowed_origins` when it has them.
    public func navigateWeb(id: String?, url: String) throws(StageError) {
        let slot = try webSlot(id)
        if let problem = WebProperties.problem(withURL: url) { throw StageError(.invalidArgument, problem) }
        guard slot.allows(url) else {
            throw StageError(.invalidArgument, "'\(url)' is outside the widget's allowed_origins (\((slot.properties.allowedOrigins ?? []).joined(separator: ", ")))")
        }
        slot.load(url: url)
    }

    /// `web.eval`: runs `script` in the widget's page; `done` gets its value as text.
    public func evaluateWeb(id: String?, script: String, done: @escaping (Result<String, StageError>) -> Void) throws(StageError) {
        try webSlot(id).evaluate(script, done: done)
    }

    public var webRestarts: Int { webs.restarts }

    /// The web widget whose page is the innermost widget at the scene point (`x`, `y`, in the engine root's
    /// coordinates), and the point in the page's pixels; nil elsewhere.
    func webTarget(atX x: Double, y: Double) -> (slot: WebSlot, x: Int, y: Int)? {
        guard let node = widgetNodes(atX: x, y: y).first, case .web = node.widget.content, let body = node.body,
              let slot = webSlot(of: node),
              let local = body.convertFromTreeRoot(x: x, y: y) else { return nil }
        return (slot, Int(local.x.rounded(.down)), Int(local.y.rounded(.down)))
    }

    private func webSlot(_ id: String?) throws(StageError) -> WebSlot {
        if let id {
            if let slot = webs.slot(id: id) { return slot }
            let known = webs.slots.compactMap(\.node.id)
            throw StageError(.notFound, "no web widget with id '\(id)'" + (known.isEmpty ? "" : " (web widgets: \(known.joined(separator: ", ")))"))
        }
        switch webs.slots.count {
        case 1: return webs.slots[0]
        case 0: throw StageError(.notFound, "the scene has no web widget")
        default: throw StageError(.invalidArgument, "the scene has \(webs.slots.count) web widgets: give 'id'")
        }
    }
}
