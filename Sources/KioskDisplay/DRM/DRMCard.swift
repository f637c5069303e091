import CDRM
import Glibc
import KioskCore

/// An open DRM card node (`/dev/dri/cardN`). Owns the file descriptor and closes it in `deinit`.
/// Lives on the main thread, which owns all KMS state.
///
/// Outputs open their card with `shared(path:)`: every output on one card uses one open card, since DRM master
/// belongs to one open file description, and shares its `session`. The registry holds cards weakly, so a card
/// closes (and releases master) when its last output and buffer let it go.
public final class DRMCard {
    public let path: String
    public let fd: Int32
    /// The kernel driver's name (`vkms`, `vc4`, `i915`).
    public let driver: String
    public let driverDescription: String
    /// What the outputs on this card share: event dispatch, master, the objects each holds.
    public let session: DRMCardSession

    /// Opens `path` read-write. Does not take DRM master; see `becomeMaster()`.
    public init(path: String) throws {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw OutputError("device \(path): open failed: \(errnoDescription(errno))") }
        guard let version = drmGetVersion(fd) else {
            let e = errno
            close(fd)
            throw OutputError("device \(path): not a DRM device (drmGetVersion failed: \(errnoDescription(e)))")
        }
        self.path = path
        self.fd = fd
        self.driver = version.pointee.name.map { String(cString: $0) } ?? "unknown"
        self.driverDescription = version.pointee.desc.map { String(cString: $0) } ?? ""
        drmFreeVersion(version)
        self.session = DRMCardSession(fd: fd, path: path)
    }

    deinit {
        Self.forget(self)
        close(fd)
    }

    /// A card held weakly by the registry.
    private struct Entry {
        weak var card: DRMCard?
    }

    /// Open shared cards by device number (so two paths to one card share it too). Main thread only.
    private nonisolated(unsafe) static var registry: [UInt64: Entry] = [:]

    /// The card at `path`, opened once per process: while any output (or buffer) holds it, every caller gets the
    /// same open card. Errors name the path and errno.
    public static func shared(path: String) throws -> DRMCard {
        var st = stat()
        if stat(path, &st) == 0, let card = registry[UInt64(st.st_rdev)]?.card { return card }
        let card = try DRMCard(path: path)
        var opened = stat()
        if fstat(card.fd, &opened) == 0 { registry[UInt64(opened.st_rdev)] = Entry(card: card) }
        return card
    }

    /// The shared card whose fd is `fd`, while it is open.
    static func openCard(fd: Int32) -> DRMCard? {
        registry.values.lazy.compactMap(\.card).first { $0.fd == fd }
    }

    private static func forget(_ card: DRMCard) {
        registry = registry.filter { $0.value.card != nil && $0.value.card !== card }
    }

    /// Takes DRM master, without which no mode can be set. The first process to open a card usually holds it
    /// already; if another process (a compositor, another kioskd) holds it, this fails with a message saying so.
    public func becomeMaster() throws {
        if drmIsMaster(fd) != 0 { return }
        if drmSetMaster(fd) != 0 {
            let e = errno
            throw DRMMasterHeldError(device: path, errno: e)
        }
    }

    /// Sets a client capability; returns false when the kernel refuses it (the feature is then unavailable).
    @discardableResult
    public func setClientCap(_ cap: Int32, _ value: UInt64) -> Bool {
        drmSetClientCap(fd, UInt64(cap), value) == 0
    }

    /// Card nodes under `/dev/dri`, sorted by number.
    public static func cardPaths(in directory: String = "/dev/dri") -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            if name.hasPrefix("card"), Int(name.dropFirst(4)) != nil { names.append(name) }
        }
        return names.sorted { Int($0.dropFirst(4))! < Int($1.dropFirst(4))! }.map { "\(directory)/\($0)" }
    }
}

/// DRM master is held by another process (SET_MASTER failed: EBUSY from kernels that say so, EACCES or EINVAL
/// from older ones): the device is fine, it is just not ours yet. A plain value.
public struct DRMMasterHeldError: OutputBusyError, CustomStringConvertible, Sendable {
    public let device: String
    public let errno: Int32
    public var heldResource: String { "DRM master" }

    public var description: String {
        "device \(device): cannot become DRM master (\(errnoDescription(errno))); "
            + "another process, such as a compositor or another kioskd, is driving this card"
    }
}
