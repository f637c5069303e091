import Glibc
import KioskDisplay
import KioskScene
import Logging

/// `--backend auto`: which backend a run uses. Main thread, before the loop starts.
extension KioskConfig.Backend {
    /// The framebuffer device used when `--fbdev` is not given.
    public static let defaultFramebuffer = "/dev/fb0"

    /// `requested` as given, or for `auto` (and no choice at all): `fbdev` when no DRM card was asked for
    /// (`--device` or `--driver`, here or in the board file), there is none (`/dev/dri/card*`), and the framebuffer
    /// device (`--fbdev`, else /dev/fb0) exists; else `drm`, whose errors then say what is missing.
    public static func resolve(_ requested: Self?, fbdev: String?, drmRequested: Bool, logger: Logger) -> Self {
        if let requested, requested != .auto { return requested }
        if drmRequested { return .drm }
        let chosen = choose(cards: DRMCard.cardPaths(), framebufferExists: access(fbdev ?? defaultFramebuffer, F_OK) == 0)
        if chosen == .fbdev {
            logger.notice("no DRM card (/dev/dri/card*); using the framebuffer \(fbdev ?? defaultFramebuffer)")
        }
        return chosen
    }

    /// The rule of `auto`, as a pure function: a DRM card always wins; without one, a framebuffer device.
    public static func choose(cards: [String], framebufferExists: Bool) -> Self {
        cards.isEmpty && framebufferExists ? .fbdev : .drm
    }
}
