import CDRM
import Glibc
import KioskCore
import Logging

/// The DRM cards as an `OutputSource`: each probe opens the cards the options allow (`device`, else every card
/// node, filtered by `driver`), reads their connectors and chooses like `DRMBackend` does (the named connector, else
/// the first connected; the requested mode, else the preferred one), so a card that appeared since the last probe
/// (a USB display, a driver loaded late) is seen by the next. A probe holds no fd of its own: it uses the card the
/// outputs share (`DRMCard.shared`), and a card no output holds is closed again.
///
/// Several sources may drive outputs on one card (one per connector): what the other outputs hold is chosen
/// around, and a connected connector whose CRTCs they all hold is listed with the reason it cannot be driven
/// (`ConnectorStatus.unavailableReason`) and not chosen.
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
    /// The output this source opened last: what it holds is its own, not another output's, at the next probe.
    private weak var opened: DRMBackend?

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
            } else if let found = try? DRMCard.shared(path: path) {
                card = found
            } else {
                continue  // listed a moment ago and going away
            }
            if let driver = options.driver, card.driver != driver { continue }
            card.setClientCap(Int32(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
            let res = try DRMResources(card: card)
            let taken = card.session.taken(except: opened?.card === card ? opened?.claim : nil)
            for c in res.connectors where !c.isWriteback {
                let modes = c.modes.map(\.mode)
                connectors.append(ConnectorStatus(device: path, name: c.name, isConnected: c.status == .connected,
                                                  preferredMode: modes.first { $0.isPreferred } ?? modes.first,
                                                  unavailableReason: Self.unavailableReason(c, in: res, device: path, taken: taken)))
            }
            guard choice == nil else { continue }
            let choose = { (mode: ModeRequest?) in
                try? DRMOutputPlan.choose(in: res, device: path, connector: self.options.connector, mode: mode, taken: taken)
            }
            if let plan = choose(options.mode) {
                choice = OutputCandidate(device: path, connector: plan.connector.name, mode: plan.mode.mode)
            } else if options.mode != nil, let plan = choose(nil) {
                choice = OutputCandidate(device: path, connector: plan.connector.name, mode: plan.mode.mode)
                preferredInstead = choice
            }
        }
        return OutputProbe(connectors: connectors, choice: choice)
    }

    /// Why a connected connector no other output drives cannot be driven now (other outputs hold every CRTC it can
    /// use), nil when it can.
    private static func unavailableReason(_ connector: DRMResources.Connector, in res: DRMResources, device: String,
                                          taken: DRMTakenObjects) -> String? {
        guard connector.status == .connected, !taken.isEmpty, taken.connectors[connector.id] == nil else { return nil }
        do {
            _ = try DRMOutputPlan.choose(in: res, device: device, connector: connector.name, mode: nil, taken: taken)
            return nil
        } catch let error as DRMObjectsTakenError {
            return error.description
        } catch {
            return nil
        }
    }

    /// The check a kiosk makes at start for each output, before anything is opened: a choice that cannot work (no
    /// such card or driver, no connector of the name asked for, a mode the display connected now lacks) throws the
    /// error opening it gives, naming what there is. Nothing connected where a connector the options allow exists
    /// is no error: the output waits for a display. Later probes never fail this way (a display plugged in later
    /// with another mode is driven in its preferred one). Returns what the probe found.
    @discardableResult
    public func checkChoice() throws -> OutputProbe {
        let found = try probe()
        if let choice = found.choice, choice != preferredInstead { return found }
        if Self.shouldWait(for: found, connector: options.connector) { return found }
        // Opening what the options ask for says what is wrong with them.
        _ = try DRMBackend(options: options)
        return found
    }

    /// Whether an output should wait for a display rather than fail at start: a connector the options allow
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
        let backend = try DRMBackend(options: options)
        opened = backend
        return backend
    }
}
