import KioskCore

/// Answers a command: returns the `result` object, or throws `ControlError` for an error reply. Runs on the
/// loop thread, so it must not block; the connection is the client that asked.
public typealias CommandHandler = (ControlArguments, ControlConnection) throws -> JSONValue

/// Starts a command whose answer takes longer than the loop may wait (encoding a screenshot): it hands the
/// slow part to another thread and completes `reply` later, on the loop thread. Throwing before that is an
/// error reply at once. Until `reply` completes, the client's later requests wait, so replies keep their order.
public typealias DeferredCommandHandler = (ControlArguments, ControlConnection, DeferredReply) throws -> Void

/// The answer a deferred command owes. Completed once, on the loop thread; later completions are ignored.
/// A reply to a client that has gone is dropped. Lives on the loop thread.
public final class DeferredReply {
    private var completion: ((Result<JSONValue, ControlError>) -> Void)?

    init(_ completion: @escaping (Result<JSONValue, ControlError>) -> Void) {
        self.completion = completion
    }

    public var isCompleted: Bool { completion == nil }

    public func succeed(_ result: JSONValue) { complete(.success(result)) }

    public func fail(_ error: ControlError) { complete(.failure(error)) }

    public func complete(_ outcome: Result<JSONValue, ControlError>) {
        guard let completion else { return }
        self.completion = nil
        completion(outcome)
    }
}

/// The commands a server answers, by name, each with the argument names it knows. The daemon registers its own;
/// the server adds `ping`, `subscribe` and `unsubscribe`. Names are `ControlCommandName`s, the one list of commands
/// (the MQTT settings check `allow` against it too); a request may give a command's alias (`display.power`), which
/// finds the command under its own name. A request with an argument its command does not know is
/// refused here, before any handler runs, with `invalid_argument` naming it and the nearest known name. Lives on
/// the loop thread, like the server that owns it.
public final class CommandRegistry {
    private enum Handler {
        case immediate(CommandHandler)
        case deferred(DeferredCommandHandler)
    }

    private struct Entry {
        var arguments: Set<String>
        var handler: Handler
    }

    private var handlers: [String: Entry] = [:]

    public init() {}

    /// Registers `handler` for `name`, which takes the top-level `arguments` named (none by default), replacing an
    /// earlier one.
    public func register(_ name: ControlCommandName, arguments: Set<String> = [], _ handler: @escaping CommandHandler) {
        register(named: name.rawValue, arguments: arguments, handler)
    }

    /// Registers a command that answers later through its `DeferredReply`, replacing an earlier one.
    public func registerDeferred(_ name: ControlCommandName, arguments: Set<String> = [], _ handler: @escaping DeferredCommandHandler) {
        registerDeferred(named: name.rawValue, arguments: arguments, handler)
    }

    /// A command by any name: for the registry's own tests, which answer made-up commands.
    func register(named name: String, arguments: Set<String> = [], _ handler: @escaping CommandHandler) {
        handlers[name] = Entry(arguments: arguments, handler: .immediate(handler))
    }

    func registerDeferred(named name: String, arguments: Set<String> = [], _ handler: @escaping DeferredCommandHandler) {
        handlers[name] = Entry(arguments: arguments, handler: .deferred(handler))
    }

    /// The argument names `command` (its own name or an alias) knows, or nil for a command that is not registered.
    public func argumentNames(of command: String) -> Set<String>? { handlers[Self.key(command)]?.arguments }

    /// The name a command is registered under: an alias's command's own name, any other name as it is.
    private static func key(_ command: String) -> String { ControlCommandName(wireName: command)?.rawValue ?? command }

    /// The registered commands by their own names.
    public var commandNames: [String] { handlers.keys.sorted() }

    /// Every name a request may give: the registered commands' own names and their aliases (what `version` lists,
    /// so a client written for an older name still finds its command).
    public var acceptedNames: [String] {
        (Array(handlers.keys) + ControlCommandName.aliases.filter { handlers[$0.value.rawValue] != nil }.map(\.key)).sorted()
    }

    /// Answers `request` through `deliver`: at once for immediate commands and errors, later (on the loop
    /// thread) for deferred ones. Returns whether the reply was delivered before returning. Unknown commands and
    /// handler errors become error replies; an error that is not a `ControlError` is a bug in the handler and is
    /// reported as `internal_error` naming the command.
    @discardableResult
    public func start(_ request: ControlRequest, from connection: ControlConnection, _ deliver: @escaping (JSONValue) -> Void) -> Bool {
        let id = request.id
        guard let entry = handlers[Self.key(request.command)] else {
            deliver(ControlMessage.failure(id: id, error: .unknownCommand(request.command)))
            return true
        }
        do {
            try request.arguments.refuseUnknown(known: entry.arguments)
        } catch {
            deliver(ControlMessage.failure(id: id, error: error))
            return true
        }
        switch entry.handler {
        case .immediate(let handler):
            deliver(Self.outcome(id: id, command: request.command) { try handler(request.arguments, connection) })
            return true
        case .deferred(let handler):
            var delivered = false
            let reply = DeferredReply { outcome in
                delivered = true
                switch outcome {
                case .success(let result): deliver(ControlMessage.success(id: id, result: result))
                case .failure(let error): deliver(ControlMessage.failure(id: id, error: error))
                }
            }
            do {
                try handler(request.arguments, connection, reply)
            } catch {
                reply.fail(Self.controlError(error, command: request.command))
            }
            return delivered
        }
    }

    private static func outcome(id: JSONValue, command: String, _ body: () throws -> JSONValue) -> JSONValue {
        do {
            return ControlMessage.success(id: id, result: try body())
        } catch {
            return ControlMessage.failure(id: id, error: controlError(error, command: command))
        }
    }

    private static func controlError(_ error: any Error, command: String) -> ControlError {
        (error as? ControlError) ?? .internalError("\(command): \(error)")
    }
}
