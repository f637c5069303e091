import CDRM
import Glibc
import KioskCore

/// Builds one atomic commit. The first failing `add` is remembered and reported by `commit`, so call sites stay a
/// straight list of properties and no error is lost. Owns its drmModeAtomicReq.
final class AtomicRequest {
    private let req: drmModeAtomicReqPtr
    private var failure: String?

    init() throws {
        guard let req = drmModeAtomicAlloc() else { throw OutputError("atomic request: out of memory") }
        self.req = req
    }

    deinit { drmModeAtomicFree(req) }

    func add(_ objectID: UInt32, _ property: UInt32?, _ value: UInt64, what: @autoclosure () -> String) {
        guard failure == nil else { return }
        guard let property else { failure = "\(what()): property missing"; return }
        if drmModeAtomicAddProperty(req, objectID, property, value) < 0 {
            failure = "\(what()): drmModeAtomicAddProperty failed"
        }
    }

    /// Commits with `flags` (DRM_MODE_ATOMIC_*, DRM_MODE_PAGE_FLIP_EVENT). Returns the errno on failure.
    func commit(fd: Int32, flags: UInt32, userData: UnsafeMutableRawPointer?) -> Result<Void, OutputError> {
        if let failure { return .failure(OutputError(failure)) }
        let rc = drmModeAtomicCommit(fd, req, flags, userData)
        if rc != 0 {
            let e = rc < 0 ? -rc : errno
            return .failure(OutputError(errnoDescription(e), errno: e))
        }
        return .success(())
    }
}
