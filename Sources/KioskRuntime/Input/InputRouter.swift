import KioskCore
import KioskRender
import KioskScene

/// One `input` report for control-socket subscribers: `kind` down, up, press, cancel or key; `id` the widget
/// (nil over none); `action` the emitted name of a press; `x`, `y` in scene coordinates (nil for keys); `key` the
/// key's name; the kernel's event time. An immutable value; any thread.
public struct InputReport: Sendable, Equatable {
    public enum Kind: String, Sendable { case down, up, press, cancel, key }
    public var kind: Kind
    public var id: String?
    public var action: String?
    public var x: Double?
    public var y: Double?
    public var key: String?
    public var timeMicroseconds: UInt64
}

/// Turns input events into presses on the scene: maps positions to the scene (`InputMapping`), hit-tests, runs the
/// press rules (`PressTracker`), shows pressed looks, runs `on_press`, moves the keyboard focus ring, and reports
/// every step through `onReport`.
///
/// Keys. Tab and Shift-Tab move the focus ring between the current page's enabled buttons and web pages, in the
/// scene's order; Enter or Space presses the focused button. A web page that has the focus gets every key (Tab
/// too, which moves between its own tab stops); Tab past its last tab stop (Shift-Tab before its first) moves the
/// ring on to the next stop. F6 (Shift-F6 backwards) is kioskd's own: it moves the ring on from any stop, a page
/// that keeps Tab to itself included, and never reaches a page. A tap on a page gives it the keys without a ring (as
/// a click focuses a browser's page); a tap anywhere else takes them back. With an `IdleMonitor`, every input restarts the idle time, and the contact that
/// wakes a dimmed or blank screen is swallowed from its down to its up: it reaches no widget and reports nothing.
///
/// Lives on the main thread with the stage.
public final class InputRouter {
    public let stage: SceneStage
    public var mapping: InputMapping
    /// Per-device calibration (`input.map`): applied to absolute pointers, which libinput does not calibrate.
    public var deviceRules = InputDeviceRules()
    public let idle: IdleMonitor?
    /// Seconds the cursor stays after the pointer last moved; nil: no cursor. The cursor is made when a pointer
    /// device first moves, so a touch-only kiosk never has one.
    public var cursorHideAfter: Double?
    /// The output's cursor plane, where it has one: the cursor is shown there rather than composited.
    public var cursorPlane: CursorPlane?
    /// The cursor, once a pointer has moved.
    public private(set) var cursor: PointerCursor?

    /// Another output was adopted: its cursor plane (nil: composite) from now on. The cursor of the previous output
    /// is dropped; the next pointer motion makes one on the new output.
    public func replaceCursorPlane(_ plane: CursorPlane?) {
        cursor = nil
        cursorPlane = plane
    }
    public var onReport: ((InputReport) -> Void)?
    /// Contacts and keys swallowed because their down woke the screen, until they go up.
    public private(set) var swallowedCount = 0

    private var tracker = PressTracker<WidgetNode>()
    private var swallowed: Set<PressContact> = []
    private var swallowedKeys: Set<UInt32> = []
    /// The pointer, in panel pixels (relative motion moves it as the panel is mounted).
    private var pointerPanel: (x: Double, y: Double)
    private var shiftsHeld: Set<UInt32> = []
    private weak var focused: WidgetNode?
    private var focusRing: Layer?
    /// The key that is pressing the focused button.
    private var pressingKey: UInt32?
    /// Keys down in a page: their release goes to the same page, wherever the focus is by then.
    private var webKeys: [UInt32: WebSlot] = [:]
    private var webFocusToken: ListenerToken?

    public init(stage: SceneStage, mapping: InputMapping, idle: IdleMonitor? = nil) {
        self.stage = stage
        self.mapping = mapping
        self.idle = idle
        pointerPanel = (Double(mapping.panel.width) / 2, Double(mapping.panel.height) / 2)
        webFocusToken = stage.addWebFocusLeftListener { [weak self] slot, backwards in
            guard let self, let focused, focused === slot.node else { return }
            moveFocus(backwards: backwards)
        }
    }

    /// The id of the focused widget, for tests and logs.
    public var focusedID: String? { focused?.id }

