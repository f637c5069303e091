import Foundation
import Glibc
@testable import KioskControl
import KioskCore
import KioskTestSupport
import XCTest

final class ControlServerTests: XCTestCase {
    private var directory = ""
    private var loop: MainLoop!

    override func setUpWithError() throws {
        directory = try makeSocketDirectory()
        loop = try MainLoop.epoll()
    }

    override func tearDownWithError() throws {
        loop = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func makeServer(_ configure: (inout ControlServerOptions) -> Void = { _ in }) throws -> ControlServer {
        var options = ControlServerOptions(socketPath: directory + "/control.sock")
        configure(&options)
        let server = try ControlServer(loop: loop, options: options)
        server.commands.register(.version) { _, _ in ["version": "test"] }
        server.commands.register(named: "echo", arguments: ["text"]) { args, _ in ["text": .string(try args.string("text"))] }
        return server
    }

    /// Sends `line` and returns the next reply, turning the loop meanwhile; nil (and a failure) when none came in 5 s.
    private func request(_ client: TestSocketClient, _ line: String) -> JSONValue? {
        client.send(line + "\n")
        var reply: JSONValue?
        do {
            try Poll.until("a reply to \(line)", turning: loop, every: .milliseconds(5)) {
                client.poll()
                if reply == nil, !client.lines.isEmpty { reply = client.takeLines().first }
                return reply != nil || client.closedByPeer
            }
        } catch {
            XCTFail("\(error)")
        }
        return reply
    }

    func testPingVersionAndErrorsKeepTheConnectionUsable() throws {
        let server = try makeServer()
        defer { server.stop() }
        let client = try TestSocketClient(path: server.options.socketPath)

        XCTAssertEqual(request(client, #"{"id": 1, "cmd": "ping"}"#), ["id": 1, "ok": true, "result": ["pong": true]])
        XCTAssertEqual(request(client, #"{"id": "v", "cmd": "version"}"#)?["result"]?["version"], "test")
        XCTAssertEqual(request(client, #"{"id": 2, "cmd": "nope"}"#)?["error"]?["code"], "unknown_command")
        XCTAssertEqual(request(client, #"{"id": 3, "cmd": "pi"#)?["error"]?["code"], "invalid_json")
        XCTAssertEqual(request(client, #"[1]"#)?["error"]?["code"], "invalid_request")
        XCTAssertEqual(request(client, #"{"id": 4}"#)?["error"]?["code"], "invalid_request")
        let wrongType = request(client, #"{"id": 5, "cmd": "echo", "args": {"text": 5}}"#)
        XCTAssertEqual(wrongType?["error"]?["code"], "invalid_argument")
        XCTAssertEqual(wrongType?["id"], 5)
        XCTAssertEqual(request(client, #"{"id": 6, "cmd": "ping"}"#)?["ok"], true, "still usable after every error")
        XCTAssertFalse(client.closedByPeer)
    }

    /// A command's older name finds the command under its own name (`display.power` is `output.power`), arguments
    /// and all; the registry lists commands by their own names only.
    func testAnAliasIsAnsweredByItsCommand() throws {
        let server = try makeServer()
        defer { server.stop() }
        server.commands.register(.outputPower, arguments: ["on"]) { args, _ in ["power": .string(try args.bool("on") ? "on" : "off")] }
        XCTAssertEqual(server.commands.argumentNames(of: "display.power"), ["on"])
        XCTAssertTrue(server.commands.commandNames.contains("output.power"))
        XCTAssertFalse(server.commands.commandNames.contains("display.power"))
        XCTAssertTrue(server.commands.acceptedNames.contains("display.power"))
        XCTAssertFalse(server.commands.acceptedNames.contains("display.info"), "its command is not registered here")
        let client = try TestSocketClient(path: server.options.socketPath)
        XCTAssertEqual(request(client, #"{"id": 1, "cmd": "output.power", "args": {"on": false}}"#)?["result"]?["power"], "off")
        XCTAssertEqual(request(client, #"{"id": 2, "cmd": "display.power", "args": {"on": true}}"#)?["result"]?["power"], "on")
        XCTAssertEqual(request(client, #"{"id": 3, "cmd": "display.power", "args": {"of": true}}"#)?["error"]?["message"],
                       "display.power: unknown argument 'of'; did you mean 'on'?")
        XCTAssertEqual(request(client, #"{"id": 4, "cmd": "display.info"}"#)?["error"]?["code"], "unknown_command",
                       "an alias of a command not registered is unknown like any other name")
    }

    /// The registry refuses an argument its command did not declare before the handler runs, for immediate and
    /// deferred commands alike, and the request with only declared arguments goes through.
    func testTheRegistryRefusesUndeclaredArgumentsBeforeTheHandler() throws {
        let server = try makeServer()
        defer { server.stop() }
        var calls = 0
        server.commands.register(named: "count", arguments: ["step"]) { _, _ in calls += 1; return ["calls": .int(Int64(calls))] }
        server.commands.registerDeferred(named: "later", arguments: ["path"]) { _, _, reply in calls += 1; reply.succeed([:]) }
        XCTAssertEqual(server.commands.argumentNames(of: "count"), ["step"])
        XCTAssertNil(server.commands.argumentNames(of: "nope"))
        let client = try TestSocketClient(path: server.options.socketPath)
        let refused: [(line: String, message: String)] = [
            (#"{"id": 1, "cmd": "count", "args": {"stp": 1}}"#, "count: unknown argument 'stp'; did you mean 'step'?"),
            (#"{"id": 1, "cmd": "later", "args": {"path": "/a", "colour": 2}}"#, "later: unknown argument 'colour'; known: 'path'"),
            (#"{"id": 1, "cmd": "ping", "args": {"pong": true}}"#, "ping: unknown argument 'pong'; ping takes no arguments"),
        ]
        for (line, message) in refused {
            let reply = request(client, line)
            XCTAssertEqual(reply?["error"]?["code"], "invalid_argument", line)
            XCTAssertEqual(reply?["error"]?["message"]?.stringValue, message, line)
            XCTAssertEqual(reply?["id"], 1, line)
        }
        XCTAssertEqual(calls, 0, "no handler ran for a refused request")
        XCTAssertEqual(request(client, #"{"id": 2, "cmd": "count", "args": {"step": 1}}"#)?["result"]?["calls"], 1)
        XCTAssertEqual(request(client, #"{"id": 3, "cmd": "later", "args": {"path": "/a"}}"#)?["ok"], true)
        XCTAssertEqual(calls, 2)
    }

    /// A deferred command holds back the replies to later requests of the same client (order is kept), not
    /// those of other clients, and the loop keeps running meanwhile.
    func testDeferredReplyKeepsOrderWithoutBlockingOthers() throws {
        let server = try makeServer()
        defer { server.stop() }
        var pending: [DeferredReply] = []
        server.commands.registerDeferred(named: "slow", arguments: ["fail"]) { args, _, reply in
            if args["fail"] == true { throw ControlError(code: "slow_failed", message: "asked to fail") }
            pending.append(reply)
        }
        let first = try TestSocketClient(path: server.options.socketPath)
        let second = try TestSocketClient(path: server.options.socketPath)
        first.send(#"{"id": 1, "cmd": "slow"}"# + "\n" + #"{"id": 2, "cmd": "ping"}"# + "\n" + #"{"id": 3, "cmd": "nope"}"# + "\n")
        try Poll.until("the deferred command to be called", turning: loop, every: .milliseconds(5)) { pending.count == 1 }
        XCTAssertEqual(request(second, #"{"id": 9, "cmd": "ping"}"#)?["id"], 9, "another client is answered meanwhile")
        first.poll()
        XCTAssertTrue(first.lines.isEmpty, "nothing overtakes the deferred reply: \(first.lines)")
        pending[0].succeed(["done": true])
        pending[0].succeed(["twice": true])
        try Poll.until("the three replies", turning: loop, every: .milliseconds(5)) { first.poll(); return first.lines.count >= 3 }
        XCTAssertEqual(first.lines.map { $0["id"] }, [1, 2, 3])
        XCTAssertEqual(first.lines[0]["result"], ["done": true])
        XCTAssertEqual(first.takeLines()[2]["error"]?["code"], "unknown_command")
        XCTAssertEqual(request(first, #"{"id": 4, "cmd": "slow", "fail": true, "args": {"fail": true}}"#)?["error"]?["code"], "slow_failed")
    }

    /// A client that goes away while its reply is deferred is forgotten; completing the reply later is harmless.
    func testDeferredReplyToAClientThatLeftIsDropped() throws {
        let server = try makeServer()
        defer { server.stop() }
        var pending: [DeferredReply] = []
        server.commands.registerDeferred(named: "slow") { _, _, reply in pending.append(reply) }
        var client: TestSocketClient? = try TestSocketClient(path: server.options.socketPath)
        client?.send(#"{"id": 1, "cmd": "slow"}"# + "\n")
        try Poll.until("the deferred command to be called", turning: loop, every: .milliseconds(5)) { pending.count == 1 }
        client = nil
        try Poll.until("the hang-up to be noticed while the reply is outstanding", turning: loop, every: .milliseconds(5)) { server.connections.isEmpty }
        pending[0].succeed(["late": true])
        let other = try TestSocketClient(path: server.options.socketPath)
        XCTAssertEqual(request(other, #"{"id": 2, "cmd": "ping"}"#)?["ok"], true)
    }

    /// One reply may exceed the per-client bound (a screenshot); events may not, and the bound still holds for
    /// a client that does not read.
    func testOneLargeReplyPassesTheQueueBound() throws {
        let server = try makeServer { $0.maxQueuedBytes = 64 * 1024 }
        defer { server.stop() }
        let big = String(repeating: "x", count: 200 * 1024)
        server.commands.register(named: "big") { _, _ in ["data": .string(big)] }
        let client = try TestSocketClient(path: server.options.socketPath)
        let reply = request(client, #"{"id": 1, "cmd": "big"}"#)
        XCTAssertEqual(reply?["result"]?["data"]?.stringValue?.count, big.count)
        XCTAssertFalse(client.closedByPeer)
    }

    func testRepliesComeInRequestOrder() throws {
        let server = try makeServer()
        defer { server.stop() }
        let client = try TestSocketClient(path: server.options.socketPath)
        let batch = (0..<200).map { i in i % 3 == 0 ? #"{"id": \#(i), "cmd": "nope"}"# : #"{"id": \#(i), "cmd": "ping"}"# }
        client.send(batch.joined(separator: "\n") + "\n")
        var replies: [JSONValue] = []
        try Poll.until("200 replies", turning: loop, every: .milliseconds(5)) { client.poll(); replies += client.takeLines(); return replies.count == 200 }
        XCTAssertEqual(replies.map { $0["id"] }, (0..<200).map { JSONValue.int(Int64($0)) })
    }

    func testOverLongLineGetsAnErrorAndClosesTheConnection() throws {
        let server = try makeServer { $0.maxLineBytes = 1024 }
        defer { server.stop() }
        let client = try TestSocketClient(path: server.options.socketPath)
        client.send(String(repeating: "x", count: 3000))
        try Poll.until("the server to close the connection", turning: loop, every: .milliseconds(5)) { client.poll(); return client.closedByPeer }
        XCTAssertEqual(client.lines.first?["error"]?["code"], "line_too_long")
        XCTAssertTrue(server.connections.isEmpty)

        let other = try TestSocketClient(path: server.options.socketPath)
        XCTAssertEqual(request(other, #"{"cmd": "ping"}"#)?["ok"], true, "the server goes on serving others")
    }

    func testFortyClientsAtOnceAreAllAnswered() throws {
        let server = try makeServer()
        defer { server.stop() }
        let clients = try (0..<40).map { _ in try TestSocketClient(path: server.options.socketPath) }
        for (i, client) in clients.enumerated() { client.send(#"{"id": \#(i), "cmd": "ping"}"# + "\n") }
        try Poll.until("a reply on each of the 40 connections", turning: loop, every: .milliseconds(5)) {
            clients.forEach { $0.poll() }
            return clients.allSatisfy { !$0.lines.isEmpty }
        }
        for (i, client) in clients.enumerated() {
            XCTAssertEqual(client.lines.first?["id"], .int(Int64(i)))
            XCTAssertEqual(client.lines.first?["ok"], true)
        }
        XCTAssertEqual(server.connections.count, 40)
    }

    func testSubscribeDeliversEventsAndRejectsUnknownNames() throws {
        let server = try makeServer()
        defer { server.stop() }
        let client = try TestSocketClient(path: server.options.socketPath)
        XCTAssertEqual(request(client, #"{"id": 1, "cmd": "subscribe", "args": {"events": ["flip", "warp"]}}"#)?["error"]?["code"], "invalid_argument")
        XCTAssertEqual(request(client, #"{"id": 2, "cmd": "subscribe", "args": {"events": "flip"}}"#)?["error"]?["code"], "invalid_argument")
        XCTAssertEqual(request(client, #"{"id": 3, "cmd": "subscribe", "args": {"events": ["flip"]}}"#)?["result"], ["events": ["flip"]])
        server.broadcast(event: "flip", data: ["sequence": 42])
        server.broadcast(event: "frame", data: ["n": 1])  // not subscribed: not delivered
        try Poll.until("the flip event", turning: loop, every: .milliseconds(5)) { client.poll(); return !client.lines.isEmpty }
        XCTAssertEqual(client.takeLines(), [["event": "flip", "data": ["sequence": 42]]])
        XCTAssertEqual(request(client, #"{"id": 4, "cmd": "unsubscribe", "args": {"events": ["flip"]}}"#)?["result"], ["events": []])
        server.broadcast(event: "flip", data: ["sequence": 43])
        XCTAssertEqual(request(client, #"{"id": 5, "cmd": "ping"}"#)?["id"], 5, "no event arrived before the reply")
    }

    func testSlowReaderIsDisconnectedWhileTheLoopKeepsRunning() throws {
        let server = try makeServer { $0.maxQueuedBytes = 64 * 1024 }
        defer { server.stop() }
        let slow = try TestSocketClient(path: server.options.socketPath)
        XCTAssertEqual(request(slow, #"{"cmd": "subscribe", "args": {"events": ["flip"]}}"#)?["ok"], true)
        let healthy = try TestSocketClient(path: server.options.socketPath)
        XCTAssertEqual(request(healthy, #"{"cmd": "ping"}"#)?["ok"], true)
        XCTAssertEqual(server.connections.count, 2)

        var ticks = 0
        let timer = loop.addTimer(after: .milliseconds(1), repeating: .milliseconds(1)) { ticks += 1 }
        defer { timer.cancel() }
        // The slow client never reads: kernel buffers fill, then the bounded queue, then it is dropped.
        let payload = JSONValue.string(String(repeating: "e", count: 1000))
        var sent = 0
        try Poll.until("the slow reader to be dropped", timeout: 10, turning: loop, every: .milliseconds(5)) {
            for _ in 0..<50 { server.broadcast(event: "flip", data: ["sequence": .int(Int64(sent)), "pad": payload]); sent += 1 }
            return server.connections.count == 1
        }
        let ticksAtDrop = ticks
        try Poll.until("timers to fire after the drop", turning: loop, every: .milliseconds(5)) { ticks > ticksAtDrop + 3 }
        XCTAssertEqual(request(healthy, #"{"id": 9, "cmd": "ping"}"#)?["id"], 9)
        XCTAssertLessThan(sent, 10_000, "dropped within a bounded amount of output")
    }

    func testRefusedPeerGetsOneErrorLineAndIsClosed() throws {
        let server = try makeServer {
            $0.policy = PeerPolicy(allowedUIDs: [4242], serverUID: 4243)
            $0.policy.rootIsAlwaysAllowed = false  // the tests run as root
        }
        defer { server.stop() }
        let client = try TestSocketClient(path: server.options.socketPath)
        client.send(#"{"cmd": "ping"}"# + "\n")
        try Poll.until("the server to close the refused connection", turning: loop, every: .milliseconds(5)) { client.poll(); return client.closedByPeer }
        XCTAssertEqual(client.lines.count, 1)
        XCTAssertEqual(client.lines.first?["error"]?["code"], "permission_denied")
        XCTAssertTrue(server.connections.isEmpty)
    }

    func testSocketFileModeAndCreatedDirectoryMode() throws {
        let nested = directory + "/run"
        let server = try makeServer { $0.socketPath = nested + "/control.sock" }
        defer { server.stop() }
        var info = stat()
        XCTAssertEqual(stat(nested, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o750)
        XCTAssertEqual(lstat(nested + "/control.sock", &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFSOCK)
        XCTAssertEqual(info.st_mode & 0o777, 0o660)
        server.stop()
        XCTAssertNotEqual(lstat(nested + "/control.sock", &info), 0, "stop removes the socket it made")
    }

    func testStaleSocketIsReplaced() throws {
        let path = directory + "/control.sock"
        // A socket file nobody listens on, as a crashed run leaves it.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let bound = try UnixSocketAddress(path: path).bind(stale)
        XCTAssertEqual(bound, 0)
        close(stale)

        let server = try makeServer()
        defer { server.stop() }
        let client = try TestSocketClient(path: path)
        XCTAssertEqual(request(client, #"{"cmd": "ping"}"#)?["ok"], true)
    }

    func testLiveSocketIsNotTakenOver() throws {
        let server = try makeServer()
        defer { server.stop() }
        XCTAssertThrowsError(try ControlServer(loop: loop, options: server.options)) { error in
            XCTAssertTrue("\(error)".contains(server.options.socketPath), "\(error)")
            XCTAssertTrue("\(error)".contains(": another process is listening on it"), "\(error)")
        }
        let client = try TestSocketClient(path: server.options.socketPath)
        XCTAssertEqual(request(client, #"{"cmd": "ping"}"#)?["ok"], true, "the first server still serves")
    }

    func testRegularFileAtThePathIsNeverDeleted() throws {
        let path = directory + "/control.sock"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("keep".utf8)))
        XCTAssertThrowsError(try makeServer()) { error in
            XCTAssertTrue("\(error)".contains(path), "\(error)")
            XCTAssertTrue("\(error)".contains("not a socket"), "\(error)")
        }
        XCTAssertEqual(FileManager.default.contents(atPath: path), Data("keep".utf8))
    }

    func testPythonStandardSocketClientGetsAReply() throws {
        let server = try makeServer()
        defer { server.stop() }
        let script = """
        import socket, sys, json
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sys.argv[1])
        s.sendall(b'{"id": "py", "cmd": "ping"}\\n')
        data = b''
        while not data.endswith(b'\\n'):
            data += s.recv(4096)
        reply = json.loads(data)
        print(json.dumps(reply, sort_keys=True))
        sys.exit(0 if reply == {"id": "py", "ok": True, "result": {"pong": True}} else 1)
        """
        let output = try runWhilePumping("/usr/bin/env", ["python3", "-c", script, server.options.socketPath])
        XCTAssertEqual(output.status, 0, output.text)
        XCTAssertTrue(output.text.contains(#""pong": true"#), output.text)
    }

    func testSocatGetsAReply() throws {
        let server = try makeServer()
        defer { server.stop() }
        let output = try runWhilePumping("/bin/sh", ["-c", #"printf '{"id":"s","cmd":"ping"}\r\n' | socat -t 2 - UNIX-CONNECT:"$0""#, server.options.socketPath])
        XCTAssertEqual(output.status, 0, output.text)
        let reply = try JSONDecoder().decode(JSONValue.self, from: Data(output.text.utf8))
        XCTAssertEqual(reply, ["id": "s", "ok": true, "result": ["pong": true]])
    }

    /// Runs a child while the loop serves it: the child talks to the server on this thread.
    private func runWhilePumping(_ path: String, _ arguments: [String]) throws -> (status: Int32, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        try Poll.until("\(path) to finish", timeout: 20, turning: loop, every: .milliseconds(5)) { !process.isRunning }
        process.waitUntilExit()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (process.terminationStatus, text)
    }
}
