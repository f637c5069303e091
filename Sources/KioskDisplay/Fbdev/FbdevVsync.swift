import CKioskShims
import Glibc
import KioskCore

/// FBIO_WAITFORVSYNC for the fbdev backend, without blocking the main loop: each wait runs as one job on a serial
/// background queue (`BackgroundJobs`) and its answer comes back to the loop. A wait is asked for only while a
/// flip is pending, so an idle kiosk causes no wake-ups. Main thread; only the fd holder and the answer cross.
final class FbdevVsync {
    /// What one wait came back with.
    enum Answer: Sendable {
        /// The vsync happened at about this time (read right after the ioctl returned).
        case vsync(MonotonicInstant)
        /// The driver has no FBIO_WAITFORVSYNC (ENOTTY, EINVAL) or could not wait (EBUSY while a DRM master holds
        /// the device under fbdev emulation, ...).
        case failed(Int32)
    }

    /// A duplicate of the device's fd, closed when the last wait holding it is done: a wait may still be in the
    /// kernel when the backend stops.
    private final class Descriptor: Sendable {
        let fd: Int32
        init(fd: Int32) { self.fd = fd }
        deinit { close(fd) }
    }

    private let descriptor: Descriptor
    private let jobs: BackgroundJobs
    /// Moves on whenever pending answers must be ignored (a stop, a flip forgotten or completed without its vsync).
    private var generation = 0
    private(set) var isWaiting = false

    /// - Throws: `OutputError` when the fd cannot be duplicated or the loop gives no waker.
    init(device: FbdevDevice, loop: MainLoop) throws {
        let fd = fcntl(device.fd, F_DUPFD_CLOEXEC, 0)
        guard fd >= 0 else {
            let e = errno
            throw OutputError("framebuffer \(device.name): duplicating its fd for vsync waits failed: \(errnoDescription(e))", errno: e)
        }
        descriptor = Descriptor(fd: fd)
        jobs = try BackgroundJobs(loop: loop, label: "kioskd.fbdev.vsync")
    }

    /// Waits for the next vsync on the queue; `then` runs on the main loop with the answer, unless `cancel` came
    /// first.
    func waitForNext(then answered: @escaping (Answer) -> Void) {
        let descriptor = self.descriptor
        let generation = self.generation
        isWaiting = true
        jobs.run({ () -> Answer in
            kiosk_fb_wait_for_vsync(descriptor.fd) == 0 ? .vsync(MonotonicInstant.now()) : .failed(errno)
        }, then: { [weak self] answer in
            guard let self, self.generation == generation else { return }
            self.isWaiting = false
            answered(answer)
        })
    }

    /// Ignores the answer of a wait under way.
    func cancel() {
        generation += 1
        isWaiting = false
    }
}
