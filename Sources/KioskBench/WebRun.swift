import Foundation
import Glibc

/// Not product code: the `web` scenario. A page served from loopback, with a CSS animation at the display's rate in a
/// quarter of the screen, shown by kioskd in a `web` widget beside a clock and a ticker, and side by side by `cog -P
/// headless` (WPE's own browser) showing the same page alone, each for the same time in one run. Then the same page
/// static in kioskd, for the loop's wake-ups. Figures are read from /proc (each process tree's CPU time and resident
/// memory) and from kioskd's control socket (`web.state`, `stats`); a figure that could not be read is null.
public enum WebRun {
    public struct Contestant: Codable, Sendable {
        public var name: String
        public var seconds: Double
        /// Processes in the tree (the program and its children: WebKit's web and network processes).
        public var processes: Int?
        /// Resident memory of the whole tree at the end, in KiB.
        public var rssKib: Int?
        /// CPU time of the whole tree over the window, as a share of one core (100 = a core).
        public var cpuPercent: Double?
        /// Frames of the page shown (kioskd: `web.state`'s `frames_shown`); nil for cog, which reports none.
        public var pageFramesPerSecond: Double?
        /// kioskd's main thread's CPU time per page frame shown, in ms: what kioskd adds to WebKit's work (the copy
        /// into the shadow buffer and the flip); the web thread's copy out of WebKit's buffer is `webThreadMsPerFrame`.
        public var mainThreadMsPerFrame: Double?
        public var webThreadMsPerFrame: Double?

