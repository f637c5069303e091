import Foundation
import Glibc
import KioskCore
import KioskDisplay
import KioskRemote
import KioskRender
import KioskRuntime
import Logging

/// Not product code: `kioskd bench`'s vnc scenario. What a VNC viewer of the default dashboard costs on the wire:
/// the bytes per second kioskd sends a viewer that asks for changes (incremental updates: only the damage), against
/// a viewer in the same run that asks for the whole frame each time (a full-frame update rate, as a server without
/// damage tracking sends), and against whole frames at the rate frames were presented; and a third viewer asking
/// for changes in ZRLE (zlib-compressed tiles) rather than Raw. Both viewers are real RFB
/// clients on loopback sockets, on a thread of their own, each asking for its next update as soon as the last one
/// has arrived; kioskd's engine and server run on this (main) thread in real time. Every figure measured, or nil.
public enum VNCRun {
    public struct Figures: Codable, Sendable {
        public var mode: String
        public var seconds: Double
        public var framesPresented: Int
        /// Bytes per second received by the viewer asking for changes, and by the one asking for whole frames.
        public var damageBytesPerSecond: Double?
        /// Bytes per second received by the viewer asking for changes in ZRLE.
        public var damageZRLEBytesPerSecond: Double?
        public var fullFrameBytesPerSecond: Double?
        /// Whole frames at the rate frames were presented: what sending every new frame whole would take.
        public var everyFrameWholeBytesPerSecond: Double?
        public var damageUpdates: Int
        public var damageZRLEUpdates: Int
        public var fullFrameUpdates: Int
        /// `damageBytesPerSecond / fullFrameBytesPerSecond`, and `/ everyFrameWholeBytesPerSecond`.
        public var damageVsFullFrame: Double?
        public var damageVsEveryFrameWhole: Double?
        /// `damageZRLEBytesPerSecond / fullFrameBytesPerSecond`, and `/ damageBytesPerSecond` (what ZRLE saves).
        public var damageZRLEVsFullFrame: Double?
        public var damageZRLEVsDamage: Double?

        enum CodingKeys: String, CodingKey {
            case mode, seconds, framesPresented = "frames_presented", damageBytesPerSecond = "damage_bytes_per_second"
            case fullFrameBytesPerSecond = "full_frame_bytes_per_second", everyFrameWholeBytesPerSecond = "every_frame_whole_bytes_per_second"
            case damageUpdates = "damage_updates", fullFrameUpdates = "full_frame_updates", damageVsFullFrame = "damage_vs_full_frame"
            case damageVsEveryFrameWhole = "damage_vs_every_frame_whole"
            case damageZRLEBytesPerSecond = "damage_zrle_bytes_per_second", damageZRLEUpdates = "damage_zrle_updates"
            case damageZRLEVsFullFrame = "damage_zrle_vs_full_frame", damageZRLEVsDamage = "damage_zrle_vs_damage"
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(mode, forKey: .mode)
            try c.encode(seconds, forKey: .seconds)
            try c.encode(framesPresented, forKey: .framesPresented)
            try c.encode(damageBytesPerSecond, forKey: .damageBytesPerSecond)
            try c.encode(fullFrameBytesPerSecond, forKey: .fullFrameBytesPerSecond)
            try c.encode(everyFrameWholeBytesPerSecond, forKey: .everyFrameWholeBytesPerSecond)
            try c.encode(damageUpdates, forKey: .damageUpdates)
            try c.encode(fullFrameUpdates, forKey: .fullFrameUpdates)
            try c.encode(damageVsFullFrame, forKey: .damageVsFullFrame)
            try c.encode(damageVsEveryFrameWhole, forKey: .damageVsEveryFrameWhole)
            try c.encode(damageZRLEBytesPerSecond, forKey: .damageZRLEBytesPerSecond)
            try c.encode(damageZRLEUpdates, forKey: .damageZRLEUpdates)
            try c.encode(damageZRLEVsFullFrame, forKey: .damageZRLEVsFullFrame)
            try c.encode(damageZRLEVsDamage, forKey: .damageZRLEVsDamage)
        }
    }

