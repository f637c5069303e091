import CDRM
import Glibc
import KioskCore

/// A dumb buffer with a framebuffer object and a CPU mapping. Owns all three and releases them in `deinit`
/// (unmap, remove the framebuffer, destroy the buffer), so the card must outlive it.
///
/// On a Pi the mapping is write-combined: writes are fine, reads are very slow. Only readback for screenshots and
/// tests reads it.
public final class DumbBuffer {
    public let card: DRMCard
    public let size: Size
    public let stride: Int
    public let byteCount: Int
    public let handle: UInt32
    public let framebufferID: UInt32
    public let base: UnsafeMutableRawPointer

    public init(card: DRMCard, size: Size, format: UInt32 = drmFormatXRGB8888) throws {
        self.card = card
        self.size = size
        var handle: UInt32 = 0, pitch: UInt32 = 0, bytes: UInt64 = 0
        let rc = drmModeCreateDumbBuffer(card.fd, UInt32(size.width), UInt32(size.height), 32, 0, &handle, &pitch, &bytes)
        guard rc == 0 else {
            throw OutputError("device \(card.path): create dumb buffer \(size) failed: \(errnoDescription(-rc == 0 ? errno : -rc))")
        }
        var fbID: UInt32 = 0
        var handles: (UInt32, UInt32, UInt32, UInt32) = (handle, 0, 0, 0)
        var pitches: (UInt32, UInt32, UInt32, UInt32) = (pitch, 0, 0, 0)
        var offsets: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        let addRC = withUnsafeMutableBytes(of: &handles) { h in
            withUnsafeMutableBytes(of: &pitches) { p in
                withUnsafeMutableBytes(of: &offsets) { o in
                    drmModeAddFB2(card.fd, UInt32(size.width), UInt32(size.height), format,
                                  h.bindMemory(to: UInt32.self).baseAddress, p.bindMemory(to: UInt32.self).baseAddress,
                                  o.bindMemory(to: UInt32.self).baseAddress, &fbID, 0)
                }
            }
        }
        guard addRC == 0 else {
            let e = errno
            drmModeDestroyDumbBuffer(card.fd, handle)
            throw OutputError("device \(card.path): add framebuffer \(size) \(fourccString(format)) failed: \(errnoDescription(e))")
        }
        var offset: UInt64 = 0
        let mapRC = drmModeMapDumbBuffer(card.fd, handle, &offset)
        let mapped = mapRC == 0
            ? mmap(nil, Int(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, card.fd, off_t(offset)) : MAP_FAILED
        guard let mapped, mapped != MAP_FAILED else {
            let e = errno
            drmModeRmFB(card.fd, fbID)
            drmModeDestroyDumbBuffer(card.fd, handle)
            throw OutputError("device \(card.path): map dumb buffer \(size) failed: \(errnoDescription(e))")
        }
        self.handle = handle
        self.stride = Int(pitch)
        self.byteCount = Int(bytes)
        self.framebufferID = fbID
        self.base = mapped
    }

    deinit {
        munmap(base, byteCount)
        drmModeRmFB(card.fd, framebufferID)
        drmModeDestroyDumbBuffer(card.fd, handle)
    }

    /// Copies the buffer out row by row (`stride` = width * 4 in the result).
    public func readPixels() -> [UInt8] {
        let rowBytes = size.width * 4
        var out = [UInt8](repeating: 0, count: rowBytes * size.height)
        out.withUnsafeMutableBytes { dst in
            for y in 0..<size.height {
                memcpy(dst.baseAddress! + y * rowBytes, base + y * stride, rowBytes)
            }
        }
        return out
    }
}
