import Foundation
import KioskControl
import KioskCore
import KioskDisplay
import KioskFleet
import KioskInput
import KioskRuntime
import KioskScene
import Logging

/// Input and screen-power settings of a configuration. A plain value.
public struct InputSettings: Equatable {
    /// nil: no input devices.
    var source: InputBackend?
    /// Per device output and calibration, and the calibration for the rest.
    var devices: InputDeviceRules
    var idle: IdleSettings
    var backlightDirectory: String
    /// The backlight device named by the board file; nil takes the first one present.
    var backlightName: String?

    /// The idle settings of an `idle:` section as resolved (`KioskConfiguration`): dimmed to 0.2 unless it says.
    public static func idle(_ idle: KioskConfig.Idle) -> IdleSettings {
        IdleSettings(dimAfter: idle.dimAfter, dimLevel: idle.dimLevel ?? 0.2, blankAfter: idle.blankAfter,
                     schedule: idle.schedule.isEmpty ? nil : ScreenSchedule(entries: idle.schedule))
    }

    /// The settings `configuration` gives a run on `backend`: its devices or seat (by default seat0 with a display
    /// backend, none headless), its device map and calibration, its idle policy and backlight.
    init(_ configuration: KioskConfiguration, backend: KioskConfig.Backend) {
        let input = configuration.settings.input
        source = if !input.devices.isEmpty {
            .paths(input.devices)
        } else if let seat = input.seat {
            seat == "none" ? nil : .seat(seat)
        } else {
            backend == .headless ? nil : .seat("seat0")
        }
        devices = InputDeviceRules(rules: input.map, calibration: input.calibration)
        idle = Self.idle(configuration.settings.idle)
        backlightDirectory = configuration.backlightDirectory ?? Backlight.systemClassDirectory
        backlightName = configuration.backlight
    }
}

/// Input on a running `kioskd run`: libinput's events go through `OutputInputRouting` (one `InputRouter` per
/// output) to the scene of the output each device belongs to, and out as `input` events; the idle monitor dims the
/// backlight and blanks every output, and reports `power` events. Lives on the main thread.
final class InputWiring {
    let routing: OutputInputRouting
    /// The first output's router, which takes every device no `input.map` rule sends elsewhere.
    var router: InputRouter { routing.routers[0] }
    let source: LibinputSource?
    let idle: IdleMonitor?
    let backlight: Backlight?
    private let outputs: [DrivenOutput]
    private weak var control: ControlWiring?
    /// The fleet broker's client, if any: presses with an `emit` action go to its `<prefix>/action` topic, and
    /// `input` events to `<prefix>/event/input` when `mqtt.events` names them, from every output.
    weak var fleet: FleetClient?
    private let logger: Logger

    /// The router of `output` (the outputs' order is the routers').
    private func router(of output: DrivenOutput) -> InputRouter {
        routing.routers[outputs.firstIndex { $0 === output }!]
    }

    /// An output's display was let go: its cursor plane goes with it (it keeps the output's card open); the cursor
    /// is composited until the output's next display is adopted.
    func outputDetached(_ output: DrivenOutput) {
        router(of: output).replaceCursorPlane(nil)
    }

    /// A display was adopted on `output`: touches map onto its panel from now on, and the pointer's cursor goes on its
    /// cursor plane where it has one (a cursor on the previous display goes with it).
    func follow(_ output: DrivenOutput, info: OutputInfo) {
        let target = router(of: output)
        target.mapping.panel = info.mode.size
        target.mapping.output = info.connector
        target.replaceCursorPlane(output.engine.backend.flatMap { Self.cursorPlane(for: $0, logger: logger) })
    }

