import Foundation
import KioskControl
import KioskCore
import KioskFleet
import KioskPlays
import Logging

/// Proof of play over MQTT: each ended record goes to `<prefix>/plays` at QoS 1 with its sequence number, and is
/// marked delivered only when the broker acknowledges it (PUBACK). Offline, records wait in the store; on each
/// (re)connection every record not delivered is sent again, oldest first (a record whose PUBACK was lost with the
/// connection comes twice: a collector keeps one per sequence number, and finds a gap by the numbers). Throttled to
/// `perSecond` messages and `window` in flight, so a backlog of days never starves the loop. A record left open by an
/// earlier run (kioskd killed, a power cut) is sent as it is, with no end. Main thread.
final class PlayDelivery {
    static let window = 16
    static let perSecond = 100

    private let store: PlayStore
    private let fleet: FleetClient
    private let loop: MainLoop
    private let logger: Logger
    /// Records begun before this one were begun by an earlier run.
    private let firstOfRun: Int64
    /// Message id → sequence, sent and not yet acknowledged on this connection.
    private var inFlight: [Int32: Int64] = [:]
    /// The highest sequence sent on this connection.
    private var sentUpTo: Int64 = 0
    private var throttleStart = MonotonicInstant(nanoseconds: 0)
    private var sentInSecond = 0
    private var throttleTimer: TimerHandle?
    private var listeners: [ListenerToken] = []
    private var failing = false

    init(store: PlayStore, fleet: FleetClient, loop: MainLoop, firstOfRun: Int64, logger: Logger) {
        self.store = store
        self.fleet = fleet
        self.loop = loop
        self.firstOfRun = firstOfRun
        self.logger = logger
        listeners = [
            fleet.addConnectedListener { [unowned self] in
                inFlight = [:]
                sentUpTo = 0
                pump()
            },
            fleet.addAcknowledgedListener { [unowned self] mid in
                guard let sequence = inFlight.removeValue(forKey: mid) else { return }
                do { try store.markDelivered(sequence) } catch { logger.error("proof of play: \(error)") }
                pump()
            },
        ]
    }

    deinit { throttleTimer?.cancel() }

    /// A record began (so the one before it on its output ended): send what can be sent.
    func recorded() { pump() }

    private func pump() {
        guard throttleTimer == nil else { return }
        while inFlight.count < Self.window {
            let now = loop.now
            if now - throttleStart >= .seconds(1) {
                throttleStart = now
                sentInSecond = 0
            }
            guard sentInSecond < Self.perSecond else {
                throttleTimer = loop.addTimer(at: throttleStart + .seconds(1)) { [weak self] in
                    self?.throttleTimer = nil
                    self?.pump()
                }
                return
            }
            let records: [PlayRecord]
            do {
                records = try store.deliverable(after: sentUpTo, openBefore: firstOfRun, limit: Self.window - inFlight.count)
                failing = false
            } catch {
                if !failing { logger.error("proof of play: \(error)") }
                failing = true
                return
            }
            guard !records.isEmpty else { return }
            for record in records {
                let payload = ControlWiring.playValue(record)
                guard let text = try? String(decoding: JSONEncoder().encode(payload), as: UTF8.self),
                      let mid = fleet.publishPlay(text) else { return }
                inFlight[mid] = record.sequence
                sentUpTo = record.sequence
                sentInSecond += 1
            }
        }
    }
}
