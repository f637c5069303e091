import Glibc
import KioskDisplay
import Logging

/// `--backend auto`: which backend a run uses. Main thread, before the loop starts.
extension BackendKind {
    /// The framebuffer device used when `--fbdev` is not given.
    static let defaultFramebuffer = "/dev/fb0"

    /// `requested` as given, or for `auto` (and no choice at all): `fbdev` when no DRM card was asked for
    /// (`--device` or `--driver`, here or in the board file), there is none (`/dev/dri/card*`), and the framebuffer
    /// device (`--fbdev`, else /dev/fb0) exists; else `drm`, whose errors then say what is missing.
    static func resolve(_ requested: BackendKind?, fbdev: String?, drmRequested: Bool, logger: Logger) -> BackendKind {
        if let requested, requested != .auto { return requested }
        if drmRequested { return .drm }
        let chosen = choose(cards: DRMCard.cardPaths(), framebufferExists: access(fbdev ?? defaultFramebuffer, F_OK) == 0)
        if chosen == .fbdev {
            logger.notice("no DRM card (/dev/dri/card*); using the framebuffer \(fbdev ?? defaultFramebuffer)")
        }
        return chosen
    }

    /// The rule of `auto`, as a pure function: a DRM card always wins; without one, a framebuffer device.
    static func choose(cards: [String], framebufferExists: Bool) -> BackendKind {
        cards.isEmpty && framebufferExists ? .fbdev : .drm
    }
}