    /// A router per output, devices mapped by `input.map`, else to the first.
    init(settings: InputSettings, outputs: [DrivenOutput], control: ControlWiring?, logger: Logger) {
        let loop = outputs[0].engine.loop
        self.outputs = outputs
        self.control = control
        self.logger = logger
        // A device mapped to a connector that is not driven drives the first output, and the log says so.
        for rule in settings.devices.rules {
            if let mapped = rule.output, !outputs.contains(where: { $0.name.lowercased() == mapped.lowercased() }) {
                logger.warning("input.map: devices '\(rule.device)' belong to \(mapped), which is not driven here; they drive \(outputs[0].name)")
            }
        }
        let idle = settings.idle.isEnabled ? IdleMonitor(loop: loop, settings: settings.idle) : nil
        self.idle = idle
        var backlight: Backlight?
        if settings.idle.dimAfter != nil {
            do {
                backlight = try Backlight.find(in: settings.backlightDirectory, name: settings.backlightName)
                if backlight == nil { logger.info("no backlight in \(settings.backlightDirectory): idle dimming skipped") }
            } catch {
                logger.error("\(error); idle dimming skipped")
            }
        }
        self.backlight = backlight
        let routers = outputs.map { output in
            // Before a display is adopted the panel is the size the scene waits in, turned back by the rotation.
            let panel = output.engine.backend?.info.mode.size ?? output.rotation.sceneSize(forPanel: output.engine.rootLayer.frame.size)
            let mapping = InputMapping(panel: panel, rotation: output.rotation, calibration: settings.devices.calibration,
                                       output: output.engine.backend?.info.connector ?? output.name)
            let router = InputRouter(stage: output.stage, mapping: mapping, idle: idle)
            router.deviceRules = settings.devices
            router.cursorHideAfter = PointerCursor.defaultHideAfter
            router.cursorPlane = output.engine.backend.flatMap { Self.cursorPlane(for: $0, logger: logger) }
            return router
        }
        routing = OutputInputRouting(routers: routers, deviceRules: settings.devices)
        var source: LibinputSource?
        if let backend = settings.source {
            do {
                let opened = try LibinputSource(loop: loop, backend: backend, rules: settings.devices)
                source = opened
                logger.info("input: \(backend)\(settings.devices.calibration.map { ", calibration \($0)" } ?? "")")
            } catch {
                logger.error("input: \(error); running without input")
            }
        }
        self.source = source
        source?.onEvent = { [unowned self] event in routing.handle(event) }
        for router in routers {
            router.onReport = { [unowned self, unowned router] report in broadcast(report, output: router.mapping.output) }
        }
        idle?.onChange = { [unowned self] from, to, reason in idleChanged(from: from, to: to, reason: reason) }
        control?.statusExtras = { [weak self] in self?.status ?? [:] }
        control?.onOutputPower = { [weak self] on in
            guard let idle = self?.idle else { return }
            if on { idle.wake(reason: "display.power") } else { idle.blank(reason: "display.power") }
        }
    }

    func start() {
        do { try source?.start() } catch { logger.error("input: \(error); running without input") }
    }

    /// The output's cursor plane where it has one (atomic DRM); nil composites the cursor (headless, legacy
    /// commits, a driver without a cursor plane), and the log says why.
    private static func cursorPlane(for display: DisplayBackend, logger: Logger) -> CursorPlane? {
        guard let drm = display as? DRMBackend else { return nil }
        do {
            let plane = try DRMCursorPlane(backend: drm)
            logger.info("connector \(drm.info.connector): the pointer's cursor goes on cursor \(plane.name)")
            return plane
        } catch {
            logger.info("\(error)")
            return nil
        }
    }

    private static func json(_ matrix: CalibrationMatrix?) -> JSONValue {
        matrix.map { m in .array([m.a, m.b, m.c, m.d, m.e, m.f].map(JSONValue.double)) } ?? .null
    }

    /// Whether `output`'s pointer cursor is shown on a cursor plane now (scanout verification waits for it to hide).
    func cursorShownOnPlane(of output: DrivenOutput) -> Bool {
        guard let cursor = router(of: output).cursor else { return false }
        return cursor.path == .plane && cursor.isShown
    }

