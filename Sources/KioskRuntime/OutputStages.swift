import KioskCore
import KioskScene

/// The scene side of several outputs: one `SceneStage` per output slot, on that slot's engine, laid out for that
/// slot's mode (and again when its display changes mode). A slot shows the default scene mirrored (the same
/// scene, each stage laying it out for its own size) or a scene of its own. Data is the kiosk's, not an
/// output's: `setData` reaches every stage. Commands that name an output reach that slot's stage; without one,
/// the first slot's (`stage(for:)`).
///
/// Lives on the main thread with the slots.
public final class OutputStages {
    /// Each slot and its stage, in the slots' order.
    public let stages: [(slot: OutputSlots.Slot, stage: SceneStage)]
    private let slots: OutputSlots

    /// Makes a stage per slot with the scene `scene(slot)` gives it (nil: `defaultScene`, mirrored).
    public init(slots: OutputSlots, defaultScene: Scene, source: String, limits: SceneLimits = SceneLimits(),
                clock: @escaping () -> WallTime = WallClock.now,
                scene: (OutputSlots.Slot) -> (scene: Scene, source: String)? = { _ in nil }) {
        self.slots = slots
        stages = slots.slots.map { slot in
            let chosen = scene(slot) ?? (defaultScene, source)
            return (slot, SceneStage(engine: slot.engine, scene: chosen.scene, source: chosen.source, limits: limits, clock: clock))
        }
    }

    /// Takes a stage per slot made elsewhere (`stage(slot)` on each slot's engine: kioskd's runners, which also
    /// watch their scene files and show the diagnostic page for one that cannot be shown).
    public init(slots: OutputSlots, stage: (OutputSlots.Slot) throws -> SceneStage) rethrows {
        self.slots = slots
        stages = try slots.slots.map { slot in (slot, try stage(slot)) }
    }

    /// The stage of the output named `name` (in any case), the first one's for nil.
    ///
    /// - Throws: `OutputError` naming the outputs when none is `name` (`OutputSlots.slot(named:)`).
    public func stage(for name: String?) throws -> SceneStage {
        let slot = try slots.slot(named: name)
        return stages.first { $0.slot === slot }!.stage
    }

    /// Sets data on every output's stage: on all, or, when one refuses it (`DataLimits`), on none.
    public func setData(_ values: [String: String]) throws(StageError) {
        for entry in stages {
            if let problem = entry.stage.dataLimits.problem(values, existing: entry.stage.data(keys: nil)) { throw problem }
        }
        for entry in stages { try entry.stage.setData(values) }
    }
}
