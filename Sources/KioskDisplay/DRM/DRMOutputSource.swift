import CDRM
import Glibc
import KioskCore
import Logging

/// The DRM cards as an `OutputSource`: each probe opens the cards the options allow (`device`, else every card
/// node, filtered by `driver`), reads their connectors and chooses like `DRMBackend` does (the named connector, else
/// the first connected; the requested mode, else the preferred one), so a card that appeared since the last probe
/// (a USB display, a driver loaded late) is seen by the next. A probe holds no fd: each card is closed again.
///
/// When the requested mode is not offered by the display now connected (another monitor was plugged in), its
/// preferred mode is chosen instead, and opening that output says so in a warning.
///
/// Lives on the main thread.
public final class DRMOutputSource: OutputSource {
    public let options: DRMOptions
    private let directory: String
    private let logger = Logger(label: "kioskd.drm")
    /// Outputs the last probe chose in their preferred mode because the requested one is not offered.
    private var preferredInstead: OutputCandidate?

    public init(options: DRMOptions, directory: String = "/dev/dri") {
        self.options = options
        self.directory = directory
    }

    public func probe() throws -> OutputProbe {
        let paths = options.device.map { [$0] } ?? DRMCard.cardPaths(in: directory)
        var connectors: [ConnectorStatus] = []
        var choice: OutputCandidate?
        preferredInstead = nil
        for path in paths {
            let card: DRMCard
            if options.device != nil {
                // A card named on the command line must be there; the error lists the cards that are.
                card = try DRMBackend.openCard(path)
            } else if let found = try? DRMCard(path: path) {
                card = found
            } else {
                continue  // listed a moment ago and going away
            }
            if let driver = options.driver, card.driver != driver { continue }
            card.setClientCap(Int32(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
            let res = try DRMResources(card: card)
            for c in res.connectors where !c.isWriteback {
                let modes = c.modes.map(\.mode)
                connectors.append(ConnectorStatus(device: path, name: c.name, isConnected: c.status == .connected,
                                                  preferredMode: modes.first { $0.isPreferred } ?? modes.first))
            }
            guard choice == nil else { continue }
            if let plan = try? DRMOutputPlan.choose(in: res, device: path, connector: options.connector, mode: options.mode) {
                choice = OutputCandidate(device: path, connector: plan.connector.name, mode: plan.mode.mode)
            } else if options.mode != nil,
                      let plan = try? DRMOutputPlan.choose(in: res, device: path, connector: options.connector, mode: nil) {
                choice = OutputCandidate(device: path, connector: plan.connector.name, mode: plan.mode.mode)
                preferredInstead = choice
            }
        }
        return OutputProbe(connectors: connectors, choice: choice)
    }

    /// Whether `kioskd run` should wait for a display rather than fail at start: a connector the options allow
    /// exists (on a card of the driver asked for, with the name asked for) and none of them is connected. A bad
    /// choice (no such card, driver or connector) is not worth waiting for; opening the output reports it.
    public static func shouldWait(for probe: OutputProbe, connector name: String?) -> Bool {
        guard probe.choice == nil else { return false }
        let allowed = probe.connectors.filter { name == nil || $0.name.lowercased() == name!.lowercased() }
        return !allowed.isEmpty && !allowed.contains { $0.isConnected }
    }

    public func open(_ candidate: OutputCandidate) throws -> any DisplayBackend {
        if candidate == preferredInstead, let requested = options.mode {
            logger.warning("\(candidate.device) connector \(candidate.connector): mode \(requested) not offered by the display connected now; using its preferred mode \(candidate.mode)")
        }
        var options = self.options
        options.device = candidate.device
        options.connector = candidate.connector
        options.mode = ModeRequest(width: candidate.mode.width, height: candidate.mode.height,
                                   refreshMilliHz: candidate.mode.refreshMilliHz)
        return try DRMBackend(options: options)
    }
}