    /// Which way the pointer's cursor is shown, for `stats` and `output.info`.
    private var cursorStatus: JSONValue {
        let plane = router.cursor?.plane ?? (router.cursor == nil ? router.cursorPlane : nil)
        return [
            "path": .string(plane == nil ? PointerCursor.Path.composited.rawValue : PointerCursor.Path.plane.rawValue),
            "plane": plane.map { .string($0.name) } ?? .null,
            "shown": .bool(router.cursor?.isShown ?? false),
        ]
    }

    /// `idle` and `input` in `stats` and `output.info`.
    private var status: [String: JSONValue] {
        let input: JSONValue = [
            "source": source.map { .string($0.backend.description) } ?? .null,
            "devices": .array((source?.devices.values.map(\.name) ?? []).sorted().map(JSONValue.string)),
            "swallowed": .int(Int64(routing.routers.reduce(0) { $0 + $1.swallowedCount })),
            "cursor": cursorStatus,
            "calibration": Self.json(router.deviceRules.calibration),
            "map": .array(router.deviceRules.rules.map { rule in
                ["device": .string(rule.device), "output": rule.output.map(JSONValue.string) ?? .null,
                 "calibration": Self.json(rule.calibration)]
            }),
        ]
        guard let idle else { return ["input": input, "idle": ["state": "active", "enabled": false]] }
        return ["input": input, "idle": [
            "state": .string(idle.state.rawValue),
            "enabled": true,
            "scheduled_off": .bool(idle.isScheduledOff),
            "idle_seconds": .double((idle.idleSeconds * 1000).rounded() / 1000),
            "backlight": backlight.map { .string($0.path) } ?? .null,
        ]]
    }

    private func idleChanged(from: ScreenIdleState, to: ScreenIdleState, reason: String) {
        logger.info("screen \(from.rawValue) → \(to.rawValue) (\(reason))")
        do {
            switch to {
            case .dimmed:
                try backlight?.dim(to: idle?.settings.dimLevel ?? 1)
            case .blanked:
                try setPower(false)
            case .active:
                try setPower(true)
                try backlight?.restore()
            }
        } catch {
            logger.error("screen \(to.rawValue): \(error)")
            control?.server.broadcast(event: "error", data: ["code": "display_error", "message": .string("screen \(to.rawValue): \(error)")])
        }
        guard let server = control?.server, server.hasSubscribers("power") else { return }
        server.broadcast(event: "power", data: ["state": .string(to.rawValue), "previous": .string(from.rawValue), "reason": .string(reason)])
    }

    /// Every output's power (one output waiting for a display is left alone); the first failure is thrown after
    /// all were tried.
    private func setPower(_ on: Bool) throws {
        var failure: (any Error)?
        for output in outputs where output.engine.hasOutput {
            do { try output.engine.setOutputPower(on) } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
    }

    private func broadcast(_ report: InputReport, output: String) {
        if report.kind == .press, let action = report.action { fleet?.actionEmitted(action) }
        let server = control?.server
        let toSocket = server?.hasSubscribers("input") == true
        let toFleet = fleet?.publishes(event: "input") == true
        guard toSocket || toFleet else { return }
        func number(_ value: Double?) -> JSONValue { value.map { .double(($0 * 100).rounded() / 100) } ?? .null }
        let data: JSONValue = [
            "kind": .string(report.kind.rawValue),
            "id": report.id.map(JSONValue.string) ?? .null,
            "action": report.action.map(JSONValue.string) ?? .null,
            "x": number(report.x),
            "y": number(report.y),
            "output": .string(output),
            "key": report.key.map(JSONValue.string) ?? .null,
            "time_us": .int(Int64(clamping: report.timeMicroseconds)),
        ]
        if toSocket { server?.broadcast(event: "input", data: data) }
        if toFleet { fleet?.publish(event: "input", data: data) }
    }

}
