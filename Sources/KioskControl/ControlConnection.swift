#if canImport(Glibc)
import Glibc
#endif
import KioskCore
import Logging

/// One client of the control socket: its descriptor, line framer, bounded outbound queue and event
/// subscriptions. Reads and writes never block: what the kernel does not take now waits in the queue until the
/// socket is writable, and a client whose queue passes its bound is disconnected rather than waited for.
///
/// Lives on the loop thread; the server creates, drives and closes it.
public final class ControlConnection {
    /// A number unique within the server's life, for logs.
    public let number: Int
    public let peer: PeerCredentials
    /// Events this client asked for with `subscribe`.
    public internal(set) var subscriptions: Set<String> = []
    public private(set) var isClosed = false

    let fd: Int32
    var source: SourceHandle?
    var framer: LineFramer
    private var outbound: [UInt8] = []
    /// Bytes of `outbound` already written; the front is dropped in batches, not byte by byte.
    private var outboundOffset = 0
    private let maxQueuedBytes: Int
    /// After a fatal error line (line too long, refused peer): no more reading, close once the line is out.
    private(set) var closeAfterFlush = false
    /// Lines read but not yet answered, from `heldNext` on (taken one by one without moving the rest): they wait
    /// while a deferred reply is outstanding, so replies keep the order of the requests, and for the client's next
    /// turn when it sent more than one turn answers. Reading pauses meanwhile, which bounds this by one read's budget.
    private var held: [LineFramer.Piece] = []
    private var heldNext = 0
    var hasHeldLines: Bool { heldNext < held.count }

    func hold(_ pieces: [LineFramer.Piece]) {
        if heldNext == held.count { held.removeAll(keepingCapacity: true); heldNext = 0 }
        held += pieces
    }

    func takeHeldLine() -> LineFramer.Piece? {
        guard heldNext < held.count else { return nil }
        defer { heldNext += 1 }
        return held[heldNext]
    }

    func dropHeldLines() {
        held = []
        heldNext = 0
    }
    /// A deferred command is working on this client's request; nothing after it is answered until it replies.
    var awaitingReply = false {
        didSet { if awaitingReply != oldValue { flush() } }
    }
    /// The client ended its side of the stream; close once every held line is answered.
    var peerEnded = false
    private let logger: Logger
    private let onClose: (ControlConnection) -> Void

    init(fd: Int32, number: Int, peer: PeerCredentials, maxLineBytes: Int, maxQueuedBytes: Int, logger: Logger,
         onClose: @escaping (ControlConnection) -> Void) {
        self.fd = fd
        self.number = number
        self.peer = peer
        self.framer = LineFramer(maxLineBytes: maxLineBytes)
        self.maxQueuedBytes = maxQueuedBytes
        self.logger = logger
        self.onClose = onClose
    }

    var name: String { "control client \(number) (\(peer))" }

    /// Bytes waiting for the socket to take them.
    public var queuedByteCount: Int { outbound.count - outboundOffset }

    /// Queues `line` (with its newline) and writes what the socket takes now. Over the bound the client is
    /// disconnected: a reader that does not keep up must not make the daemon hold unbounded memory.
    ///
    /// A reply may be larger than the bound by itself (a screenshot as base64): it is refused only when the
    /// bytes already queued reach the bound, so what one client holds stays below the bound plus one reply.
    func send(_ line: [UInt8], isReply: Bool = false) {
        guard !isClosed else { return }
        let over = isReply ? queuedByteCount >= maxQueuedBytes : queuedByteCount + line.count > maxQueuedBytes
        if over {
            logger.warning("\(name): outbound queue would exceed \(maxQueuedBytes) bytes (\(queuedByteCount) queued); disconnecting a reader that does not keep up")
            close()
            return
        }
        outbound.append(contentsOf: line)
        flush()
    }

    /// Queues `line`, stops reading, and closes once it is written.
    func sendFinal(_ line: [UInt8]) {
        closeAfterFlush = true
        dropHeldLines()
        send(line, isReply: true)
        if !isClosed && queuedByteCount == 0 { close() }
    }

    /// Stops reading and closes once the queued bytes are written (at once when none are).
    func closeOnceFlushed() {
        closeAfterFlush = true
        flush()
        if !isClosed && queuedByteCount == 0 { close() }
    }

    /// Writes queued bytes until the socket would block, then watches for writability only while some remain
    /// (a level-triggered writable watch on an idle socket would wake the loop forever).
    func flush() {
        while !isClosed && queuedByteCount > 0 {
            let written = outbound.withUnsafeBytes { buffer in
                Glibc.send(fd, buffer.baseAddress! + outboundOffset, queuedByteCount, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
            if written > 0 {
                outboundOffset += written
                continue
            }
            let code = errno
            if written < 0 && code == EINTR { continue }
            if written < 0 && (code == EAGAIN || code == EWOULDBLOCK) { break }
            // EPIPE / ECONNRESET: the client went away; nothing left to tell it.
            logger.debug("\(name): send: \(errnoDescription(code))")
            close()
            return
        }
        guard !isClosed else { return }
        if queuedByteCount == 0 {
            outbound.removeAll(keepingCapacity: outbound.capacity <= 64 * 1024)
            outboundOffset = 0
            if closeAfterFlush { close(); return }
        } else if outboundOffset > 64 * 1024 && outboundOffset * 2 > outbound.count {
            outbound.removeFirst(outboundOffset)
            outboundOffset = 0
        }
        // Not reading while a deferred reply is outstanding or lines read are still to be answered: a client that
        // pipelines faster than its turns answer waits in its socket's buffer, not in kioskd's memory.
        var wanted: IOEvents = closeAfterFlush || awaitingReply || hasHeldLines ? [] : .readable
        if queuedByteCount > 0 { wanted.insert(.writable) }
        if let source, source.events != wanted {
            do { try source.updateEvents(wanted) } catch {
                logger.error("\(name): cannot change watched events: \(error)")
                close()
            }
        }
    }

    /// Reads what is available now, at most `budget` bytes so one busy client cannot starve the others (the
    /// level-triggered watch brings the loop back for the rest). Returns the complete lines, and whether the
    /// stream ended (end of file or an error), after which the caller answers those lines and closes.
    func readAvailable(budget: Int = 256 * 1024) -> (pieces: [LineFramer.Piece], ended: Bool) {
        var pieces: [LineFramer.Piece] = []
        var total = 0
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while total < budget {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count > 0 {
                total += count
                pieces += framer.append(chunk[0..<count])
                if pieces.last == .overLong { return (pieces, false) }
                continue
            }
            if count == 0 { return (pieces, true) }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { break }
            logger.debug("\(name): recv: \(errnoDescription(code))")
            return (pieces, true)
        }
        return (pieces, false)
    }

    /// Stops watching and closes the descriptor; the server forgets the client. Safe to call twice.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        source?.cancel()
        source = nil
        if fd >= 0 { Glibc.close(fd) }
        dropHeldLines()
        outbound = []
        outboundOffset = 0
        onClose(self)
    }
}
