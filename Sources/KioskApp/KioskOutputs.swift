import KioskCore
import KioskDisplay
import KioskRender
import KioskRuntime
import KioskScene
import Logging

/// One output as the control socket, input, the fleet and the service see it: its slot (name, engine, manager), the
/// scene runner showing its scene, its rotation and its flip counters. Lives on the main thread.
final class DrivenOutput {
    let slot: OutputSlots.Slot
    let runner: SceneRunner
    let rotation: OutputRotation
    /// Flips completed on this output since it started.
    private(set) var flips = FlipStatistics()
    private var flipListener: ListenerToken?

    /// The name commands, events and state give it (`OutputSlots.Slot.name`).
    var name: String { slot.name }
    var engine: LayerEngine { slot.engine }
    var manager: OutputManager { slot.manager }
    var stage: SceneStage { runner.stage }

    init(slot: OutputSlots.Slot, runner: SceneRunner, rotation: OutputRotation) {
        self.slot = slot
        self.runner = runner
        self.rotation = rotation
        flipListener = slot.engine.addFlipListener { [unowned self] event in flips.record(event) }
    }
}

/// The outputs of `kioskd run`: one `OutputSlots` slot per output (its own source naming that output's connector and
/// mode, its own compositor at the output's rotation, its own engine) and one scene per slot, the output's scene or
/// the kiosk's scene mirrored (`OutputStages`). One output is a list of one: without an `outputs:` section the
/// run's connector (or the first connected), mode, rotation and scene make the only entry. On DRM the udev
/// monitor's hotplugs make every slot probe again. Lives on the main thread.
final class KioskOutputs {
    /// One output with the run's defaults filled in. A plain value.
    struct Entry: Equatable {
        /// nil: the first connected (a sole output only).
        var connector: String?
        var mode: ModeRequest?
        var rotation: OutputRotation
        var scenePath: String
        /// This output's place in a video wall; nil shows the scene whole.
        var wall: WallSettings? = nil
    }

    let slots: OutputSlots
    let stages: OutputStages
    let outputs: [DrivenOutput]
    let monitor: DRMHotplugMonitor?
    /// Called with the output that changed (`display` events, the service's status, input mapping, planes).
    var onEvent: ((DrivenOutput, OutputEvent) -> Void)?
    /// Called right after an output's display is let go, before another opens.
    var onDetached: ((DrivenOutput) -> Void)?

    /// The output commands address when they name none; the one `--frames`, `--screenshot`, `--capture` and
    /// `--stats-out` speak of.
    var first: DrivenOutput { outputs[0] }

    /// The outputs a run drives: the `outputs:` section with the run's defaults (a mode or rotation an entry leaves
    /// out is the run's, a scene it leaves out, or `default`, the run's scene, mirrored), or without one the run's
    /// own connector, mode, rotation and scene as the only entry. An entry's `wall:` is its own, else the run's.
    static func entries(_ config: [KioskConfig.Output], connector: String?, mode: ModeRequest?, rotation: OutputRotation,
                        scenePath: String, wall: WallSettings? = nil) -> [Entry] {
        guard !config.isEmpty else { return [Entry(connector: connector, mode: mode, rotation: rotation, scenePath: scenePath, wall: wall)] }
        return config.map { output in
            Entry(connector: output.connector, mode: output.mode ?? mode, rotation: output.rotation ?? rotation,
                  scenePath: output.scene.flatMap { $0 == "default" ? nil : $0 } ?? scenePath, wall: output.wall ?? wall)
        }
    }

    /// Builds the slots and their scenes. Nothing is adopted yet: `start` probes.
    ///
    /// - Parameters:
    ///   - source: the source that probes and opens one entry's connector alone, and what it found at start (the
    ///     tree is laid out for the mode it chose, else for the mode asked for, else 1024x768).
    ///   - runner: the scene runner of one slot's engine, for the entry's scene file and wall.
    init(entries: [Entry], loop: MainLoop, pool: RenderQueuePool, hotplug: Bool,
         source: (Entry) throws -> (any OutputSource, OutputProbe),
         runner: (LayerEngine, Entry) throws -> SceneRunner, logger: Logger) throws {
        slots = try OutputSlots(loop: loop, pool: pool, entries: entries.map { entry in
            let (source, probe) = try source(entry)
            let panel = probe.choice?.mode.size ?? entry.mode.map { Size(width: $0.width, height: $0.height) } ?? Size(width: 1024, height: 768)
            return OutputSlots.Entry(connector: entry.connector, source: source, sceneSize: entry.rotation.sceneSize(forPanel: panel))
        }) { index, mode in
            try ShadowCompositor(size: mode.size, rotation: entries[index].rotation)
        }
        outputs = try zip(slots.slots, entries).map { slot, entry in
            DrivenOutput(slot: slot, runner: try runner(slot.engine, entry), rotation: entry.rotation)
        }
        stages = OutputStages(slots: slots) { [outputs] slot in outputs.first { $0.slot === slot }!.stage }
        if hotplug {
            do {
                monitor = try DRMHotplugMonitor(loop: loop)
            } catch {
                // Without the monitor each output keeps what it has; it will not see displays come and go.
                logger.error("\(error); displays plugged in or out later are not noticed")
                monitor = nil
            }
        } else {
            monitor = nil
        }
        monitor?.onHotplug = { [slots] event in
            logger.debug("hotplug: \(event.action) \(event.device)\(event.connectorID.map { " connector \($0)" } ?? "")")
            slots.rescan()
        }
        for output in outputs {
            output.manager.onDetached = { [weak self, unowned output] in self?.onDetached?(output) }
        }
        slots.onEvent = { [weak self] slot, event in
            guard let self, let output = outputs.first(where: { $0.slot === slot }) else { return }
            onEvent?(output, event)
        }
    }

    /// Every output probes once and adopts what is connected; one with nothing connected waits for a display, and
    /// one line says so.
    func start() {
        slots.rescan()
        for output in outputs where output.manager.isWaiting && !output.manager.connectors.contains(where: \.isConnected) {
            output.manager.startWaiting()
        }
    }

    /// The output named `name` (in any case, `OutputSlots.slot(named:)`), the first for nil.
    ///
    /// - Throws: `OutputError` naming the outputs driven.
    func output(named name: String?) throws -> DrivenOutput {
        let slot = try slots.slot(named: name)
        return outputs.first { $0.slot === slot }!
    }

    /// Whether every output's frame path is healthy (the watchdog's signal): the first unhealthy output's health,
    /// else the first output's with a reason other than `ok` (a black screen reported but not restarting), else the
    /// first output's.
    var health: FrameHealth {
        let all = outputs.map(\.engine.health)
        return all.first { !$0.isHealthy } ?? all.first { $0.reason != "ok" } ?? all[0]
    }

    /// Stops every engine (at a frame boundary each).
    func stop() {
        for output in outputs { output.engine.stop() }
    }

    /// Lets every output's display go.
    func detach() {
        for output in outputs { output.engine.detachOutput() }
    }
}
