/// Several outputs: one slot per connector in use, each its own `LayerEngine` (compositor, scanout buffers, CRTC,
/// flip pacing at its own mode's rate, counters) with its own tree laid out for its own mode, and its own
/// `OutputManager` that keeps that engine's output in step with its connector (adopted when plugged in, detached
/// when unplugged, laid out again for another mode). The slots share the main loop and the render pool: renders
/// from every slot queue on the same workers, and each slot's results come back through its engine's own inbox.
/// One slot's output coming or going touches no other slot.
///
/// Lives on the main thread with the loop and the engines.
public final class OutputSlots {
    /// One connector's engine and the manager that keeps its output in step. Main thread.
    public final class Slot {
        /// The connector this slot drives (`HDMI-A-1`); nil for a sole slot that drives the first connected one.
        public let connector: String?
        public let engine: LayerEngine
        public let manager: OutputManager

        /// The name the output goes by in commands, events and state: the connector named, else the one adopted
        /// (the last one while none is), else the first its probes saw (the one it waits on), else `auto`.
        public var name: String { connector ?? lastAdopted ?? manager.connectors.first?.name ?? "auto" }
        /// The connector adopted last, for a slot that names none.
        fileprivate var lastAdopted: String?

        init(connector: String?, engine: LayerEngine, manager: OutputManager) {
            self.connector = connector
            self.engine = engine
            self.manager = manager
        }
    }

    /// What one slot is made from: its connector (nil: the first connected, for a sole slot), the source that
    /// probes and opens only that connector (under that output's mode request), and the size its tree is laid out
    /// in until a display is adopted.
    public struct Entry {
        public var connector: String?
        public var source: any OutputSource
        public var sceneSize: Size
        public var frameDuration: Duration

        public init(connector: String?, source: any OutputSource, sceneSize: Size, frameDuration: Duration = .milliseconds(16)) {
            self.connector = connector
            self.source = source
            self.sceneSize = sceneSize
            self.frameDuration = frameDuration
        }
    }

    /// The slots in the order given; the first is the one commands address when they name no output.
    public let slots: [Slot]
    /// Called after each change of a slot's output, with the slot: `display` events per output.
    public var onEvent: ((Slot, OutputEvent) -> Void)?

    /// Makes one engine per entry on `loop`, sharing `pool`, and starts each (without an output: the first
    /// `rescan` adopts what is connected).
    ///
    /// - Throws: `OutputError` when no entry is given, a connector is named twice (in any case), or an entry
    ///   beside others names none; what the engine's creation throws (the loop's waker).
    public init(loop: MainLoop, pool: RenderQueuePool, entries: [Entry],
                makeCompositor: @escaping (_ entry: Int, OutputMode) throws -> any Compositing) throws {
        guard !entries.isEmpty else { throw OutputError("outputs: no output given") }
        var seen = Set<String>()
        for entry in entries {
            guard let connector = entry.connector else {
                guard entries.count == 1 else { throw OutputError("outputs: an output beside others must name its connector") }
                continue
            }
            guard seen.insert(connector.lowercased()).inserted else {
                throw OutputError("outputs: connector \(connector) is named twice")
            }
        }
        slots = try entries.enumerated().map { index, entry in
            let engine = try LayerEngine(loop: loop, sceneSize: entry.sceneSize, frameDuration: entry.frameDuration, pool: pool)
            try engine.start()
            let manager = OutputManager(engine: engine, source: entry.source, attached: nil) { mode in
                try makeCompositor(index, mode)
            }
            return Slot(connector: entry.connector, engine: engine, manager: manager)
        }
        for slot in slots {
            slot.manager.onEvent = { [weak self, unowned slot] event in
                switch event {
                case .connected(let info), .modeChanged(let info): slot.lastAdopted = info.connector
                case .disconnected: break
                }
                self?.onEvent?(slot, event)
            }
        }
    }

    /// The slot commands address when they name no output.
    public var first: Slot { slots[0] }

    /// Every slot probes and brings its output in line with its connector (at start and on every hotplug).
    public func rescan() {
        for slot in slots { slot.manager.rescan() }
    }

    /// The slot whose output is named `name` (`Slot.name`, in any case); the first slot for nil. The one lookup of
    /// an output by name: commands, input mapping and stages all go through it.
    ///
    /// - Throws: `OutputError` naming the outputs driven when none is `name`.
    public func slot(named name: String?) throws -> Slot {
        guard let name else { return first }
        guard let slot = slots.first(where: { $0.name.lowercased() == name.lowercased() }) else {
            throw OutputError("no output named '\(name)'; outputs: \(slots.map(\.name).joined(separator: ", "))")
        }
        return slot
    }

    /// Stops every engine (at a frame boundary each) and releases their outputs.
    public func stop() {
        for slot in slots {
            slot.engine.stop()
            slot.engine.detachOutput()
        }
    }
}
