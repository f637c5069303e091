import KioskCore

/// Input on one or several outputs: one `InputRouter` per output (its stage, its panel and rotation, its press
/// state and cursor), and each device's events go to the router of the output its `input.map` rule names, else to
/// the first (with one output, the only one). So a touch on a panel mapped to output B hit-tests B's scene, and
/// its `input` reports name B. A rule naming an output that is not driven leaves its devices on the first output.
///
/// Lives on the main thread with the stages.
public final class OutputInputRouting {
    /// One router per output, in the outputs' order; the first takes every device no rule maps elsewhere.
    public let routers: [InputRouter]
    public var deviceRules: InputDeviceRules

    public init(routers: [InputRouter], deviceRules: InputDeviceRules = InputDeviceRules()) {
        precondition(!routers.isEmpty, "OutputInputRouting: no router")
        self.routers = routers
        self.deviceRules = deviceRules
    }

    /// The router of the output the device named so belongs to.
    public func router(forDevice name: String) -> InputRouter {
        guard routers.count > 1, let output = deviceRules.output(forDevice: name) else { return routers[0] }
        return router(forOutput: output) ?? routers[0]
    }

    /// The router of the output whose connector is `connector` (case-insensitive); nil when none is.
    public func router(forOutput connector: String) -> InputRouter? {
        routers.first { $0.mapping.output.lowercased() == connector.lowercased() }
    }

    public func handle(_ event: InputEvent) {
        router(forDevice: event.device).handle(event)
    }
}
