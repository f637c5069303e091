/// What presses a widget: a finger (by multitouch slot), the pointer's button, or a key on the focused widget.
public enum PressContact: Hashable, Sendable {
    case touch(slot: Int)
    case pointer
    case key
}

/// The press rules, apart from any screen: the first contact drives, and further contacts are ignored while it is
/// down; a press starts on a pressable target and shows its pressed look while the contact stays inside it;
/// releasing inside presses it; sliding out (or a cancelled touch) cancels the press for good, even if the contact
/// comes back in. `Target` is whatever identifies a pressable widget. Main thread, with the stage it drives.
public struct PressTracker<Target: AnyObject> {
    /// What the caller does in response, in order.
    public enum Effect {
        /// A contact went down, on `target` (nil: on nothing pressable).
        case down(Target?)
        /// Show (`true`) or drop the pressed look.
        case pressedLook(Target, Bool)
        /// The contact was released inside the target it started on: the press happened.
        case press(Target)
        /// The press of `target` will not happen: the contact slid out or was withdrawn.
        case cancel(Target)
        /// The driving contact went up (after a `press` or `cancel`, or on nothing).
        case up(Target?)
    }

    private struct Active {
        var contact: PressContact
        /// The widget the contact went down on, while its press can still happen.
        var target: Target?
        /// What the contact went down on, for the `up` report.
        var startedOn: Target?
    }

    private var active: Active?

    public init() {}

    /// The contact driving presses now.
    public var drivingContact: PressContact? { active?.contact }

    /// A contact went down on `target` (what is pressable there; nil for nothing, or a disabled widget).
    public mutating func down(_ contact: PressContact, on target: Target?) -> [Effect] {
        guard active == nil else { return [] }
        active = Active(contact: contact, target: target, startedOn: target)
        guard let target else { return [.down(nil)] }
        return [.down(target), .pressedLook(target, true)]
    }

    /// The contact moved and is now over `target`.
    public mutating func move(_ contact: PressContact, over target: Target?) -> [Effect] {
        guard let current = active, current.contact == contact, let pressed = current.target, pressed !== target else { return [] }
        active?.target = nil
        return [.pressedLook(pressed, false), .cancel(pressed)]
    }

    /// The contact went up over `target`.
    public mutating func up(_ contact: PressContact, over target: Target?) -> [Effect] {
        guard let current = active, current.contact == contact else { return [] }
        active = nil
        guard let pressed = current.target else { return [.up(current.startedOn)] }
        if pressed === target { return [.pressedLook(pressed, false), .press(pressed), .up(pressed)] }
        return [.pressedLook(pressed, false), .cancel(pressed), .up(current.startedOn)]
    }

    /// The kernel withdrew the contact (`touch cancel`), or the scene under it went away.
    public mutating func cancel(_ contact: PressContact) -> [Effect] {
        guard let current = active, current.contact == contact else { return [] }
        active = nil
        guard let pressed = current.target else { return [] }
        return [.pressedLook(pressed, false), .cancel(pressed)]
    }

    /// Forgets the press in progress without effects: the scene it was on was replaced.
    public mutating func reset() { active = nil }
}