        enum CodingKeys: String, CodingKey {
            case name, seconds, processes, rssKib = "rss_kib", cpuPercent = "cpu_percent"
            case pageFramesPerSecond = "page_frames_per_second", mainThreadMsPerFrame = "main_thread_ms_per_frame"
            case webThreadMsPerFrame = "web_thread_ms_per_frame"
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name)
            try c.encode(seconds, forKey: .seconds)
            try c.encode(processes, forKey: .processes)
            try c.encode(rssKib, forKey: .rssKib)
            try c.encode(cpuPercent, forKey: .cpuPercent)
            try c.encode(pageFramesPerSecond, forKey: .pageFramesPerSecond)
            try c.encode(mainThreadMsPerFrame, forKey: .mainThreadMsPerFrame)
            try c.encode(webThreadMsPerFrame, forKey: .webThreadMsPerFrame)
        }
    }

    public struct Scenario: Codable, Sendable {
        public var mode: String
        public var kioskd: Contestant
        public var cog: Contestant?
        /// Why cog was not measured (not installed, did not start); nil when it was.
        public var cogProblem: String?
        /// kioskd's loop wake-ups in `staticSeconds` with the page static and nothing else moving.
        public var staticLoopWakeups: Int?
        public var staticSeconds: Double
        /// kioskd / cog, each figure of the same run; nil where either was not measured.
        public var rssRatio: Double?
        public var cpuRatio: Double?
        /// Issue 29's target: kioskd showing the page costs no more memory and CPU than cog showing it.
        public var targetMet: Bool?

        enum CodingKeys: String, CodingKey {
            case mode, kioskd, cog, cogProblem = "cog_problem", staticLoopWakeups = "static_loop_wakeups"
            case staticSeconds = "static_seconds", rssRatio = "rss_kioskd_vs_cog", cpuRatio = "cpu_kioskd_vs_cog"
            case targetMet = "target_met"
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(mode, forKey: .mode)
            try c.encode(kioskd, forKey: .kioskd)
            try c.encode(cog, forKey: .cog)
            try c.encode(cogProblem, forKey: .cogProblem)
            try c.encode(staticLoopWakeups, forKey: .staticLoopWakeups)
            try c.encode(staticSeconds, forKey: .staticSeconds)
            try c.encode(rssRatio, forKey: .rssRatio)
            try c.encode(cpuRatio, forKey: .cpuRatio)
            try c.encode(targetMet, forKey: .targetMet)
        }

        public var table: String {
            func f(_ v: Double?, _ digits: Int = 1) -> String { v.map { String(format: "%.\(digits)f", $0) } ?? "null" }
            func i(_ v: Int?) -> String { v.map(String.init) ?? "null" }
            var lines = ["web: a page from loopback with a CSS animation in a quarter of \(mode), \(f(kioskd.seconds)) s each",
                         "  contestant  processes  rss_kib  cpu_%  page_fps  main_ms/frame  web_thread_ms/frame"]
            for c in [kioskd] + (cog.map { [$0] } ?? []) {
                lines.append("  \(c.name.padding(toLength: 10, withPad: " ", startingAt: 0))  \(i(c.processes))  \(i(c.rssKib))  \(f(c.cpuPercent))  \(f(c.pageFramesPerSecond))  \(f(c.mainThreadMsPerFrame, 3))  \(f(c.webThreadMsPerFrame, 3))")
            }
            if let cogProblem { lines.append("  cog: \(cogProblem)") }
            lines.append("  kioskd/cog: rss \(f(rssRatio, 2)), cpu \(f(cpuRatio, 2)); target (both <= 1) met: \(targetMet.map { "\($0)" } ?? "null")")
            lines.append("  static page: \(i(staticLoopWakeups)) loop wake-ups in \(f(staticSeconds)) s")
            return lines.joined(separator: "\n")
        }
    }

    /// The animated page: a box moving across a quarter of the screen, once a second, driven by CSS alone.
    static func page(animated: Bool) -> String {
        """
        <!doctype html><html><head><style>
        body { margin: 0; background: #10243a; font: 20px sans-serif; color: #dfe8f0; }
        #stage { position: absolute; left: 0; top: 0; width: 100%; height: 100%; overflow: hidden; }
        #box { position: absolute; top: 40%; width: 60px; height: 60px; background: #ff7a00; border-radius: 8px;
               \(animated ? "animation: move 1s linear infinite alternate;" : "left: 10px;") }
        @keyframes move { from { transform: translateX(0); } to { transform: translateX(400px); } }
        </style></head><body><div id="stage"><p>&nbsp;Today's menu</p><div id="box"></div></div></body></html>
        """
    }

    public static func run(mode: String = "1024x768", seconds: Double, staticSeconds: Double = 10) throws -> Scenario {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-bench-web-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try LoopbackPageServer(pages: ["/animated.html": page(animated: true), "/static.html": page(animated: false)])
        defer { server.stop() }
        let animated = "http://127.0.0.1:\(server.port)/animated.html"
        let kioskd = try kioskdRun(url: animated, in: dir, mode: mode, seconds: seconds, widgets: true)
        var cog: Contestant?
        var cogProblem: String?
        do { cog = try cogRun(url: animated, seconds: seconds) } catch { cogProblem = "\(error)" }
        let quiet = try kioskdRun(url: "http://127.0.0.1:\(server.port)/static.html", in: dir, mode: mode,
                                  seconds: staticSeconds, widgets: false)
        var scenario = Scenario(mode: mode, kioskd: kioskd.contestant, cog: cog, cogProblem: cogProblem,
                                staticLoopWakeups: quiet.loopWakeups, staticSeconds: staticSeconds)
        if let cog {
            if let a = kioskd.contestant.rssKib, let b = cog.rssKib, b > 0 { scenario.rssRatio = Double(a) / Double(b) }
            if let a = kioskd.contestant.cpuPercent, let b = cog.cpuPercent, b > 0 { scenario.cpuRatio = a / b }
        }
        if let r = scenario.rssRatio, let c = scenario.cpuRatio { scenario.targetMet = r <= 1 && c <= 1 }
        return scenario
    }

    struct KioskdFigures {
        var contestant: Contestant
        var loopWakeups: Int?
    }

    private static func kioskdRun(url: String, in dir: URL, mode: String, seconds: Double, widgets: Bool) throws -> KioskdFigures {
        let scene = dir.appendingPathComponent(widgets ? "animated.yaml" : "static.yaml")
        let others = widgets ? """
              - {type: clock, format: "%H:%M:%S", x: 50%, y: 0, width: 50%, height: 25%}
              - {type: ticker, text: "Departures and arrivals, platform changes and notices", x: 0, y: 88%, width: 100%, height: 12%}
            """ : ""
        try """
            background: "#000000"
            widgets:
              - {id: page, type: web, url: "\(url)", x: 0, y: 0, width: 50%, height: 50%}
            \(others)
            """.write(to: scene, atomically: true, encoding: .utf8)
        let socket = dir.appendingPathComponent(widgets ? "a.sock" : "s.sock").path
        let child = try Spawned(label: "web", executable: "/proc/self/exe",
                                arguments: ["kioskd", "run", "--backend", "headless", "--mode", mode, "--scene", scene.path,
                                            "--socket", socket, "--no-watch", "--log-level", "error"])
        defer { child.stop() }
        let control = try ControlLine(path: socket, deadline: 20)
        try waitUntil("kioskd's page loaded", seconds: 60) {
            (try? control.result("web.state", ["id": "page"]))?["state"] as? String == "loaded"
        }
        usleep(2_000_000)  // the animation running, the first frames past
        let before = ProcessTree(root: child.pid)
        let framesBefore = (try? control.result("web.state", ["id": "page"]))?["frames_shown"] as? Int
        let wakeupsBefore = (try? control.result("stats", [:]))?["loop_wakeups"] as? Int
        usleep(useconds_t(seconds * 1_000_000))
        let after = ProcessTree(root: child.pid)
        let framesAfter = (try? control.result("web.state", ["id": "page"]))?["frames_shown"] as? Int
        let wakeupsAfter = (try? control.result("stats", [:]))?["loop_wakeups"] as? Int
        var contestant = Contestant(name: "kioskd", seconds: seconds)
        contestant.processes = after.processes.count
        contestant.rssKib = after.rssKib
        contestant.cpuPercent = after.cpuSeconds(since: before).map { 100 * $0 / seconds }
        if let a = framesBefore, let b = framesAfter {
            let frames = b - a
            contestant.pageFramesPerSecond = Double(frames) / seconds
            if frames > 0 {
                contestant.mainThreadMsPerFrame = after.threadSeconds(child.pid, tid: child.pid, since: before).map { 1000 * $0 / Double(frames) }
                contestant.webThreadMsPerFrame = after.threadSeconds(child.pid, named: "kioskd-web", since: before).map { 1000 * $0 / Double(frames) }
            }
        }
        let wakeups = wakeupsBefore.flatMap { a in wakeupsAfter.map { $0 - a } }
        return KioskdFigures(contestant: contestant, loopWakeups: wakeups)
    }

    private static func cogRun(url: String, seconds: Double) throws -> Contestant {
        let candidates: [String] = ["/usr/bin/cog", "/usr/local/bin/cog"]
        guard let cog = candidates.first(where: { access($0, X_OK) == 0 }) else {
            throw BenchError("cog is not installed (apt install cog)")
        }
        let child = try Spawned(label: "web", executable: cog, arguments: ["cog", "-P", "headless", url])
        defer { child.stop() }
        // cog reports nothing: wait for its web process, then as long as kioskd's warm-up.
        try waitUntil("cog's web process", seconds: 30) {
            ProcessTree(root: child.pid).processes.contains { $0.name.hasPrefix("WPEWebProcess") }
        }
        usleep(3_000_000)
        let before = ProcessTree(root: child.pid)
        usleep(useconds_t(seconds * 1_000_000))
        let after = ProcessTree(root: child.pid)
        var contestant = Contestant(name: "cog", seconds: seconds)
        contestant.processes = after.processes.count
        contestant.rssKib = after.rssKib
        contestant.cpuPercent = after.cpuSeconds(since: before).map { 100 * $0 / seconds }
        return contestant
    }

    private static func waitUntil(_ what: String, seconds: Double, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { throw BenchError("web: waited \(Int(seconds)) s for \(what)") }
            usleep(50_000)
        }
    }
}

