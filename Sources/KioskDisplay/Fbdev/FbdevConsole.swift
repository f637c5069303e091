import CKioskShims
import Glibc
import KioskCore
import Logging

/// The virtual terminal in front while kioskd drives a framebuffer, switched to graphics mode (KDSETMODE
/// KD_GRAPHICS) so the framebuffer console stops drawing text and its blinking cursor over the kiosk, and put back
/// in the mode it had when kioskd lets go. DRM needs none of this: DRM master already keeps the console's fbdev
/// emulation off the screen. Without a VT to switch (no /dev/tty0, no permission, a board without VT support)
/// kioskd goes on and says so once. Single owner of the tty fd; main thread.
final class FbdevConsole {
    private let fd: Int32
    private let savedMode: Int32
    private let path: String

    /// Switches `path` (the active VT, /dev/tty0) to graphics mode, or returns nil after logging why it could not.
    init?(path: String = "/dev/tty0", logger: Logger) {
        let fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else {
            logger.notice("\(path): cannot open (\(errnoDescription(errno))); the framebuffer console may draw over the kiosk")
            return nil
        }
        var mode: Int32 = 0
        guard kiosk_kd_get_mode(fd, &mode) == 0, kiosk_kd_set_mode(fd, Int32(KD_GRAPHICS)) == 0 else {
            logger.notice("\(path): switching to graphics mode failed (\(errnoDescription(errno))); the framebuffer console may draw over the kiosk")
            close(fd)
            return nil
        }
        self.fd = fd
        self.savedMode = mode
        self.path = path
    }

    deinit {
        _ = kiosk_kd_set_mode(fd, savedMode)
        close(fd)
    }
}
