#if canImport(Glibc)
import Glibc
#endif
import KioskCore
import Logging

/// How the control socket is set up and what it tolerates. A plain value; any thread.
public struct ControlServerOptions: Sendable {
    public static let defaultSocketPath = "/run/kioskd/control.sock"

    public var socketPath: String
    /// Group of the socket file (and of its directory when the server creates it); nil keeps the process's.
    public var socketGroup: UInt32?
    public var policy: PeerPolicy
    public var maxLineBytes: Int
    /// Per-client bound on replies and events not yet taken by the client.
    public var maxQueuedBytes: Int
    public var maxClients: Int
    /// Requests one client gets answered in one turn of the loop, and the time they may take (the request under
    /// way when it runs out finishes); the rest wait for the next turn, after every other client's, so a client
    /// that pipelines thousands cannot hold the loop, the frames or the others.
    public var maxRequestsPerTurn: Int
    public var turnBudget: Duration
    /// A listening socket systemd passed this process (socket activation; the service layer reads it with
    /// sd_listen_fds_with_names): served instead of binding `socketPath`, and never unlinked.
    public var inheritedListenFD: Int32?
    /// Event names `subscribe` accepts.
    public var eventNames: Set<String>

    public init(socketPath: String = ControlServerOptions.defaultSocketPath, socketGroup: UInt32? = nil,
                policy: PeerPolicy = PeerPolicy(), maxLineBytes: Int = LineFramer.defaultMaxLineBytes,
                maxQueuedBytes: Int = 4 << 20, maxClients: Int = 128, maxRequestsPerTurn: Int = 16, turnBudget: Duration = .milliseconds(2), inheritedListenFD: Int32? = nil,
                eventNames: Set<String> = ["flip", "frame", "scene", "data", "error", "input", "power", "display", "video", "web", "cache"]) {
        self.socketPath = socketPath
        self.socketGroup = socketGroup
        self.policy = policy
        self.maxLineBytes = maxLineBytes
        self.maxQueuedBytes = maxQueuedBytes
        self.maxClients = maxClients
        self.maxRequestsPerTurn = maxRequestsPerTurn
        self.turnBudget = turnBudget
        self.inheritedListenFD = inheritedListenFD
        self.eventNames = eventNames
    }
}

/// The control socket: a listening Unix stream socket on the main loop, its clients, and the command registry
/// that answers their requests. Everything is non-blocking; requests are answered in the order each client sent
/// them, since a handler runs to completion before the next line is looked at.
///
/// Lives on the loop thread: create, use and stop it there.
public final class ControlServer {
    public let options: ControlServerOptions
    public let commands = CommandRegistry()
    /// Where the socket came from; only a socket file this server bound is removed by `stop()`.
    public let isSocketActivated: Bool
    public private(set) var connections: [Int: ControlConnection] = [:]

    private let loop: MainLoop
    private let listenFD: Int32
    private var listenSource: SourceHandle?
    private var acceptPause: TimerHandle?
    private var nextNumber = 1
    /// Clients with lines left at the end of their turn, answered round-robin in the loop's next iterations.
    private var backlog: [ControlConnection] = []
    private var backlogWaker: Waker?
    private let logger = Logger(label: "kioskd.control")

    /// Binds (or takes from systemd) the socket and starts accepting.
    ///
    /// - Throws: `SystemError` naming the path and errno: a directory that cannot be made, a path taken by a
    ///   file that is not a socket, a socket another process listens on.
    public init(loop: MainLoop, options: ControlServerOptions) throws {
        self.loop = loop
        self.options = options
        if let fd = options.inheritedListenFD {
            try ControlServer.checkInherited(fd)
            listenFD = fd
            isSocketActivated = true
        } else {
            listenFD = try ControlServer.bindSocket(options: options)
            isSocketActivated = false
        }
        do {
            listenSource = try loop.addSource(fd: listenFD, events: .readable) { [unowned self] _ in acceptClients() }
        } catch {
            Glibc.close(listenFD)
            if !isSocketActivated { unlink(options.socketPath) }
            throw SystemError("control socket \(options.socketPath): watching it: \(error)")
        }
        backlogWaker = try loop.makeWaker { [weak self] in self?.answerBacklog() }
        registerBuiltins()
        logger.info("control socket \(isSocketActivated ? "from systemd (fd \(listenFD))" : options.socketPath) listening")
    }