    /// The default scene at `mode` for `seconds` after both viewers have their first whole frame.
    public static func measure(scene path: String, mode: OutputMode, seconds: Double) throws -> Figures {
        let loop = try MainLoop.epoll()
        let backend = try HeadlessBackend(mode: mode, bufferCount: 2)
        let engine = try LayerEngine(loop: loop, backend: backend, compositor: try ShadowCompositor(size: mode.size),
                                     pool: RenderQueuePool(strategy: .roundRobin))
        let begin = MonotonicInstant.now()
        let stage = try SceneStage(engine: engine, path: path, clock: {
            WallTime(seconds: Contestants.clockStart) + (MonotonicInstant.now() - begin)
        })
        var quiet = Logger(label: "kioskd.bench.vnc")
        quiet.logLevel = .error
        let server = try VNCServer(options: VNCServer.Options(host: "127.0.0.1", port: 0, security: .none, maxClients: 3,
                                                              input: false, name: "bench"),
                                   engine: engine, loop: loop, logger: quiet)
        var presents = 0
        let presentListener = engine.addPresentListener { _ in presents += 1 }
        try engine.start()
        let port = server.boundPort
        let damage = Viewer(port: port, incremental: true), whole = Viewer(port: port, incremental: false)
        let zrle = Viewer(port: port, incremental: true, zrle: true)
        for viewer in [damage, whole, zrle] { viewer.start() }
        // Warm-up: until both viewers have a whole frame (the scene rendered, the server serving).
        var start: (time: MonotonicInstant, presents: Int, damage: Viewer.Count, whole: Viewer.Count, zrle: Viewer.Count)?
        var end: (time: MonotonicInstant, presents: Int, damage: Viewer.Count, whole: Viewer.Count, zrle: Viewer.Count)?
        let poll = loop.addTimer(after: .milliseconds(20), repeating: .milliseconds(20)) {
            let now = MonotonicInstant.now()
            if damage.failure != nil || whole.failure != nil || zrle.failure != nil { loop.stop(); return }
            if start == nil {
                guard damage.count.updates > 0, whole.count.updates > 0, zrle.count.updates > 0, !engine.isRendering(engine.rootLayer) else { return }
                start = (now, presents, damage.count, whole.count, zrle.count)
            } else if let s = start, (now - s.time).seconds >= seconds {
                end = (now, presents, damage.count, whole.count, zrle.count)
                loop.stop()
            }
        }
        let watchdog = loop.addTimer(after: .seconds(Int64(seconds) + 60)) { loop.stop() }
        loop.run()
        poll.cancel()
        watchdog.cancel()
        for viewer in [damage, whole, zrle] { viewer.stop() }
        engine.stop()
        withExtendedLifetime((stage, server, presentListener)) {}
        if let failure = damage.failure ?? whole.failure ?? zrle.failure { throw BenchError("bench vnc: a viewer failed: \(failure)") }
        guard let s = start, let e = end else { throw BenchError("bench vnc: the viewers had no whole frame within the time limit") }
        let elapsed = (e.time - s.time).seconds
        let framesPresented = e.presents - s.presents
        let damageRate = Double(e.damage.bytes - s.damage.bytes) / elapsed
        let wholeRate = Double(e.whole.bytes - s.whole.bytes) / elapsed
        let everyFrame = Double(framesPresented * (mode.width * mode.height * 4 + 16)) / elapsed
        let wholeUpdates = e.whole.updates - s.whole.updates
        let zrleRate = Double(e.zrle.bytes - s.zrle.bytes) / elapsed
        return Figures(mode: mode.description, seconds: (elapsed * 100).rounded() / 100, framesPresented: framesPresented,
                       damageBytesPerSecond: damageRate, damageZRLEBytesPerSecond: zrleRate, fullFrameBytesPerSecond: wholeUpdates > 0 ? wholeRate : nil,
                       everyFrameWholeBytesPerSecond: framesPresented > 0 ? everyFrame : nil,
                       damageUpdates: e.damage.updates - s.damage.updates, damageZRLEUpdates: e.zrle.updates - s.zrle.updates,
                       fullFrameUpdates: wholeUpdates,
                       damageVsFullFrame: wholeUpdates > 0 ? benchRatio(damageRate, wholeRate) : nil,
                       damageVsEveryFrameWhole: framesPresented > 0 ? benchRatio(damageRate, everyFrame) : nil,
                       damageZRLEVsFullFrame: wholeUpdates > 0 ? benchRatio(zrleRate, wholeRate) : nil,
                       damageZRLEVsDamage: benchRatio(zrleRate, damageRate))
    }

    /// A minimal RFB viewer on a thread of its own, with a blocking socket: logs in (security None), asks for ZRLE if
    /// told to, asks for a whole frame, then for each next update as soon as the last arrived (incremental or
    /// whole), and counts what comes (a ZRLE rectangle's data is counted, not decoded).
    final class Viewer: @unchecked Sendable {
        struct Count: Sendable { var bytes = 0; var updates = 0 }
        private let port: Int
        private let incremental: Bool
        private let zrle: Bool
        private let state = Lock<(count: Count, stopped: Bool, failure: String?)>((Count(), false, nil))
        private let done = DispatchSemaphore(value: 0)
        private var fd: Int32 = -1

