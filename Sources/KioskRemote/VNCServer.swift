#if canImport(Glibc)
import Glibc
#endif
import KioskCore
import Logging

/// The remote view of one output: an RFB server on a TCP port, on the main loop, serving the engine's composed frame
/// (the shadow buffer, captured as `screenshot` captures it) and sending each client only what changed since its
/// last update.
///
/// Bounded: at most `maxClients` clients (the next is told why and closed); a handshake not finished within
/// `handshakeTimeout` is closed; a client gets a new update only once the previous one was written out, so a slow
/// client gets fewer frames, its damage merged meanwhile (`RFBDamage`), and holds at most one update's bytes. The
/// loop never blocks on a socket (non-blocking reads and writes, a writable watch while bytes wait) and never
/// encodes: one capture is shared by every client that is due, and the updates are made on a worker
/// (`BackgroundJobs`). Presents never wait for a client. With `tls`, every client speaks VeNCrypt: its bytes go
/// through a `TLSConnection` on memory buffers, the handshake advanced as its bytes come, and an update encrypted a
/// chunk at a time only when the socket has taken the last one, so a client that stops reading costs no encryption
/// and holds at most one update. The time the loop spends here, on its own CPU clock, is counted (`loopTime`).
/// Main thread.
public final class VNCServer {
    public struct Options: Sendable {
        public var host: String
        public var port: Int
        public var security: RFBSession.Security
        /// VeNCrypt's X.509 TLS with these credentials, for every client; nil for plain RFB.
        public var tls: TLSCredentials?
        public var maxClients: Int
        /// Whether pointer events reach `onPointer`.
        public var input: Bool
        /// The desktop name clients show (the connector).
        public var name: String

        /// `host` is an IPv4 or IPv6 address (without brackets) or `localhost`.
        public init(host: String, port: Int, security: RFBSession.Security, tls: TLSCredentials? = nil, maxClients: Int, input: Bool,
                    name: String) {
            self.host = host
            self.port = port
            self.security = security
            self.tls = tls
            self.maxClients = maxClients
            self.input = input
            self.name = name
        }
    }

    public static let handshakeTimeout = Duration.seconds(10)
    /// Failed logins that lock the server, within `lockoutWindow`, and how long it then turns every viewer away:
    /// guessing a password (8 bytes at most, by protocol) over the network is slowed to this pace.
    /// The least time between two captures: each copies the whole composed frame on the loop (as `screenshot`
    /// does), 8 MB at 1080p, so viewers get at most 20 updates a second however fast they ask.
    public static let captureSpacing = Duration.milliseconds(50)
    public static let lockoutFailures = 5
    public static let lockoutWindow = Duration.seconds(60)
    public static let lockoutDuration = Duration.seconds(60)
    static let readChunk = 16 * 1024
    /// Connections held beyond `maxClients` while they are told why they are turned away; past these a connection
    /// is closed at once, so a flood of connections holds a bounded number of descriptors.
    static let refusalHeadroom = 8

    public let options: Options
    private let engine: LayerEngine
    private let loop: MainLoop
    private let logger: Logger
    private let jobs: BackgroundJobs
    private let listenFD: Int32
    private var listenSource: SourceHandle?
    private var clients: [Int: Client] = [:]
    private var nextNumber = 1
    private var captureInFlight = false
    private var lastCapture: MonotonicInstant?
    private var captureTimer: TimerHandle?
    private var presentToken: ListenerToken?
    private var recentFailures: [MonotonicInstant] = []
    /// What one read takes from a client's socket; reused, as reads come every few milliseconds from each viewer.
    private var readBuffer = [UInt8](repeating: 0, count: VNCServer.readChunk)
    private var lockedUntil: MonotonicInstant?

    /// Pointer events of clients, in panel pixels, when `options.input` is on.
    public var onPointer: ((_ client: Int, _ buttons: UInt8, _ x: Int, _ y: Int) -> Void)?

