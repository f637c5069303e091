import CUdev
import Glibc
import KioskCore
import Logging

/// Hears the kernel say that displays changed: a libudev monitor on the drm subsystem, its fd a source on the main
/// loop. It listens where udevd runs on the "udev" netlink group (events after udevd processed them, so device
/// nodes exist), and on the "kernel" group where it does not (a minimal initramfs, a VM without udevd).
///
/// `onHotplug` runs on the main thread for a `change` event carrying `HOTPLUG=1` (the connector named by
/// `CONNECTOR=` where the kernel gives one), and for an `add` of a card node (a USB display, a driver loaded late).
/// kioskd reacts to these events only; it never polls connectors on a timer.
///
/// The udev context and monitor are owned here and released in `deinit`. Main thread.
public final class DRMHotplugMonitor {
    /// A hotplug the monitor heard. A plain value.
    public struct Event: Sendable, Equatable {
        /// `change` or `add`.
        public var action: String
        /// The device's sysname (`card0`).
        public var device: String
        /// The connector id from `CONNECTOR=`, when the kernel named one.
        public var connectorID: UInt32?
    }

    /// Which netlink group is heard: `udev` or `kernel`.
    public let group: String
    public var onHotplug: ((Event) -> Void)?
    /// Events heard so far that were hotplugs (telemetry; tests read it).
    public private(set) var hotplugs = 0
    private let udev: OpaquePointer
    private let monitor: OpaquePointer
    private var source: SourceHandle?
    private let logger = Logger(label: "kioskd.hotplug")

    /// - Parameter group: `udev` or `kernel`; nil chooses `udev` when udevd runs (`/run/udev/control` exists).
    /// - Throws: `OutputError` naming the step and errno when the monitor cannot be made.
    public init(loop: MainLoop, group: String? = nil) throws {
        let chosen = group ?? (access("/run/udev/control", F_OK) == 0 ? "udev" : "kernel")
        guard let udev = udev_new() else { throw OutputError("udev: cannot create a context: \(errnoDescription(errno))", errno: errno) }
        guard let monitor = udev_monitor_new_from_netlink(udev, chosen) else {
            let e = errno
            udev_unref(udev)
            throw OutputError("udev monitor (\(chosen) events): cannot create it: \(errnoDescription(e))", errno: e)
        }
        self.udev = udev
        self.monitor = monitor
        self.group = chosen
        var status = udev_monitor_filter_add_match_subsystem_devtype(monitor, "drm", nil)
        if status >= 0 { status = udev_monitor_enable_receiving(monitor) }
        guard status >= 0 else {
            throw OutputError("udev monitor (\(chosen) events): cannot listen to the drm subsystem: \(errnoDescription(-status))", errno: -status)
        }
        let fd = udev_monitor_get_fd(monitor)
        source = try loop.addSource(fd: fd, events: .readable) { [weak self] _ in self?.receive() }
        logger.info("watching drm hotplug events (\(chosen) netlink group)")
    }

    deinit {
        source?.cancel()
        udev_monitor_unref(monitor)
        udev_unref(udev)
    }

    /// Reads every event queued (the monitor's fd is non-blocking), then reports the hotplugs among them.
    private func receive() {
        while let device = udev_monitor_receive_device(monitor) {
            defer { udev_device_unref(device) }
            let action = udev_device_get_action(device).map { String(cString: $0) } ?? ""
            let sysname = udev_device_get_sysname(device).map { String(cString: $0) } ?? "?"
            func property(_ key: String) -> String? { udev_device_get_property_value(device, key).map { String(cString: $0) } }
            let isCard = sysname.hasPrefix("card") && !sysname.contains("-")
            let isHotplug = (action == "change" && property("HOTPLUG") == "1") || (action == "add" && isCard)
            logger.debug("uevent \(action) \(sysname)\(isHotplug ? " (hotplug)" : "")")
            guard isHotplug else { continue }
            hotplugs += 1
            onHotplug?(Event(action: action, device: sysname, connectorID: property("CONNECTOR").flatMap { UInt32($0) }))
        }
    }
}