/// A process and its descendants, read from /proc at one instant.
struct ProcessTree {
    struct Process {
        var pid: Int32
        var name: String
        /// utime + stime, in clock ticks.
        var ticks: Int
        var rssKib: Int?
    }

    let processes: [Process]
    /// Per thread of the root: tid -> (name, ticks).
    let threads: [Int32: (name: String, ticks: Int)]

    init(root: Int32) {
        var parent: [Int32: Int32] = [:]
        var all: [Int32: Process] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let stat = Self.stat("/proc/\(pid)/stat") else { continue }
            parent[pid] = stat.ppid
            all[pid] = Process(pid: pid, name: stat.name, ticks: stat.ticks, rssKib: Self.rss(pid))
        }
        var members: Set<Int32> = [root]
        var grew = true
        while grew {
            grew = false
            for (pid, ppid) in parent where members.contains(ppid) && !members.contains(pid) {
                members.insert(pid)
                grew = true
            }
        }
        processes = members.compactMap { all[$0] }
        var threads: [Int32: (String, Int)] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(root)/task")) ?? [] {
            guard let tid = Int32(entry), let stat = Self.stat("/proc/\(root)/task/\(tid)/stat") else { continue }
            threads[tid] = (stat.name, stat.ticks)
        }
        self.threads = threads
    }

    var rssKib: Int? {
        let values = processes.compactMap(\.rssKib)
        return values.isEmpty ? nil : values.reduce(0, +)
    }

    static var ticksPerSecond: Double { Double(sysconf(Int32(_SC_CLK_TCK))) }

    /// CPU seconds the tree spent since `earlier`: processes in both, and new ones from zero.
    func cpuSeconds(since earlier: ProcessTree) -> Double? {
        guard !processes.isEmpty else { return nil }
        let before = Dictionary(earlier.processes.map { ($0.pid, $0.ticks) }, uniquingKeysWith: { a, _ in a })
        let ticks = processes.reduce(0) { $0 + max($1.ticks - (before[$1.pid] ?? 0), 0) }
        return Double(ticks) / Self.ticksPerSecond
    }

    func threadSeconds(_ pid: Int32, tid: Int32, since earlier: ProcessTree) -> Double? {
        guard let now = threads[tid], let then = earlier.threads[tid] else { return nil }
        return Double(max(now.ticks - then.ticks, 0)) / Self.ticksPerSecond
    }

    func threadSeconds(_ pid: Int32, named name: String, since earlier: ProcessTree) -> Double? {
        guard let (tid, now) = threads.first(where: { $0.value.name == name }), let then = earlier.threads[tid] else { return nil }
        return Double(max(now.ticks - then.ticks, 0)) / Self.ticksPerSecond
    }

    private static func stat(_ path: String) -> (name: String, ppid: Int32, ticks: Int)? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")") else { return nil }
        let name = String(text[text.index(after: open)..<close])
        let fields = text[text.index(close, offsetBy: 2)...].split(separator: " ")
        // After the name: state(0) ppid(1) ... utime(11) stime(12).
        guard fields.count > 12, let ppid = Int32(fields[1]), let utime = Int(fields[11]), let stime = Int(fields[12]) else { return nil }
        return (name, ppid, utime + stime)
    }

    private static func rss(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }
}