    deinit {
        // The loop's handlers refer to the server without owning it; they must not outlive it.
        stop()
    }

    /// Closes every client and the listening socket, and removes the socket file this server made.
    public func stop() {
        for connection in Array(connections.values) { connection.close() }
        guard let listenSource else { return }
        listenSource.cancel()
        self.listenSource = nil
        acceptPause?.cancel()
        Glibc.close(listenFD)
        if !isSocketActivated { unlink(options.socketPath) }
    }

    /// Sends `{"event": name, "data": data}` to the clients subscribed to `name`; encoded once for all.
    public func broadcast(event name: String, data: JSONValue) {
        let subscribers = connections.values.filter { $0.subscriptions.contains(name) }
        guard !subscribers.isEmpty else { return }
        let line = ControlMessage.line(ControlMessage.event(name, data: data))
        for connection in subscribers { connection.send(line) }
    }

    /// True when some client subscribed to `name`: lets callers skip building event data nobody reads.
    public func hasSubscribers(_ name: String) -> Bool {
        connections.values.contains { $0.subscriptions.contains(name) }
    }

    // MARK: Socket setup

    /// A socket from systemd is served only when it is a listening stream socket: a wrong unit file could pass
    /// anything. Made non-blocking and close-on-exec like a socket bound here.
    static func checkInherited(_ fd: Int32) throws {
        var listening: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0 else {
            throw SystemError("control socket from systemd (fd \(fd)): not a socket", errno: errno)
        }
        guard listening != 0 else {
            throw SystemError("control socket from systemd (fd \(fd)): a socket that does not listen")
        }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else {
            throw SystemError("control socket from systemd (fd \(fd)): fcntl", errno: errno)
        }
    }

