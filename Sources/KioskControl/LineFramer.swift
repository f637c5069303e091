/// Cuts a byte stream into lines: JSON Lines framing for the control socket. Bytes arrive in arbitrary pieces;
/// complete lines come out, without their `\n` and without a `\r` before it (clients such as `socat` or
/// Windows-born scripts send CRLF). Empty lines are skipped. A line longer than `maxLineBytes` is reported as
/// soon as that is certain, without buffering more of it, so a peer cannot make the server hold unbounded data.
///
/// A value owned by one connection; lives on the thread of that connection (the main thread in kioskd).
public struct LineFramer: Sendable {
    public enum Piece: Sendable, Equatable {
        case line([UInt8])
        /// The line in progress exceeds the limit; the framer is now poisoned and returns nothing further.
        case overLong
    }

    public let maxLineBytes: Int
    private var buffer: [UInt8] = []
    /// Bytes of `buffer` already searched for a newline, so a long line arriving in pieces is scanned once.
    private var scanned = 0
    private var poisoned = false

    public static let defaultMaxLineBytes = 1 << 20

    public init(maxLineBytes: Int = LineFramer.defaultMaxLineBytes) {
        precondition(maxLineBytes > 0, "LineFramer: maxLineBytes \(maxLineBytes) is not positive")
        self.maxLineBytes = maxLineBytes
    }

    /// Bytes of an unfinished line held back.
    public var pendingByteCount: Int { buffer.count }

    /// Feeds `bytes` and returns the lines they complete, in order; `.overLong` ends the list.
    public mutating func append(_ bytes: some Collection<UInt8>) -> [Piece] {
        guard !poisoned else { return [] }
        buffer.append(contentsOf: bytes)
        var pieces: [Piece] = []
        var lineStart = 0
        var index = scanned
        while index < buffer.endIndex {
            if buffer[index] == 0x0A {
                var lineEnd = index
                if lineEnd > lineStart && buffer[lineEnd - 1] == 0x0D { lineEnd -= 1 }
                if lineEnd - lineStart > maxLineBytes {
                    return poison(pieces)
                }
                if lineEnd > lineStart {
                    pieces.append(.line(Array(buffer[lineStart..<lineEnd])))
                }
                lineStart = index + 1
            }
            index += 1
        }
        buffer.removeFirst(lineStart)
        scanned = buffer.count
        // One byte of slack: a line of exactly the limit may still be waiting for the `\n` of its `\r\n`.
        if buffer.count > maxLineBytes + 1 || (buffer.count == maxLineBytes + 1 && buffer.last != 0x0D) {
            return poison(pieces)
        }
        return pieces
    }

    private mutating func poison(_ pieces: [Piece]) -> [Piece] {
        poisoned = true
        buffer = []
        scanned = 0
        return pieces + [.overLong]
    }
}
