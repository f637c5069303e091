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
        /// The connector this slot drives (`HDMI-A-1`).
        public let connector: String
        public let engine: LayerEngine
        public let manager: OutputManager

        init(connector: String, engine: LayerEngine, manager: OutputManager) {
            self.connector = connector
            self.engine = engine
            self.manager = manager
        }
    }

    /// What one slot is made from: its connector, the source that probes and opens only that connector (under
    /// that output's mode request), and the size its tree is laid out in until a display is adopted.
    public struct Entry {
        public var connector: String
        public var source: any OutputSource
        public var sceneSize: Size
        public var frameDuration: Duration

        public init(connector: String, source: any OutputSource, sceneSize: Size, frameDuration: Duration = .milliseconds(16)) {
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
    /// - Throws: `DisplayError` when no entry is given or a connector is named twice; what the engine's creation
    ///   throws (the loop's waker).
    public init(loop: MainLoop, pool: RenderQueuePool, entries: [Entry],
                makeCompositor: @escaping (_ connector: String, DisplayMode) throws -> any Compositing) throws {
        guard !entries.isEmpty else { throw DisplayError("several outputs: no connector given") }
        var seen = Set<String>()
        for entry in entries where !seen.insert(entry.connector).inserted {
            throw DisplayError("several outputs: connector \(entry.connector) is named twice")
        }
        slots = try entries.map { entry in
            let engine = try LayerEngine(loop: loop, sceneSize: entry.sceneSize, frameDuration: entry.frameDuration, pool: pool)
            try engine.start()
            let manager = OutputManager(engine: engine, source: entry.source, attached: nil) { mode in
                try makeCompositor(entry.connector, mode)
            }
            return Slot(connector: entry.connector, engine: engine, manager: manager)
        }
        for slot in slots {
            slot.manager.onEvent = { [weak self, unowned slot] event in self?.onEvent?(slot, event) }
        }
    }

    /// The slot commands address when they name no output.
    public var first: Slot { slots[0] }

    /// Every slot probes and brings its output in line with its connector (at start and on every hotplug).
    public func rescan() {
        for slot in slots { slot.manager.rescan() }
    }

    /// The slot driving `connector`; nil for the first slot.
    ///
    /// - Throws: `DisplayError` naming the connectors driven when none is `connector`.
    public func slot(named connector: String?) throws -> Slot {
        guard let connector else { return first }
        guard let slot = slots.first(where: { $0.connector == connector }) else {
            throw DisplayError("no output named '\(connector)'; outputs: \(slots.map(\.connector).joined(separator: ", "))")
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
