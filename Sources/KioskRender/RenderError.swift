/// A drawing, PNG or text failure; the message names the object (canvas size, file path) and Cairo's status string.
/// A plain value; crosses threads freely.
public struct RenderError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
