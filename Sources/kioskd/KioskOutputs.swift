import KioskCore
import KioskDisplay
import KioskRender
import KioskRuntime
import KioskScene
import Logging

/// One output of several as the control socket, input and the service see it: its connector, the slot's engine and
/// manager, the stage showing its scene, its rotation and its flip counters. Lives on the main thread.
final class DrivenOutput {
    let connector: String
    let engine: LayerEngine
    let manager: OutputManager
    let runner: SceneRunner
    let rotation: OutputRotation
    /// Flips completed on this output (the first output's are the run session's).
    var flips: () -> FlipStatistics
    /// The engine's flips, while this output counts its own (`countFlips`).
    private var flipListener: ListenerToken?

    var stage: SceneStage { runner.stage }

    init(slot: OutputSlots.Slot, runner: SceneRunner, rotation: OutputRotation) {
        connector = slot.connector
        engine = slot.engine
        manager = slot.manager
        self.runner = runner
        self.rotation = rotation
        flips = { FlipStatistics() }
    }

    /// Counts this output's flips itself, for an output whose engine no run session counts.
    func countFlips() {
        var counted = FlipStatistics()
        flipListener = engine.addFlipListener { event in counted.record(event) }
        flips = { counted }
    }
}

/// `kioskd run` with an `outputs:` section: one `OutputSlots` slot per entry (its own source naming that entry's
/// connector and mode, its own compositor at the entry's rotation, its own engine) and one scene per slot, the
/// entry's scene or the kiosk's scene mirrored (`OutputStages`). On DRM the udev monitor's hotplugs make every slot
/// probe again. Lives on the main thread.
final class MultiOutputWiring {
    /// One `outputs:` entry with the run's defaults filled in. A plain value.
    struct Entry {
        var connector: String
        var mode: ModeRequest?
        var rotation: OutputRotation
        var scenePath: String
    }

    let slots: OutputSlots
    let stages: OutputStages
    let outputs: [DrivenOutput]
    let monitor: DRMHotplugMonitor?
    /// Called with the slot whose output changed (`display` events, the service's status, input mapping).
    var onEvent: ((DrivenOutput, OutputEvent) -> Void)?
    /// Called right after a slot's output is let go, before another opens.
    var onDetached: ((DrivenOutput) -> Void)?

    var first: DrivenOutput { outputs[0] }

    /// The entries of `config` with the run's defaults: a mode or rotation an entry leaves out is the run's (options,
    /// board file), a scene it leaves out (or `default`) the run's scene, mirrored.
    static func entries(_ config: [KioskConfig.Output], settings: RunCommand.Settings) -> [Entry] {
        config.map { output in
            Entry(connector: output.connector, mode: output.mode ?? settings.mode, rotation: output.rotation ?? settings.rotation,
                  scenePath: output.scene.flatMap { $0 == "default" ? nil : $0 } ?? settings.scenePath)
        }
    }

    /// Builds the slots and their scenes. Nothing is adopted yet: `start` probes.
    ///
    /// - Parameters:
    ///   - source: the source that probes and opens one entry's connector alone.
    ///   - runner: the scene runner of one slot's engine, for the scene file given.
    init(entries: [Entry], loop: MainLoop, pool: RenderQueuePool, hotplug: Bool,
         source: (Entry) -> any OutputSource,
         runner: (LayerEngine, String) throws -> SceneRunner, logger: Logger) throws {
        let rotations = Dictionary(uniqueKeysWithValues: entries.map { ($0.connector, $0.rotation) })
        slots = try OutputSlots(loop: loop, pool: pool, entries: entries.map { entry in
            // Until a display is adopted, the tree is laid out in the mode asked for (else 1024x768).
            let panel = entry.mode.map { Size(width: $0.width, height: $0.height) } ?? Size(width: 1024, height: 768)
            return OutputSlots.Entry(connector: entry.connector, source: source(entry), sceneSize: entry.rotation.sceneSize(forPanel: panel))
        }) { connector, mode in
            try ShadowCompositor(size: mode.size, rotation: rotations[connector] ?? .degrees0)
        }
        var runners: [String: SceneRunner] = [:]
        for (slot, entry) in zip(slots.slots, entries) {
            runners[slot.connector] = try runner(slot.engine, entry.scenePath)
        }
        stages = OutputStages(slots: slots) { slot in runners[slot.connector]!.stage }
        outputs = slots.slots.map { slot in DrivenOutput(slot: slot, runner: runners[slot.connector]!, rotation: rotations[slot.connector]!) }
        if hotplug {
            do {
                monitor = try DRMHotplugMonitor(loop: loop)
            } catch {
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
            guard let self, let output = outputs.first(where: { $0.connector == slot.connector }) else { return }
            onEvent?(output, event)
        }
        // Every output but the first counts its own flips; the run session counts the first's.
        for output in outputs.dropFirst() { output.countFlips() }
    }

    /// Probes every slot once and adopts what is connected. A slot whose connector no card has is said so, with the
    /// connectors there are (the config file cannot know them: `check-config` does not): it waits, as a card that
    /// appears later (a USB display) may bring it.
    func start(logger: Logger) {
        slots.rescan()
        let seen = outputs.flatMap { $0.manager.connectors.map(\.name) }
        for output in outputs where output.manager.isWaiting {
            guard !seen.contains(where: { $0.lowercased() == output.connector.lowercased() }) else { continue }
            logger.error("outputs: no connector named \(output.connector)\(seen.isEmpty ? "" : " (connectors: \(Set(seen).sorted().joined(separator: ", ")))"); it waits in case one appears")
        }
    }

    /// The output named `connector` (case-insensitive), the first for nil.
    ///
    /// - Throws: `DisplayError` naming the outputs driven.
    func output(named connector: String?) throws -> DrivenOutput {
        guard let connector else { return first }
        guard let found = outputs.first(where: { $0.connector.lowercased() == connector.lowercased() }) else {
            throw DisplayError("no output named '\(connector)'; outputs: \(outputs.map(\.connector).joined(separator: ", "))")
        }
        return found
    }

    /// Stops every engine but the first, which the run stops with its own statistics.
    func stopOthers() {
        for output in outputs.dropFirst() { output.engine.stop() }
    }
}
