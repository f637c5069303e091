import Foundation
import KioskCore

/// A backlight as the kernel exposes it: `<class dir>/<device>/brightness` (read and written) and
/// `max_brightness`, under /sys/class/backlight, or a directory with the same layout for tests. Dimming remembers
/// the brightness it found, and restoring writes that back. The writes are a few bytes to sysfs, done on the main
/// thread. Lives on the main thread.
public final class Backlight {
    public static let systemClassDirectory = "/sys/class/backlight"

    /// The device directory (`/sys/class/backlight/rpi_backlight`).
    public let path: String
    public let maxBrightness: Int
    /// The brightness before dimming; nil while not dimmed.
    public private(set) var savedBrightness: Int?

    /// The backlight `name` in `classDirectory`, else the first one there (sorted by name); nil when there is none.
    ///
    /// - Throws: `OutputError` when the device is there but its files cannot be read, or `name` is not there.
    public static func find(in classDirectory: String = systemClassDirectory, name: String? = nil) throws -> Backlight? {
        if let name {
            let path = classDirectory + "/" + name
            guard FileManager.default.fileExists(atPath: path) else {
                throw OutputError("backlight \(name): no such device in \(classDirectory)")
            }
            return try Backlight(path: path)
        }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: classDirectory)) ?? []
        guard let first = entries.sorted().first else { return nil }
        return try Backlight(path: classDirectory + "/" + first)
    }

    public init(path: String) throws {
        self.path = path
        maxBrightness = try Self.readNumber(path + "/max_brightness")
        guard maxBrightness > 0 else { throw OutputError("backlight \(path): max_brightness is \(maxBrightness)") }
    }

    /// The brightness now, 0...max_brightness.
    public func brightness() throws -> Int { try Self.readNumber(path + "/brightness") }

    /// Dims to `level` (0...1) of the brightness it has now, which `restore()` writes back.
    public func dim(to level: Double) throws {
        let current = try savedBrightness ?? brightness()
        savedBrightness = current
        try write(Int((Double(current) * level).rounded()))
    }

    /// Writes back the brightness found before dimming; nothing when not dimmed.
    public func restore() throws {
        guard let saved = savedBrightness else { return }
        try write(saved)
        savedBrightness = nil
    }

    private func write(_ value: Int) throws {
        let file = path + "/brightness"
        let fd = open(file, O_WRONLY | O_TRUNC | O_CLOEXEC)  // as `echo >` does: sysfs ignores O_TRUNC, a test directory needs it
        guard fd >= 0 else { throw OutputError("backlight \(file): cannot open: \(errnoDescription(errno))") }
        defer { close(fd) }
        let text = Array("\(min(max(value, 0), maxBrightness))\n".utf8)
        guard Glibc.write(fd, text, text.count) == text.count else {
            throw OutputError("backlight \(file): cannot write: \(errnoDescription(errno))")
        }
    }

    private static func readNumber(_ file: String) throws -> Int {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw OutputError("backlight \(file): cannot read: \(errnoDescription(errno))")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let value = Int(text) else { throw OutputError("backlight \(file): '\(text)' is not a number") }
        return value
    }
}