    /// Figures for `stats`, logs and tests.
    public private(set) var bytesSent = 0
    public private(set) var updatesSent = 0
    public private(set) var clientsAccepted = 0
    public private(set) var clientsRefused = 0
    public private(set) var authenticationFailures = 0
    /// The loop's time in this server (its handlers, captures' hand-over, TLS), on the main thread's CPU clock, so a
    /// busy host's preemption does not count: the whole, and the longest single handler.
    public private(set) var loopTime = Duration.zero
    public private(set) var longestLoopTime = Duration.zero
    private var onLoopDepth = 0
    public var clientCount: Int { clients.count }
    /// The output's connector once a display is adopted, else the configured output's name.
    public var outputName: String { engine.backend?.info.connector ?? options.name }
    /// The port listened on (the one asked for, or the kernel's choice for port 0).
    public var boundPort: Int {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listenFD, $0, &length) == 0 }
        }
        guard named else { return options.port }
        let family = Int32(address.ss_family)
        return withUnsafePointer(to: &address) { pointer in
            if family == AF_INET6 {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        }
    }
    /// `HOST:PORT`, an IPv6 host in brackets.
    public static func address(host: String, port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
    /// Bytes made for clients and not yet taken by their sockets (before TLS, and after): at most one update per
    /// client, and the records of one encrypted chunk.
    public var queuedBytes: Int { clients.values.reduce(0) { $0 + $1.pendingBytes } }
    /// Each client socket's kernel send buffer: with the one update kioskd holds, what a client that stops reading
    /// can cost.
    static let sendBufferBytes: Int32 = 512 * 1024

    /// Listens on `options.host:options.port`.
    /// - Throws: `VNCError` naming the address and errno when the socket cannot be bound.
    public init(options: Options, engine: LayerEngine, loop: MainLoop, logger: Logger) throws {
        self.options = options
        self.engine = engine
        self.loop = loop
        self.logger = logger
        jobs = try BackgroundJobs(loop: loop, label: "kioskd.vnc.\(options.name)")
        listenFD = try Self.listen(host: options.host, port: options.port)
        // Every stored property is set by now, so a throw here runs `deinit`, which closes the listening socket: it
        // must not be closed here as well, or the second close hits whatever took the number meanwhile.
        listenSource = try loop.addSource(fd: listenFD, events: .readable) { [unowned self] _ in onLoop { acceptClients() } }
        presentToken = engine.addPresentListener { [unowned self] damage in onLoop { framePresented(damage) } }
        logger.info("vnc \(outputName): listening on \(Self.address(host: options.host, port: options.port)) (\(Self.describe(options.security, tls: options.tls != nil)), \(options.input ? "input on" : "view only"), at most \(options.maxClients) clients)")
    }

    deinit {
        captureTimer?.cancel()
        for client in clients.values { client.shut() }
        listenSource?.cancel()
        close(listenFD)
    }

    private static func describe(_ security: RFBSession.Security, tls: Bool) -> String {
        let login = if case .password = security { "VNC authentication" } else { "no authentication" }
        return tls ? "VeNCrypt X.509 TLS, \(login) inside it" : login
    }

    /// Runs a handler of the loop, adding its time on the main thread's CPU clock to `loopTime`; a handler called
    /// from another counts once.
    private func onLoop<T>(_ body: () -> T) -> T {
        guard onLoopDepth == 0 else { return body() }
        onLoopDepth += 1
        let start = Self.threadCPUTime()
        defer {
            onLoopDepth -= 1
            let spent = Self.threadCPUTime() - start
            loopTime += spent
            longestLoopTime = max(longestLoopTime, spent)
        }
        return body()
    }

    private static func threadCPUTime() -> Duration {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
    }

    private static func listen(host: String, port: Int) throws -> Int32 {
        let named = address(host: host, port: port)
        let address = host == "localhost" ? "127.0.0.1" : host
        let family = address.contains(":") ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw VNCError("vnc \(named): socket: \(errnoDescription(errno))") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let isBound: Bool
        if family == AF_INET6 {
            // `[::]` is every address, IPv4 ones too, whatever net.ipv6.bindv6only says.
            var zero: Int32 = 0
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, socklen_t(MemoryLayout<Int32>.size))
            var sin6 = sockaddr_in6()
            sin6.sin6_family = sa_family_t(AF_INET6)
            sin6.sin6_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET6, address, &sin6.sin6_addr) == 1 else {
                close(fd)
                throw VNCError("vnc \(named): not an IPv6 address")
            }
            isBound = bind(fd, to: &sin6)
        } else {
            var sin = sockaddr_in()
            sin.sin_family = sa_family_t(AF_INET)
            sin.sin_port = in_port_t(UInt16(port).bigEndian)
            guard inet_pton(AF_INET, address, &sin.sin_addr) == 1 else {
                close(fd)
                throw VNCError("vnc \(named): not an IPv4 address")
            }
            isBound = bind(fd, to: &sin)
        }
        guard isBound, Glibc.listen(fd, 16) == 0 else {
            let code = errno
            close(fd)
            throw VNCError("vnc \(named): cannot listen: \(errnoDescription(code))")
        }
        return fd
    }

    /// bind(2) to `address`, a sockaddr_in or sockaddr_in6.
    private static func bind<Address>(_ fd: Int32, to address: inout Address) -> Bool {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<Address>.size)) }
        } == 0
    }

    private func acceptClients() {
        while true {
            let fd = accept(listenFD, nil, nil)
            guard fd >= 0 else {
                if errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
                    logger.error("vnc \(outputName): accept: \(errnoDescription(errno))")
                }
                return
            }
            let flags = fcntl(fd, F_GETFL)
            guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else {
                close(fd)
                continue
            }
            var sendBuffer = Self.sendBufferBytes
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
            guard clients.count < options.maxClients + Self.refusalHeadroom else {
                close(fd)
                clientsRefused += 1
                continue
            }
            let number = nextNumber
            nextNumber += 1
            let size = engine.backend?.info.mode.size ?? engine.rootLayer.frame.size
            let full = clients.count >= options.maxClients
            var refusal = full ? "too many VNC clients (at most \(options.maxClients))" : nil
            if let lockedUntil, loop.now < lockedUntil {
                let seconds = Int(((lockedUntil - loop.now).milliseconds / 1000).rounded(.up))
                refusal = "too many failed logins: VNC logins are refused for \(seconds) s"
            }
            let session = RFBSession(security: options.security, tls: options.tls != nil, challenge: Self.challenge(), width: size.width,
                                     height: size.height, name: outputName, refusal: refusal)
            let client = Client(number: number, fd: fd, session: session, size: size)
            if refusal != nil { clientsRefused += 1 } else { clientsAccepted += 1 }
            do {
                // Weak: a handler may drop its client, which must live until the handler returns.
                client.source = try loop.addSource(fd: fd, events: .readable) { [unowned self, weak client] events in
                    guard let client else { return }
                    onLoop {
                        if events.contains(.writable) { flush(client) }
                        if events.contains(.readable) || events.contains(.hangup) || events.contains(.error) { read(client) }
                    }
                }
            } catch {
                logger.error("vnc \(outputName): client \(number): \(error)")
                close(fd)
                continue
            }
            clients[number] = client
            client.handshakeTimer = loop.addTimer(after: Self.handshakeTimeout) { [unowned self, weak client] in
                guard let client else { return }
                onLoop { drop(client, "the handshake did not finish within \(Self.handshakeTimeout)") }
            }
            logger.debug("vnc \(outputName): client \(number) connected")
            queue(session.greeting, to: client)
        }
    }

    private static func challenge() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    private func read(_ client: Client) {
        guard !client.isClosed else { return }
        let n = readBuffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
        if n < 0 {
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return }
            drop(client, "read: \(errnoDescription(errno))")
            return
        }
        guard n > 0 else {
            drop(client, "the client closed the connection")
            return
        }
        guard let tls = client.tls else {
            handle(client.session.receive(readBuffer[0..<n]), from: client)
            return
        }
        receiveTLS(readBuffer[0..<n], over: tls, from: client)
    }

    /// Bytes of a TLS client from its socket: the handshake advanced (its messages queued for the socket), then
    /// the session's bytes, decrypted, to the RFB session.
    private func receiveTLS(_ bytes: ArraySlice<UInt8>, over tls: TLSConnection, from client: Client) {
        let received: (plain: [UInt8], established: Bool)
        do {
            received = try tls.receive(bytes)
        } catch {
            flushTLSOutput(client)
            drop(client, error.description)
            return
        }
        flushTLSOutput(client)
        if received.established {
            logger.debug("vnc \(outputName): client \(client.number): TLS established")
            handle(client.session.tlsEstablished(), from: client)
        }
        if !received.plain.isEmpty, !client.isClosed { handle(client.session.receive(received.plain), from: client) }
    }

    /// Moves what TLS made (handshake messages, records) to the bytes for the socket, and writes what it takes.
    private func flushTLSOutput(_ client: Client) {
        guard let tls = client.tls else { return }
        let output = tls.takeOutput()
        guard !output.isEmpty else { return }
        client.queued += output
        flush(client)
    }

    /// What the RFB session made of a client's bytes: what to send, the close, TLS's start, the requests.
    private func handle(_ reply: RFBSession.Reply, from client: Client) {
        guard !client.isClosed else { return }
        if !reply.send.isEmpty { queue(reply.send, to: client) }
        if let reason = reply.close {
            if reason.hasPrefix("authentication failed") { loginFailed() }
            // What the client was told goes out first, if the socket takes it now; the connection closes either way.
            flush(client)
            drop(client, reason)
            return
        }
        if !client.loggedIn, client.session.isReady {
            client.loggedIn = true
            client.handshakeTimer?.cancel()
            client.handshakeTimer = nil
            // Whatever it asks for first, its first update is the whole screen.
            client.damage.add(Rect(size: client.size))
            logger.info("vnc \(outputName): client \(client.number) logged in")
        }
        for request in reply.requests { handle(request, from: client) }
        if let early = reply.startTLS, let credentials = options.tls {
            do {
                let tls = try TLSConnection(credentials: credentials)
                client.tls = tls
                if !early.isEmpty { receiveTLS(early[...], over: tls, from: client) }
            } catch {
                drop(client, error.description)
                return
            }
        }
        serviceClients()
    }

    private func loginFailed() {
        authenticationFailures += 1
        let now = loop.now
        recentFailures = recentFailures.filter { now - $0 < Self.lockoutWindow } + [now]
        guard recentFailures.count >= Self.lockoutFailures else { return }
        recentFailures = []
        lockedUntil = now + Self.lockoutDuration
        logger.warning("vnc \(outputName): \(Self.lockoutFailures) failed logins within \(Self.lockoutWindow): logins refused for \(Self.lockoutDuration)")
    }

    private func handle(_ request: RFBSession.Request, from client: Client) {
        switch request {
        case .pixelFormat(let format):
            client.format = format
        case .encodings(let numbers):
            // The client lists what it prefers first; Raw is understood by every client.
            let chosen = numbers.first { $0 == RFBEncoding.zrleNumber || $0 == RFBEncoding.rawNumber }
            if chosen == RFBEncoding.zrleNumber {
                if client.zrle == nil {
                    do { client.zrle = try ZRLEStream() } catch { logger.error("vnc \(outputName): client \(client.number): \(error); sending Raw") }
                }
                client.useZRLE = client.zrle != nil
            } else {
                client.useZRLE = false
            }
        case .update(let incremental, let area):
            let screen = Rect(size: client.size)
            if !incremental { client.damage.add(area.intersection(screen)) }
            client.wanted = area.intersection(screen)
        case .pointer(let buttons, let x, let y):
            guard options.input else { return }
            let point = (x: min(x, client.size.width - 1), y: min(y, client.size.height - 1))
            client.pointer = (buttons, point.x, point.y)
            onPointer?(client.number, buttons, point.x, point.y)
        case .key:
            break  // View and touch only: keys are ignored.
        }
    }

    private func framePresented(_ damage: [Rect]) {
        for client in clients.values where client.session.isReady {
            for rect in damage { client.damage.add(rect) }
        }
        serviceClients()
    }

    /// Starts one capture for every client that asked for an update, has damage where it asked, and has written out
    /// its previous update; the others wait (their damage keeps merging).
    private func serviceClients() {
        guard !captureInFlight, captureTimer == nil else { return }
        let due = clients.values.filter { client in
            guard client.session.isReady, !client.isClosed, !client.encoding, client.pendingBytes == 0, let wanted = client.wanted else { return false }
            return client.damage.rects.contains { !$0.intersection(wanted).isEmpty }
        }
        guard !due.isEmpty else { return }
        let now = loop.now
        if let lastCapture, now - lastCapture < Self.captureSpacing {
            captureTimer = loop.addTimer(at: lastCapture + Self.captureSpacing) { [unowned self] in
                onLoop {
                    captureTimer = nil
                    serviceClients()
                }
            }
            return
        }
        lastCapture = now
        // The damage is taken now: the capture is at least this new, and what is presented meanwhile stays for the
        // next update.
        let work = due.map { client in (client, client.damage.take(in: client.wanted!)) }
        for (client, _) in work {
            client.wanted = nil
            client.encoding = true
        }
        captureInFlight = true
        let size = engine.backend?.info.mode.size
        engine.captureScreen { [weak self] pixels in
            guard let self else { return }
            onLoop { captured(pixels, size: size, for: work) }
        }
    }

    private func captured(_ pixels: [UInt8]?, size: Size?, for work: [(Client, [Rect])]) {
        captureInFlight = false
        guard let pixels, let size else {
            for (client, rects) in work {
                client.encoding = false
                for rect in rects { client.damage.add(rect) }
            }
            return
        }
        for (client, rects) in work where !client.isClosed {
            guard client.size == size else {
                drop(client, "the output's mode changed to \(size.width)x\(size.height); reconnect")
                continue
            }
            let format = client.format
            let encoding: RFBEncoding = client.useZRLE ? client.zrle.map(RFBEncoding.zrle) ?? .raw : .raw
            jobs.run({ RFBEncoder.update(frame: pixels, size: size, rects: rects, format: format, encoding: encoding) }, then: { [weak self, weak client] update in
                guard let self, let client, !client.isClosed else { return }
                onLoop {
                    client.encoding = false
                    updatesSent += 1
                    queue(update, to: client)
                    serviceClients()
                }
            })
        }
    }

    private func queue(_ bytes: [UInt8], to client: Client) {
        guard !client.isClosed else { return }
        if client.tls != nil { client.plain += bytes } else { client.queued += bytes }
        flush(client)
    }

    /// Writes what the socket takes now, encrypting the next chunk of a TLS client's bytes only once the socket
    /// took the last one; watches for writability while bytes wait.
    private func flush(_ client: Client) {
        while !client.isClosed {
            if client.sent == client.queued.count {
                client.queued = []
                client.sent = 0
                guard let tls = client.tls, tls.isEstablished, client.plainSent < client.plain.count else { break }
                do {
                    client.plainSent += try tls.encrypt(client.plain[client.plainSent...])
                } catch {
                    drop(client, error.description)
                    return
                }
                if client.plainSent == client.plain.count {
                    client.plain = []
                    client.plainSent = 0
                }
                client.queued = tls.takeOutput()
                continue
            }
            let n = client.queued.withUnsafeBytes { all in
                send(client.fd, all.baseAddress! + client.sent, all.count - client.sent, Int32(MSG_NOSIGNAL))
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                drop(client, "write: \(errnoDescription(errno))")
                return
            }
            client.sent += n
            bytesSent += n
        }
        guard !client.isClosed else { return }
        let wanted: IOEvents = client.queued.isEmpty ? .readable : [.readable, .writable]
        if let source = client.source, source.events != wanted {
            do { try source.updateEvents(wanted) } catch { drop(client, "\(error)") }
        }
        if client.pendingBytes == 0 { serviceClients() }
    }

    private func drop(_ client: Client, _ reason: String) {
        guard !client.isClosed else { return }
        client.shut()
        clients[client.number] = nil
        // A viewer gone with its button down lets go: its touch ends where it was.
        if options.input, client.pointer.buttons != 0 {
            onPointer?(client.number, 0, client.pointer.x, client.pointer.y)
        }
        logger.info("vnc \(outputName): client \(client.number) closed: \(reason)")
    }

    /// One connection. Main thread.
    private final class Client {
        let number: Int
        let fd: Int32
        let session: RFBSession
        let size: Size
        var source: SourceHandle?
        var handshakeTimer: TimerHandle?
        var format = RFBPixelFormat.xrgb8888
        /// The connection's zlib stream, made when the client first prefers ZRLE; kept, as the protocol requires,
        /// for the connection's life.
        var zrle: ZRLEStream?
        var useZRLE = false
        var damage = RFBDamage()
        /// The last pointer event: buttons down and where.
        var pointer: (buttons: UInt8, x: Int, y: Int) = (0, 0, 0)
        /// The area of the update request not yet answered.
        var wanted: Rect?
        /// An update is being captured or encoded.
        var encoding = false
        /// Past the handshake (its first whole-screen update is owed).
        var loggedIn = false
        /// Bytes for the socket: `sent` of them are written.
        var queued: [UInt8] = []
        var sent = 0
        /// With VeNCrypt, once TLS started: the session, and the bytes not yet encrypted (`plainSent` of them are).
        var tls: TLSConnection?
        var plain: [UInt8] = []
        var plainSent = 0
        var pendingBytes: Int { queued.count - sent + plain.count - plainSent }
        private(set) var isClosed = false

        init(number: Int, fd: Int32, session: RFBSession, size: Size) {
            self.number = number
            self.fd = fd
            self.session = session
            self.size = size
        }

        func shut() {
            guard !isClosed else { return }
            isClosed = true
            handshakeTimer?.cancel()
            source?.cancel()
            close(fd)
            queued = []
            plain = []
            tls = nil
        }
    }
}

/// A VNC listener that cannot be set up, naming the address and the errno. A plain value.
public struct VNCError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
