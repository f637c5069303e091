import KioskCore
import KioskDisplay
import KioskRender
import Logging

/// kioskd's outputs on DRM: the `OutputManager` that keeps the engine's output in step with the connectors, the
/// udev monitor whose hotplug events make it probe again, and where its changes go (`display` events on the
/// control socket, the service's status line). Started with the output `kioskd run` opened, or with none when
/// nothing was connected: then one line says kioskd waits. Lives on the main thread.
final class OutputWiring {
    let manager: OutputManager
    let monitor: DRMHotplugMonitor?
    /// Called with the output adopted (a display connected, or back with another mode): touch mapping follows it.
    var onAdopted: ((OutputInfo) -> Void)?
    /// Called when the output is let go (unplugged, or replaced by one with another mode), before another opens.
    var onDetached: (() -> Void)?

    init(source: DRMOutputSource, engine: LayerEngine, attached: (any DisplayBackend)?, rotation: OutputRotation,
         control: ControlWiring?, service: ServiceWiring, logger: Logger = Logger(label: "kioskd.outputs")) throws {
        let candidate = attached.map { OutputCandidate(device: $0.info.device, connector: $0.info.connector, mode: $0.info.mode) }
        // Opened before the source existed: what it holds on its card is the source's own output's, at a rescan.
        if let drm = attached as? DRMBackend { source.adopt(drm) }
        manager = OutputManager(engine: engine, source: source, attached: candidate) { mode in
            try ShadowCompositor(size: mode.size, rotation: rotation)
        }
        do {
            monitor = try DRMHotplugMonitor(loop: engine.loop)
        } catch {
            // Without the monitor kioskd keeps the output it has; it will not see displays come and go.
            logger.error("\(error); displays plugged in or out later are not noticed")
            monitor = nil
        }
        monitor?.onHotplug = { [manager] event in
            logger.debug("hotplug: \(event.action) \(event.device)\(event.connectorID.map { " connector \($0)" } ?? "")")
            manager.rescan()
        }
        control?.outputs = manager
        manager.onDetached = { [weak self] in self?.onDetached?() }
        manager.onEvent = { [weak self, weak control, weak service] event in
            control?.outputChanged(event)
            service?.outputChanged()
            switch event {
            case .connected(let info), .modeChanged(let info): self?.onAdopted?(info)
            case .disconnected: break
            }
        }
        // Fills the connector list for `display.info` and `stats`.
        manager.rescan()
        if attached == nil, manager.isWaiting { manager.startWaiting() }
    }
}
