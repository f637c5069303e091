/// What pressing a widget does (`on_press` in the scene). Every press is also reported as an `input` event with
/// the widget's id. An immutable value; any thread.
public enum PressAction: Sendable, Equatable {
    /// `{page: NAME, transition: ...}`: shows the page; `transition` nil uses the page's own.
    case showPage(name: String, transition: Transition?)
    /// `{data: {key: value}}`: sets data keys, as `data.set` does.
    case setData([String: String])
    /// `{emit: NAME}`: only reports the press, with `NAME` as the event's `action`.
    case emit(String)

    /// The name reported as the `input` event's `action`: the emitted name, or nil for the other actions.
    public var emittedName: String? {
        if case .emit(let name) = self { return name }
        return nil
    }
}