    static func bindSocket(options: ControlServerOptions) throws -> Int32 {
        let path = options.socketPath
        let object = "control socket \(path)"
        let address = try UnixSocketAddress(path: path)

        try makeParentDirectory(of: path, group: options.socketGroup)
        try removeStaleSocket(at: path, address: address)

        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw SystemError("\(object): socket", errno: errno) }
        func fail(_ operation: String, unlinkPath: Bool) -> SystemError {
            let error = SystemError("\(object): \(operation)", errno: errno)
            Glibc.close(fd)
            if unlinkPath { unlink(path) }
            return error
        }
        guard address.bind(fd) == 0 else { throw fail("bind", unlinkPath: false) }
        // bind makes the file with the umask's mode; the directory (0750) keeps others out until this runs.
        guard chmod(path, 0o660) == 0 else { throw fail("chmod 0660", unlinkPath: true) }
        if let group = options.socketGroup, chown(path, uid_t.max, group) != 0 {
            throw fail("chown to group \(group)", unlinkPath: true)
        }
        guard listen(fd, 128) == 0 else { throw fail("listen", unlinkPath: true) }
        return fd
    }

    /// Creates the socket's directory, 0750, when it is missing; an existing directory is left as its owner
    /// set it.
    static func makeParentDirectory(of path: String, group: UInt32?) throws {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let directory = String(path[..<slash])
        var info = stat()
        if stat(directory, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw SystemError("control socket directory \(directory): not a directory", errno: ENOTDIR)
            }
            return
        }
        guard errno == ENOENT else { throw SystemError("control socket directory \(directory): stat", errno: errno) }
        guard mkdir(directory, 0o750) == 0 || errno == EEXIST else {
            throw SystemError("control socket directory \(directory): mkdir", errno: errno)
        }
        // mkdir applies the umask; the mode is stated, not inherited.
        chmod(directory, 0o750)
        if let group, chown(directory, uid_t.max, group) != 0 {
            throw SystemError("control socket directory \(directory): chown to group \(group)", errno: errno)
        }
    }

    /// Removes a socket file left by a run that crashed. Only a socket, and only when connecting to it is
    /// refused: a live daemon's socket is never taken over, and a file that is not a socket is never deleted.
    static func removeStaleSocket(at path: String, address: UnixSocketAddress) throws {
        let object = "control socket \(path)"
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw SystemError("\(object): lstat", errno: errno)
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw SystemError("\(object): the path exists and is not a socket; not removing it")
        }
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard probe >= 0 else { throw SystemError("\(object): socket (probe)", errno: errno) }
        defer { Glibc.close(probe) }
        // Non-blocking, so a live server with a full backlog answers EAGAIN at once instead of stalling startup.
        let connected = address.connect(probe)
        let code = errno
        if connected == 0 || code == EAGAIN || code == EINPROGRESS {
            throw SystemError("\(object): another process is listening on it (is kioskd already running?)")
        }
        guard code == ECONNREFUSED else { throw SystemError("\(object): connect (stale-socket check)", errno: code) }
        guard unlink(path) == 0 else { throw SystemError("\(object): removing the stale socket", errno: errno) }
    }

    // MARK: Clients

    private func acceptClients() {
        while listenSource != nil {
            // accept4 needs _GNU_SOURCE, which Glibc's Swift module lacks; the flags are set right after.
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                let code = errno
                switch code {
                case EINTR, ECONNABORTED: continue
                case EAGAIN, EWOULDBLOCK: return
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // The pending connection stays queued and the watch is level-triggered: pause accepting
                    // briefly instead of spinning on an error that persists until descriptors are freed.
                    logger.error("control socket \(options.socketPath): accept: \(errnoDescription(code)); pausing accepts for 100 ms")
                    pauseAccepting()
                    return
                default:
                    logger.error("control socket \(options.socketPath): accept: \(errnoDescription(code))")
                    return
                }
            }
            let flags = fcntl(fd, F_GETFL)
            guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else {
                logger.error("control socket \(options.socketPath): fcntl on accepted fd \(fd): \(errnoDescription(errno))")
                Glibc.close(fd)
                continue
            }
            admit(fd)
        }
    }

    private func pauseAccepting() {
        guard acceptPause == nil, let listenSource else { return }
        try? listenSource.updateEvents([])
        acceptPause = loop.addTimer(after: .milliseconds(100)) { [unowned self] in
            acceptPause = nil
            try? self.listenSource?.updateEvents(.readable)
        }
    }

    private func admit(_ fd: Int32) {
        let peer: PeerCredentials
        do { peer = try PeerCredentials.of(socket: fd) } catch {
            logger.error("control socket \(options.socketPath): \(error); closing the connection")
            Glibc.close(fd)
            return
        }
        let number = nextNumber
        nextNumber += 1
        let connection = ControlConnection(
            fd: fd, number: number, peer: peer, maxLineBytes: options.maxLineBytes, maxQueuedBytes: options.maxQueuedBytes,
            logger: logger, onClose: { [weak self] closed in self?.forget(closed) })
        connections[number] = connection
        guard options.policy.allows(peer) else {
            logger.warning("\(connection.name): refused, not in the allow-list")
            connection.sendFinal(ControlMessage.line(ControlMessage.failure(
                id: .null, error: .permissionDenied("uid \(peer.uid) gid \(peer.gid) may not use this socket"))))
            watch(connection, events: connection.isClosed ? nil : .writable)
            return
        }
        guard connections.count <= options.maxClients else {
            logger.warning("\(connection.name): refused, already \(options.maxClients) clients")
            connection.sendFinal(ControlMessage.line(ControlMessage.failure(id: .null, error: .tooManyClients(limit: options.maxClients))))
            watch(connection, events: connection.isClosed ? nil : .writable)
            return
        }
        logger.debug("\(connection.name): connected")
        watch(connection, events: .readable)
    }

    private func watch(_ connection: ControlConnection, events: IOEvents?) {
        guard let events else { return }
        do {
            connection.source = try loop.addSource(fd: connection.fd, events: events) { [unowned self, unowned connection] ready in
                service(connection, ready)
            }
        } catch {
            logger.error("\(connection.name): cannot watch it: \(error)")
            connection.close()
        }
    }

    private func service(_ connection: ControlConnection, _ ready: IOEvents) {
        if ready.contains(.writable) { connection.flush() }
        guard !connection.isClosed else { return }
        if connection.closeAfterFlush {
            if ready.contains(.hangup) || ready.contains(.error) { connection.close() }
            return
        }
        if connection.awaitingReply {
            // Not reading while a deferred reply is outstanding; a hang-up (reported whatever is watched) means
            // nobody is left to answer.
            if ready.contains(.hangup) || ready.contains(.error) { connection.close() }
            return
        }
        guard ready.contains(.readable) || ready.contains(.hangup) || ready.contains(.error) else { return }
        // A client with lines still held waits for its turn in the backlog (its read is not watched meanwhile).
        guard !connection.hasHeldLines else { return }
        let (pieces, ended) = connection.readAvailable()
        connection.hold(pieces)
        if ended { connection.peerEnded = true }
        answerHeldLines(of: connection)
    }

    /// One turn for each client in the backlog, in the order they entered it; those with lines left go back.
    private func answerBacklog() {
        let waiting = backlog
        backlog = []
        for connection in waiting where !connection.isClosed { answerHeldLines(of: connection) }
    }

    /// Answers held lines in order until one is deferred or the client's turn is used up (then it joins the
    /// backlog, and the loop turns again at once); closes once the client has ended and all are answered.
    private func answerHeldLines(of connection: ControlConnection) {
        var answered = 0
        let started = MonotonicInstant.now()
        while !connection.isClosed, !connection.awaitingReply, connection.hasHeldLines {
            guard answered == 0 || (answered < options.maxRequestsPerTurn && MonotonicInstant.now() - started < options.turnBudget) else {
                if !backlog.contains(where: { $0 === connection }) { backlog.append(connection) }
                backlogWaker?.wake()
                return
            }
            answered += 1
            guard let piece = connection.takeHeldLine() else { break }
            switch piece {
            case .line(let bytes):
                switch ControlRequest.decode(bytes) {
                case .success(let request):
                    let answered = commands.start(request, from: connection) { [weak self, weak connection] reply in
                        guard let self, let connection, !connection.isClosed else { return }
                        connection.send(ControlMessage.line(reply), isReply: true)
                        if connection.awaitingReply {
                            connection.awaitingReply = false
                            answerHeldLines(of: connection)
                        }
                    }
                    if !answered { connection.awaitingReply = true }
                case .failure(let failure):
                    connection.send(ControlMessage.line(ControlMessage.failure(id: failure.id, error: failure.error)), isReply: true)
                }
            case .overLong:
                logger.warning("\(connection.name): line over \(options.maxLineBytes) bytes; closing")
                connection.sendFinal(ControlMessage.line(ControlMessage.failure(id: .null, error: .lineTooLong(limit: options.maxLineBytes))))
                return
            }
        }
        if connection.peerEnded, !connection.isClosed, !connection.awaitingReply, !connection.hasHeldLines {
            // A client that only shut down its sending side still gets the replies queued for it.
            connection.closeOnceFlushed()
        } else if !connection.isClosed {
            // Reading resumes once every held line is answered.
            connection.flush()
        }
    }

    private func forget(_ connection: ControlConnection) {
        if connections[connection.number] === connection { connections[connection.number] = nil }
        logger.debug("\(connection.name): closed")
    }

    // MARK: Built-in commands

    private func registerBuiltins() {
        commands.register(.ping) { _, _ in ["pong": true] }
        commands.register(.subscribe, arguments: ["events"]) { [unowned self] args, connection in
            let names = try validEventNames(args)
            connection.subscriptions.formUnion(names)
            return ["events": .array(connection.subscriptions.sorted().map(JSONValue.string))]
        }
        commands.register(.unsubscribe, arguments: ["events"]) { [unowned self] args, connection in
            let names = try validEventNames(args)
            connection.subscriptions.subtract(names)
            return ["events": .array(connection.subscriptions.sorted().map(JSONValue.string))]
        }
    }

    private func validEventNames(_ args: ControlArguments) throws(ControlError) -> [String] {
        let names = try args.stringArray("events")
        let unknown = names.filter { !options.eventNames.contains($0) }
        guard unknown.isEmpty else {
            throw .invalidArgument("\(args.command): unknown event \(unknown.map { "'\($0)'" }.joined(separator: ", ")); known: \(options.eventNames.sorted().joined(separator: ", "))")
        }
        return names
    }
}