        init(port: Int, incremental: Bool, zrle: Bool = false) {
            self.port = port
            self.incremental = incremental
            self.zrle = zrle
        }

        var count: Count { state.withLock { $0.count } }
        var failure: String? { state.withLock { $0.failure } }

        func start() {
            Thread { [self] in
                do { try run() } catch { state.withLock { if !$0.stopped { $0.failure = "\(error)" } } }
                done.signal()
            }.start()
        }

        func stop() {
            state.withLock { $0.stopped = true }
            if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
            done.wait()
            if fd >= 0 { close(fd) }
        }

        private func run() throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw BenchError("socket: errno \(errno)") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw BenchError("connect 127.0.0.1:\(port): errno \(errno)") }
            _ = try read(12)
            try write(Array("RFB 003.008\n".utf8))
            let types = try read(2)
            guard types == [1, 1] else { throw BenchError("security types \(types)") }
            try write([1])
            guard try read(4) == [0, 0, 0, 0] else { throw BenchError("login refused") }
            try write([1])
            let serverInit = try read(24)
            let width = Int(serverInit[0]) << 8 | Int(serverInit[1]), height = Int(serverInit[2]) << 8 | Int(serverInit[3])
            let nameLength = serverInit[20..<24].reduce(0) { $0 << 8 | Int($1) }
            _ = try read(nameLength)
            let size: [UInt8] = [UInt8(width >> 8), UInt8(width & 0xFF), UInt8(height >> 8), UInt8(height & 0xFF)]
            if zrle { try write([2, 0, 0, 1, 0, 0, 0, 16]) }
            try write([3, 0, 0, 0, 0, 0] + size)
            while !state.withLock({ $0.stopped }) {
                let header = try read(4)
                guard header[0] == 0 else { throw BenchError("unexpected server message \(header[0])") }
                let rects = Int(header[2]) << 8 | Int(header[3])
                var bytes = 4
                for _ in 0..<rects {
                    let r = try read(12)
                    let w = Int(r[4]) << 8 | Int(r[5]), h = Int(r[6]) << 8 | Int(r[7])
                    if zrle {
                        guard r[8...11] == [0, 0, 0, 16] else { throw BenchError("not ZRLE: encoding \(Array(r[8...11]))") }
                        let length = try read(4).reduce(0) { $0 << 8 | Int($1) }
                        try skip(length)
                        bytes += 16 + length
                    } else {
                        guard r[8...11] == [0, 0, 0, 0] else { throw BenchError("not Raw: encoding \(Array(r[8...11]))") }
                        try skip(w * h * 4)
                        bytes += 12 + w * h * 4
                    }
                }
                state.withLock { $0.count.bytes += bytes; $0.count.updates += 1 }
                try write([3, incremental ? 1 : 0, 0, 0, 0, 0] + size)
            }
        }

        private func read(_ count: Int) throws -> [UInt8] {
            var buffer = [UInt8](repeating: 0, count: count)
            var got = 0
            while got < count {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + got, count - got, 0) }
                guard n > 0 else { throw BenchError("the server closed the connection (errno \(errno))") }
                got += n
            }
            return buffer
        }

        private func skip(_ count: Int) throws {
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var left = count
            while left > 0 {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, min(left, $0.count), 0) }
                guard n > 0 else { throw BenchError("the server closed the connection (errno \(errno))") }
                left -= n
            }
        }

        private func write(_ bytes: [UInt8]) throws {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n == bytes.count else { throw BenchError("send: errno \(errno)") }
        }
    }
}

extension VNCRun.Figures {
    var table: String {
        func rate(_ value: Double?) -> String { value.map { String(format: "%.0f", $0 / 1024) + " KiB/s" } ?? "null" }
        return [
            "vnc: bytes sent to a viewer of the default dashboard, \(mode), \(seconds) s, \(framesPresented) frames presented",
            "  changes only (incremental), Raw: \(rate(damageBytesPerSecond)) in \(damageUpdates) updates",
            "  changes only, ZRLE:              \(rate(damageZRLEBytesPerSecond)) in \(damageZRLEUpdates) updates",
            "  whole frames on request:         \(rate(fullFrameBytesPerSecond)) in \(fullFrameUpdates) updates",
            "  every presented frame, whole:    \(rate(everyFrameWholeBytesPerSecond))",
            "  changes / whole on request: \(show(damageVsFullFrame, "%.4f"))   changes / every frame whole: \(show(damageVsEveryFrameWhole, "%.4f"))",
            "  changes in ZRLE / whole on request: \(show(damageZRLEVsFullFrame, "%.4f"))   ZRLE / Raw changes: \(show(damageZRLEVsDamage, "%.4f"))",
        ].joined(separator: "\n")
    }
}
