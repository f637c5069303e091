import KioskCore
import KioskScene

/// The web widgets of the scene on screen: one `WebSlot` each, whose page is made when the widget's page is first
/// shown, and kept (loaded, its frames still taken) while other pages show, so going back to it is instant. Pages
/// come from `maker`, which `kioskd` sets to WPE WebKit; without one, web widgets show their placeholder and report
/// why. Main thread, with the stage.
final class SceneWebs {
    private unowned let engine: LayerEngine
    var maker: (any WebPageMaking)?
    /// The backoff each widget starts from (tests give it a known random source).
    var retryBackoff = RetryBackoff()
    /// The ping and hang timeout of each widget's page (tests shorten them).
    var hangWatch = WebSlot.HangWatch.standard
    private(set) var slots: [WebSlot] = []
    var onReport: ((WebEventReport) -> Void)?
    var onError: ((String) -> Void)?
    /// A page's Tab went past its last tab stop (or Shift-Tab before its first): the focus ring leaves it.
    let focusLeftListeners = Listeners<(slot: WebSlot, backwards: Bool)>()
    /// The scene's data, for pages with the bridge.
    var dataSource: (() -> [String: String])?

    /// Data keys changed: pages with the bridge get them.
    func dataChanged(_ values: [String: String]) {
        for slot in slots { slot.pushData(values) }
    }
    /// Web processes started again, over the scenes adopted so far.
    private var earlierRestarts = 0

    var restarts: Int { earlierRestarts + slots.reduce(0) { $0 + $1.restarts } }

    init(engine: LayerEngine) {
        self.engine = engine
    }

    /// Takes over the web widgets of a newly adopted scene; the previous scene's pages are closed.
    func adopt(_ nodes: [WidgetNode], currentPage: String) {
        closeAll()
        for node in nodes {
            guard case .web(let properties) = node.widget.content else { continue }
            let slot = WebSlot(node: node, properties: properties, engine: engine, maker: maker, retryBackoff: retryBackoff, hangWatch: hangWatch)
            slot.onReport = { [weak self] report in self?.onReport?(report) }
            slot.onError = { [weak self] message in self?.onError?(message) }
            slot.dataSource = { [weak self] in self?.dataSource?() ?? [:] }
            slot.onFocusLeft = { [weak self, unowned slot] backwards in self?.focusLeftListeners.emit((slot, backwards)) }
            slots.append(slot)
            if node.page == currentPage { slot.start() }
        }
    }

    func pageShown(_ page: String) {
        for slot in slots where slot.node.page == page { slot.start() }
    }

    func widgetsChanged() {
        for slot in slots { slot.widgetChanged() }
    }

    func closeAll() {
        earlierRestarts += slots.reduce(0) { $0 + $1.restarts }
        for slot in slots { slot.close() }
        slots = []
    }

    func slot(id: String) -> WebSlot? {
        slots.first { $0.node.id == id }
    }
}

/// The web widgets as the control socket drives them. Main thread.
public protocol WebControlling: AnyObject {
    func webState(id: String?) throws(StageError) -> [String: PropertyValue]
    func reloadWeb(id: String?) throws(StageError)
    func navigateWeb(id: String?, url: String) throws(StageError)
    func evaluateWeb(id: String?, script: String, done: @escaping (Result<String, StageError>) -> Void) throws(StageError)
    /// Web processes started again after one ended or hung, since kioskd started (`web_restarts`).
    var webRestarts: Int { get }
}
