import Glibc

/// What the frame path does about a failed present, by errno class. See `PresentFailure.policy(for:)`.
public enum PresentPolicy: String, Sendable, CaseIterable {
    /// The device is busy (EBUSY, EAGAIN, EINTR) or the failure names no errno: give the buffer back and present
    /// again at the next vblank.
    case retryAtNextVblank = "retry_at_next_vblank"
    /// DRM master was lost (EACCES, EPERM), to a VT switch or another compositor: stop presenting, keep all
    /// state, regain master with backoff, then modeset again and redraw fully.
    case regainMaster = "regain_master"
    /// The device is gone (ENODEV): exit non-zero so the service manager restarts kioskd.
    case exit
    /// The kernel refused the configuration (EINVAL, ENOSPC, ERANGE): probe with TEST_ONLY and fall back (atomic to
    /// legacy, the requested mode to the preferred one).
    case fallBack = "fall_back"
}

/// A failed present, classified. A plain value; the classification is a pure function of the errno.
public struct PresentFailure: Sendable, Equatable, CustomStringConvertible {
    /// The errno the kernel returned, or nil when the failure was not a system call's (a present refused by the
    /// backend's own bookkeeping).
    public let errno: Int32?
    /// What the backend said, naming the object and the errno.
    public let message: String

    public init(errno: Int32?, message: String) {
        self.errno = errno
        self.message = message
    }

    /// Classifies an error thrown by `DisplayBackend.present`: a `OutputError` carries its errno.
    public init(_ error: any Error) {
        let display = error as? OutputError
        self.init(errno: display?.errno, message: display?.message ?? "\(error)")
    }

    public var policy: PresentPolicy { Self.policy(for: errno) }

    /// The errno's symbolic name (`EBUSY`), or `unknown`: the key `present_failures` counts under.
    public var errnoName: String { errno.map(KioskCore.errnoName) ?? "unknown" }

    public var description: String { message }

    /// errno -> policy.
    public static func policy(for errno: Int32?) -> PresentPolicy {
        switch errno {
        case EACCES, EPERM: .regainMaster
        case ENODEV: .exit
        case EINVAL, ENOSPC, ERANGE: .fallBack
        default: .retryAtNextVblank
        }
    }
}
