/// Answers a command: returns the `result` object, or throws `ControlError` for an error reply. Runs on the
/// loop thread, so it must not block; the connection is the client that asked.
public typealias CommandHandler = (ControlArguments, ControlConnection) throws -> JSONValue

/// The commands a server answers, by name. The daemon registers its own; the server adds `ping`, `subscribe`
/// and `unsubscribe`. Lives on the loop thread, like the server that owns it.
public final class CommandRegistry {
    private var handlers: [String: CommandHandler] = [:]

    public init() {}

    /// Registers `handler` for `name`, replacing an earlier one.
    public func register(_ name: String, _ handler: @escaping CommandHandler) {
        handlers[name] = handler
    }

    public var commandNames: [String] { handlers.keys.sorted() }

    /// The reply to `request`: unknown commands and handler errors become error replies; an error that is not a
    /// `ControlError` is a bug in the handler and is reported as `internal_error` naming the command.
    public func reply(to request: ControlRequest, from connection: ControlConnection) -> JSONValue {
        guard let handler = handlers[request.command] else {
            return ControlMessage.failure(id: request.id, error: .unknownCommand(request.command))
        }
        do {
            return ControlMessage.success(id: request.id, result: try handler(request.arguments, connection))
        } catch let error as ControlError {
            return ControlMessage.failure(id: request.id, error: error)
        } catch {
            return ControlMessage.failure(id: request.id, error: .internalError("\(request.command): \(error)"))
        }
    }
}