    public func handle(_ event: InputEvent) {
        guard event.isUserActivity else { return }
        let woke = idle?.noteActivity() ?? false
        let time = event.timeMicroseconds
        switch event.kind {
        case .touchDown(let slot, let position):
            cursor?.hide()
            let point = mapping.scenePoint(position)
            if woke { swallow(.touch(slot: slot)); return }
            contactDown(.touch(slot: slot), at: point, time: time)
        case .touchMotion(let slot, let position):
            guard !swallowed.contains(.touch(slot: slot)) else { return }
            contactMoved(.touch(slot: slot), to: mapping.scenePoint(position), time: time)
        case .touchUp(let slot):
            guard swallowed.remove(.touch(slot: slot)) == nil else { return }
            contactUp(.touch(slot: slot), time: time)
        case .touchCancel(let slot):
            guard swallowed.remove(.touch(slot: slot)) == nil else { return }
            if let web = webContact, web.contact == .touch(slot: slot) {
                // Released where it was: a page has no cancel, and a press left down would stay down.
                webContact = nil
                let local = web.slot.pagePoint(fromRootX: lastPoint.x, y: lastPoint.y)
                web.slot.pointer(.release, x: local.x, y: local.y)
                return
            }
            apply(tracker.cancel(.touch(slot: slot)), at: lastPoint, time: time)
        case .pointerMotion(let dx, let dy):
            pointerPanel = (min(max(pointerPanel.x + dx, 0), Double(mapping.panel.width)),
                            min(max(pointerPanel.y + dy, 0), Double(mapping.panel.height)))
            pointerMoved(time: time)
        case .pointerMotionAbsolute(let position):
            var deviceMapping = mapping
            if let calibration = deviceRules.calibration(forDevice: event.device) { deviceMapping.calibration = calibration }
            pointerPanel = deviceMapping.panelPoint(position)
            pointerMoved(time: time)
        case .pointerButton(let code, let pressed):
            cursor?.show(at: pointerScene)
            guard code == Self.leftButton else { return }
            if pressed {
                if woke { swallow(.pointer); return }
                contactDown(.pointer, at: pointerScene, time: time)
            } else {
                guard swallowed.remove(.pointer) == nil else { return }
                lastPoint = pointerScene
                contactUp(.pointer, time: time)
            }
        case .key(let name, let code, let pressed):
            key(name: name, code: code, pressed: pressed, woke: woke, time: time)
        case .deviceAdded, .deviceRemoved:
            break
        }
    }

    /// BTN_LEFT.
    static let leftButton: UInt32 = 0x110
    static let tab: UInt32 = 15, enter: UInt32 = 28, keypadEnter: UInt32 = 96, space: UInt32 = 57, f6: UInt32 = 64
    static let shifts: Set<UInt32> = [42, 54]

    private var pointerScene: (x: Double, y: Double) { mapping.scenePoint(panelX: pointerPanel.x, panelY: pointerPanel.y) }
    /// Where the driving contact was last seen, in scene coordinates of the engine root.
    private var lastPoint: (x: Double, y: Double) = (0, 0)

    private func swallow(_ contact: PressContact) {
        swallowed.insert(contact)
        swallowedCount += 1
    }

    /// The contact pressing in a web page, which gets its moves and release (the page, not kioskd, decides what a
    /// press there does).
    private var webContact: (contact: PressContact, slot: WebSlot)?

    private func contactDown(_ contact: PressContact, at point: (x: Double, y: Double), time: UInt64) {
        guard tracker.drivingContact == nil, webContact == nil else { return }
        lastPoint = point
        if let target = stage.webTarget(atX: point.x, y: point.y) {
            if focused !== target.slot.node { setFocus(target.slot.node, ring: false) }
            webContact = (contact, target.slot)
            target.slot.pointer(.motion, x: target.x, y: target.y)
            target.slot.pointer(.press, x: target.x, y: target.y)
            return
        }
        if let focused, stage.webSlot(of: focused) != nil { setFocus(nil) }
        let target = stage.pressableNode(atX: point.x, y: point.y)
        apply(tracker.down(contact, on: target), at: point, time: time)
    }

    private func contactMoved(_ contact: PressContact, to point: (x: Double, y: Double), time: UInt64) {
        if let web = webContact, web.contact == contact {
            lastPoint = point
            let local = web.slot.pagePoint(fromRootX: point.x, y: point.y)
            web.slot.pointer(.motion, x: local.x, y: local.y)
            return
        }
        if tracker.drivingContact == nil, contact == .pointer, let target = stage.webTarget(atX: point.x, y: point.y) {
            // A pointer hovering over a page: the page sees it move (hover styles, menus).
            target.slot.pointer(.motion, x: target.x, y: target.y)
            return
        }
        guard tracker.drivingContact == contact else { return }
        lastPoint = point
        apply(tracker.move(contact, over: stage.pressableNode(atX: point.x, y: point.y)), at: point, time: time)
    }

    private func contactUp(_ contact: PressContact, time: UInt64) {
        if let web = webContact, web.contact == contact {
            webContact = nil
            let local = web.slot.pagePoint(fromRootX: lastPoint.x, y: lastPoint.y)
            web.slot.pointer(.release, x: local.x, y: local.y)
            return
        }
        guard tracker.drivingContact == contact else { return }
        apply(tracker.up(contact, over: stage.pressableNode(atX: lastPoint.x, y: lastPoint.y)), at: lastPoint, time: time)
    }

