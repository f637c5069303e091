import Foundation
import KioskCore

/// The scenes that ship with kioskd, in the KioskRuntime resource bundle (installed next to the binaries).
public enum BundledScenes {
    /// The folder holding `dashboard.yaml`, `signage-loop.yaml`, `hmi-panel.yaml` and their images.
    /// Installed: `/usr/share/kioskd/scenes`; in a build tree: the resource bundle next to the binary.
    public static var directory: String? {
        if let installed = InstalledData.directory("scenes") { return installed }
        // SwiftPM puts the bundle next to the binaries (the test runner's too), where `Bundle.module` looks first; it
        // is asked only when that fails, since it starts CoreFoundation's bundle machinery (InstalledData).
        if let bin = InstalledData.executableDirectory, InstalledData.isDirectory(bin + "/kioskd_KioskRuntime.resources/Scenes") {
            return bin + "/kioskd_KioskRuntime.resources/Scenes"
        }
        guard let base = Bundle.module.resourcePath else { return nil }
        let path = base + "/Scenes"
        return InstalledData.isDirectory(path) ? path : nil
    }

    /// The default scene: a dashboard with time and date, data cards, a ticker, a progress bar, a QR code and an
    /// image; shown when `kioskd run` is given no scene, and measured by `kioskd bench`.
    public static var defaultScene: String? {
        directory.map { $0 + "/dashboard.yaml" }
    }
}
