/// The listeners of one event, as wlroots' `wl_signal` has them: any number of parties hear every emission, each
/// through the token `add` returned, and none needs to know who else listens or in which order the others were
/// wired. A single closure slot would have each new party save the old closure and call it from its own (a chain
/// that breaks as soon as one party forgets, or sets the slot before another saves it); here each party adds itself
/// and removes only itself.
///
/// Listeners run in the order they were added. A listener added during an emission hears from the next one; a
/// listener removed during an emission (its token cancelled or freed, by itself or by an earlier listener) is not
/// called later in it, as a loop observer cancelled during an iteration is not. Emissions may nest: a listener may
/// emit again, and each emission runs over the listeners there were when it began, less those removed since.
///
/// The list holds its listeners strongly until their tokens are cancelled: a listener that captures its owner
/// strongly, while the owner holds the token, is a cycle; capture the owner weakly or unowned, as loop handlers do.
///
/// Lives on the thread of the object that emits, which is the main thread for every emitter in kioskd (the engine,
/// the stage, the signal routing): make it, add to it, emit and cancel there.
public final class Listeners<Event> {
    /// One added listener; the list and its token share it.
    final class Entry {
        var handler: ((Event) -> Void)?
        init(_ handler: @escaping (Event) -> Void) { self.handler = handler }
    }

    private var entries: [Entry] = []

    public init() {}

    /// How many listeners are added and not removed.
    public var count: Int { entries.count }

    /// Whether nobody listens: an emitter may skip building an event nobody hears.
    public var isEmpty: Bool { entries.isEmpty }

    /// Calls `listener` with every event emitted from the next emission on, until the returned token is cancelled
    /// or freed. Keep the token for as long as the listener should hear: in the object that listens.
    public func add(_ listener: @escaping (Event) -> Void) -> ListenerToken {
        let entry = Entry(listener)
        entries.append(entry)
        return ListenerToken { [weak self, weak entry] in
            guard let entry else { return }
            entry.handler = nil
            self?.entries.removeAll { $0 === entry }
        }
    }

    /// Calls every listener with `event`, in the order they were added.
    public func emit(_ event: Event) {
        // The entries as they are now: additions wait for the next emission; a removal clears the entry's handler,
        // so it is skipped here too.
        let current = entries
        for entry in current {
            entry.handler?(event)
        }
    }
}

extension Listeners where Event == Void {
    /// Calls every listener, in the order they were added.
    public func emit() { emit(()) }
}

/// A listener's hold on its `Listeners`; `Listeners.add` returns it. Cancelling it, or freeing it, removes the
/// listener, so an object that keeps its tokens in its own properties stops listening when it is freed.
///
/// Lives on the thread of the list it came from.
public final class ListenerToken {
    private var remove: (() -> Void)?

    init(remove: @escaping () -> Void) {
        self.remove = remove
    }

    /// Whether the listener was removed through this token.
    public var isCancelled: Bool { remove == nil }

    /// Removes the listener. Safe from any listener, this token's own included; a listener removed during an
    /// emission is not called later in it. Idempotent.
    public func cancel() {
        let remove = self.remove
        self.remove = nil
        remove?()
    }

    deinit { cancel() }
}