    private func pointerMoved(time: UInt64) {
        if cursor == nil, let cursorHideAfter {
            cursor = PointerCursor(engine: stage.engine, hideAfter: cursorHideAfter, plane: cursorPlane, rotation: mapping.rotation)
        }
        cursor?.show(at: pointerScene)
        contactMoved(.pointer, to: pointerScene, time: time)
    }

    private func key(name: String, code: UInt32, pressed: Bool, woke: Bool, time: UInt64) {
        if Self.shifts.contains(code) {
            if pressed { shiftsHeld.insert(code) } else { shiftsHeld.remove(code) }
        }
        if pressed {
            if woke { swallowedKeys.insert(code); swallowedCount += 1; return }
            report(.key, id: focused?.id, key: name, time: time)
            if code == Self.f6 { return moveFocus(backwards: !shiftsHeld.isEmpty) }
            if let focused, let page = stage.webSlot(of: focused) {
                webKeys[code] = page
                return page.key(code: code, pressed: true)
            }
            switch code {
            case Self.tab: moveFocus(backwards: !shiftsHeld.isEmpty)
            case Self.enter, Self.keypadEnter, Self.space:
                guard let focused, pressingKey == nil, tracker.drivingContact == nil else { return }
                pressingKey = code
                apply(tracker.down(.key, on: focused), at: nil, time: time)
            default: break
            }
        } else {
            guard swallowedKeys.remove(code) == nil else { return }
            if let page = webKeys.removeValue(forKey: code) { return page.key(code: code, pressed: false) }
            if code == pressingKey {
                pressingKey = nil
                apply(tracker.up(.key, over: focused), at: nil, time: time)
            }
        }
    }

    /// Tab: the next stop after the focused one, wrapping around; Shift-Tab the one before. A page entered gives the
    /// focus to its first tab stop (its last, going backwards).
    private func moveFocus(backwards: Bool) {
        let candidates = stage.focusableNodes
        guard !candidates.isEmpty else { return setFocus(nil) }
        let index = focused.flatMap { current in candidates.firstIndex { $0 === current } }
        let next: Int
        if let index {
            next = (index + (backwards ? candidates.count - 1 : 1)) % candidates.count
        } else {
            next = backwards ? candidates.count - 1 : 0
        }
        setFocus(candidates[next])
        if let page = stage.webSlot(of: candidates[next]) { page.focus(backwards: backwards) }
    }

    /// The focus ring: a border drawn just outside the focused stop, above it (none for a page focused by a tap).
    private func setFocus(_ node: WidgetNode?, ring: Bool = true) {
        focused = node
        focusRing?.removeFromParent()
        focusRing = nil
        guard let node, ring else { return }
        let frame = node.layer.frame
        let inset = Self.focusRingGap + Int(Self.focusRingWidth)
        let ring = Layer(frame: Rect(x: -inset, y: -inset, width: frame.width + 2 * inset, height: frame.height + 2 * inset),
                         content: RectContent(color: .clear, cornerRadius: (node.widget.style.cornerRadius ?? 0) + Double(inset),
                                              border: RectContent.Border(width: Self.focusRingWidth, color: Self.focusRingColor)),
                         name: "focus ring")
        ring.zPosition = 1_000_000
        node.layer.addChild(ring)
        focusRing = ring
    }

    static let focusRingWidth = 3.0
    static let focusRingGap = 2
    static let focusRingColor = Color(red: 0.3, green: 0.76, blue: 1)

    private func apply(_ effects: [PressTracker<WidgetNode>.Effect], at point: (x: Double, y: Double)?, time: UInt64) {
        for effect in effects {
            switch effect {
            case .down(let target):
                report(.down, id: (target ?? point.flatMap { stage.widgetNodes(atX: $0.x, y: $0.y).first(where: { $0.id != nil }) })?.id,
                       at: point, time: time)
            case .pressedLook(let node, let on):
                stage.setPressedLook(node, on)
            case .press(let node):
                report(.press, id: node.id, action: node.widget.onPress?.emittedName, at: point, time: time)
                stage.performPress(of: node)
            case .cancel(let node):
                report(.cancel, id: node.id, at: point, time: time)
            case .up(let target):
                report(.up, id: target?.id, at: point, time: time)
            }
        }
    }

    private func report(_ kind: InputReport.Kind, id: String?, action: String? = nil, at point: (x: Double, y: Double)? = nil,
                        key: String? = nil, time: UInt64) {
        guard let onReport else { return }
        let scene = point.map { stage.scenePoint(fromRootX: $0.x, y: $0.y) }
        onReport(InputReport(kind: kind, id: id, action: action, x: scene?.x, y: scene?.y, key: key, timeMicroseconds: time))
    }
}