/// One JSON Lines request at a time over kioskd's control socket.
final class ControlLine {
    private let fd: Int32
    private var buffer = [UInt8]()
    private var nextID = 0

    init(path: String, deadline seconds: Double) throws {
        let start = Date()
        while true {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                let bytes = Array(path.utf8.prefix(raw.count - 1))
                raw.copyBytes(from: bytes)
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if connected == 0 {
                self.fd = fd
                return
            }
            close(fd)
            guard Date().timeIntervalSince(start) < seconds else { throw BenchError("web: kioskd's control socket \(path) did not answer") }
            usleep(50_000)
        }
    }

    deinit { close(fd) }

    func result(_ command: String, _ arguments: [String: Any]) throws -> [String: Any] {
        nextID += 1
        let request = try JSONSerialization.data(withJSONObject: ["id": nextID, "cmd": command, "args": arguments]) + Data([0x0A])
        _ = request.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Data(buffer[..<newline])
                buffer.removeSubrange(...newline)
                guard let reply = try JSONSerialization.jsonObject(with: line) as? [String: Any] else { continue }
                guard reply["id"] as? Int == nextID else { continue }
                return reply["result"] as? [String: Any] ?? [:]
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = read(fd, &chunk, chunk.count)
            guard count > 0 else { throw BenchError("web: kioskd's control socket closed") }
            buffer += chunk[..<count]
        }
    }
}

/// A tiny HTTP/1.0 server on loopback for the scenario's pages, on a thread of its own.
final class LoopbackPageServer: @unchecked Sendable {
    let port: Int
    private let fd: Int32
    private let pages: [String: String]
    private let thread: Thread

    init(pages: [String: String]) throws {
        self.pages = pages
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.fd = fd
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { throw BenchError("web: cannot listen on loopback: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let listener = fd, served = pages
        thread = Thread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                var request = [UInt8](repeating: 0, count: 4096)
                let count = read(client, &request, request.count)
                let line = count > 0 ? String(decoding: request[..<count], as: UTF8.self).split(separator: " ") : []
                let path = line.count > 1 ? String(line[1]) : "/"
                let body = served[path].map { Array($0.utf8) }
                let head = body == nil ? "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n"
                    : "HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body!.count)\r\nConnection: close\r\n\r\n"
                let reply = Array(head.utf8) + (body ?? [])
                _ = reply.withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
                close(client)
            }
        }
        thread.start()
    }

    func stop() {
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}
