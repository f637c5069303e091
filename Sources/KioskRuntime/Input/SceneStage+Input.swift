import KioskCore
import KioskRender
import KioskScene
import Logging

private let logger = Logger(label: "kioskd.input")

/// The stage's side of input: which widget is under a point, which widgets take presses, the pressed look, and
/// what a press does. Main thread, with the stage.
extension SceneStage {
    /// The widgets under the scene point (`x`, `y`, in the engine root's coordinates), innermost first, found by
    /// hit-testing the layer tree as it is composited; empty over the background.
    func widgetNodes(atX x: Double, y: Double) -> [WidgetNode] {
        guard let hit = engine.rootLayer.hitTest(x: x, y: y) else { return [] }
        var byLayer: [ObjectIdentifier: WidgetNode] = [:]
        for node in nodes {
            byLayer[ObjectIdentifier(node.layer)] = node
            if let body = node.body { byLayer[ObjectIdentifier(body)] = node }
            if let pressed = node.pressedBody { byLayer[ObjectIdentifier(pressed)] = node }
        }
        var chain: [WidgetNode] = []
        for layer in hit.selfAndAncestors {
            if let node = byLayer[ObjectIdentifier(layer)], chain.last !== node { chain.append(node) }
        }
        return chain
    }

    /// What a press at the point would press: the innermost widget there that is a button or has `on_press`; nil
    /// when that is a disabled button (it takes no presses), or there is none.
    func pressableNode(atX x: Double, y: Double) -> WidgetNode? {
        guard let node = widgetNodes(atX: x, y: y).first(where: { Self.takesPresses($0) || Self.isDisabledButton($0) }) else { return nil }
        return Self.isDisabledButton(node) ? nil : node
    }

    static func takesPresses(_ node: WidgetNode) -> Bool {
        if case .button(let b) = node.widget.content { return b.enabled }
        return node.widget.onPress != nil
    }

    static func isDisabledButton(_ node: WidgetNode) -> Bool {
        if case .button(let b) = node.widget.content { return !b.enabled }
        return false
    }

    /// The stops Tab moves between, in the scene's order: enabled buttons and web pages, shown, on the current page.
    var focusableNodes: [WidgetNode] {
        nodes.filter { node in
            guard node.page == currentPage, !node.isHidden, !node.layer.isHidden else { return false }
            switch node.widget.content {
            case .button(let b): return b.enabled
            case .web: return webSlot(of: node) != nil
            default: return false
            }
        }
    }

    /// The page of a web widget.
    func webSlot(of node: WidgetNode) -> WebSlot? {
        webs.slots.first { $0.node === node }
    }

    /// Calls `listener` when a page's Tab goes past its last tab stop (Shift-Tab, `backwards`, before its first).
    func addWebFocusLeftListener(_ listener: @escaping (_ slot: WebSlot, _ backwards: Bool) -> Void) -> ListenerToken {
        webs.focusLeftListeners.add { listener($0.slot, $0.backwards) }
    }

    /// Shows a button's pressed look (or its resting one again); other widgets have none. The pressed look is
    /// rendered ahead (`WidgetNode.pressedBody`), so this renders nothing: the frame committed at the end of this
    /// loop turn shows it.
    func setPressedLook(_ node: WidgetNode, _ pressed: Bool) {
        guard case .button = node.widget.content else { return }
        builder.showPressedLook(node, pressed)
    }

    /// Runs the widget's `on_press`.
    func performPress(of node: WidgetNode) {
        switch node.widget.onPress {
        case .showPage(let name, let transition):
            do { try showPage(name, transition: transition) } catch {
                logger.error("widget \(node.id ?? node.widget.type.rawValue): on_press page \(name): \(error)")
            }
        case .setData(let values):
            do { try setData(values) } catch {
                logger.error("widget \(node.id ?? node.widget.type.rawValue): on_press data: \(error)")
            }
        case .emit, nil:
            break
        }
    }

    /// The point in the stage's scene coordinates (a fixed-size scene is scaled and centred on the screen).
    func scenePoint(fromRootX x: Double, y: Double) -> (x: Double, y: Double) {
        root.convertFromTreeRoot(x: x, y: y) ?? (x, y)
    }
}
