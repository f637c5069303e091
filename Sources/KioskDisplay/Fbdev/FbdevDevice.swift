import CKioskShims
import Glibc
import KioskCore

/// An open framebuffer device (`/dev/fb0`) with its visible frame mapped: the single owner of the fd and the
/// mapping, both freed in `deinit`. Reads the mode and layout once, at open (FBIOGET_VSCREENINFO and
/// FBIOGET_FSCREENINFO); kioskd never changes them. Lives on the main thread with the fbdev backend.
public final class FbdevDevice {
    public let path: String
    /// The driver's name for the device (`fix.id`: `Virtual FB`, `fb_st7789v`).
    public let driverID: String
    public let timing: FbdevTiming
    public let format: FbdevPixelFormat
    /// Bytes per row of the framebuffer.
    public let lineLength: Int
    public let fd: Int32
    /// The first byte of the visible frame (the mapping plus the pan offset).
    public let frame: UnsafeMutableRawPointer
    private let mapping: UnsafeMutableRawPointer
    private let mappingLength: Int

    /// - Throws: `OutputError` naming the device and the errno, or what in its mode kioskd cannot drive.
    public init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else {
            let e = errno
            throw OutputError("framebuffer \(path): open failed: \(errnoDescription(e))", errno: e)
        }
        var fix = fb_fix_screeninfo()
        var v = fb_var_screeninfo()
        guard kiosk_fb_get_fscreeninfo(fd, &fix) == 0, kiosk_fb_get_vscreeninfo(fd, &v) == 0 else {
            let e = errno
            close(fd)
            throw OutputError("framebuffer \(path): reading its mode (FBIOGET_FSCREENINFO/VSCREENINFO) failed: \(errnoDescription(e))", errno: e)
        }
        let id = withUnsafeBytes(of: fix.id) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        let name = "\(path) (\(id))"
        do {
            guard fix.type == FB_TYPE_PACKED_PIXELS, fix.visual == FB_VISUAL_TRUECOLOR || fix.visual == FB_VISUAL_DIRECTCOLOR else {
                throw OutputError("framebuffer \(name): visual \(fix.visual) of type \(fix.type) is not supported; kioskd needs packed true-colour pixels")
            }
            let format = try FbdevPixelFormat(
                bitsPerPixel: Int(v.bits_per_pixel),
                red: .init(offset: Int(v.red.offset), length: Int(v.red.length)),
                green: .init(offset: Int(v.green.offset), length: Int(v.green.length)),
                blue: .init(offset: Int(v.blue.offset), length: Int(v.blue.length)), device: name)
            let timing = FbdevTiming(
                pixclockPs: Int(v.pixclock), xres: Int(v.xres), leftMargin: Int(v.left_margin), rightMargin: Int(v.right_margin),
                hsyncLen: Int(v.hsync_len), yres: Int(v.yres), upperMargin: Int(v.upper_margin), lowerMargin: Int(v.lower_margin),
                vsyncLen: Int(v.vsync_len), isInterlaced: v.vmode & UInt32(FB_VMODE_MASK) == UInt32(FB_VMODE_INTERLACED),
                isDoubleScan: v.vmode & UInt32(FB_VMODE_MASK) == UInt32(FB_VMODE_DOUBLE))
            let lineLength = Int(fix.line_length)
            let offset = Int(v.yoffset) * lineLength + Int(v.xoffset) * format.bytesPerPixel
            guard timing.xres > 0, timing.yres > 0, lineLength >= timing.xres * format.bytesPerPixel,
                  offset + lineLength * timing.yres <= Int(fix.smem_len) else {
                throw OutputError("framebuffer \(name): mode \(timing.xres)x\(timing.yres) with \(lineLength) bytes a row does not fit its \(fix.smem_len) bytes of memory")
            }
            let length = Int(fix.smem_len)
            let mapped = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
            guard let mapped, mapped != MAP_FAILED else {
                let e = errno
                throw OutputError("framebuffer \(name): mmap of \(length) bytes failed: \(errnoDescription(e))", errno: e)
            }
            self.fd = fd
            self.driverID = id
            self.timing = timing
            self.format = format
            self.lineLength = lineLength
            self.mapping = mapped
            self.mappingLength = length
            self.frame = mapped + offset
        } catch {
            close(fd)
            throw error
        }
    }

    deinit {
        munmap(mapping, mappingLength)
        close(fd)
    }

    /// `/dev/fb0 (Virtual FB)`: how errors and logs name it.
    public var name: String { "\(path) (\(driverID))" }

    /// FBIOBLANK: FB_BLANK_UNBLANK or FB_BLANK_POWERDOWN.
    /// - Throws: `OutputError` naming the device and the errno (EINVAL from a driver that cannot blank).
    public func blank(_ off: Bool) throws {
        let level = off ? FB_BLANK_POWERDOWN : FB_BLANK_UNBLANK
        guard kiosk_fb_blank(fd, Int32(level)) == 0 else {
            let e = errno
            throw OutputError("framebuffer \(name): \(off ? "power off (FBIOBLANK powerdown)" : "power on (FBIOBLANK unblank)") failed: \(errnoDescription(e))", errno: e)
        }
    }

    /// The visible frame read back as XRGB8888 (stride = width * 4). Reads the framebuffer, which is slow on
    /// write-combined memory: for screenshots while the output is off and at exit, never per frame.
    public func readBack() -> [UInt8] {
        format.xrgb8888(from: frame, size: Size(width: timing.xres, height: timing.yres), stride: lineLength)
    }

    /// The first framebuffer device node that exists (`/dev/fb0`, then `/dev/graphics/fb0`), for `--backend auto`.
    public static func defaultPath() -> String? {
        ["/dev/fb0", "/dev/graphics/fb0"].first { access($0, F_OK) == 0 }
    }
}
