import Foundation
import KioskCore
import KioskRender

/// Not product code: `kioskd bench`'s fingerprint scenario. What the frame fingerprints (`TileFingerprints`, a hash
/// per 64x64 tile, rehashed only where a composition touched) cost next to the copy every composition already
/// makes: the damage copied row by row from the shadow buffer into a scanout buffer (`ShadowCompositor.copy`).
///
/// For scale, a third call in the same rotation: a whole composition of that damage by the shadow compositor (an
/// opaque layer surface over it, which Cairo copies, plus the fingerprint, which it includes).
///
/// Side by side in one run, at 1920x1080, alternating the calls one by one over the same damage: a clock-sized
/// rectangle (a seconds clock's change: the tiles under it are hashed, so the damage rounded out to tile edges) and
/// the whole screen (a page transition). The copy here goes into ordinary cached memory; a real scanout buffer is
/// write-combined and slower to write, so the ratio is the fingerprint's cost at its largest. An unchanged frame is
/// not composed and hashes nothing. Every figure measured, or nil.
public enum FingerprintRun {
    public struct Case: Codable, Sendable {
        public var damage: String
        /// Pixels in the damage, and in the tiles it touches (what is hashed).
        public var damagePixels: Int
        public var hashedPixels: Int
        /// Milliseconds per call, median of the alternated calls.
        public var copyMs: Double?
        public var fingerprintMs: Double?
        public var composeMs: Double?
        /// `fingerprintMs / copyMs`, and `fingerprintMs / composeMs` (the fingerprint's share of a composition).
        public var fingerprintVsCopy: Double?
        public var fingerprintVsCompose: Double?

        enum CodingKeys: String, CodingKey {
            case damage, damagePixels = "damage_pixels", hashedPixels = "hashed_pixels", copyMs = "copy_ms"
            case fingerprintMs = "fingerprint_ms", composeMs = "compose_ms", fingerprintVsCopy = "fingerprint_vs_copy"
            case fingerprintVsCompose = "fingerprint_vs_compose"
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(damage, forKey: .damage)
            try c.encode(damagePixels, forKey: .damagePixels)
            try c.encode(hashedPixels, forKey: .hashedPixels)
            try c.encode(copyMs, forKey: .copyMs)
            try c.encode(fingerprintMs, forKey: .fingerprintMs)
            try c.encode(composeMs, forKey: .composeMs)
            try c.encode(fingerprintVsCopy, forKey: .fingerprintVsCopy)
            try c.encode(fingerprintVsCompose, forKey: .fingerprintVsCompose)
        }
    }

    public struct Figures: Codable, Sendable {
        public var mode: String
        public var calls: Int
        public var tileSize: Int
        public var cases: [Case]

        enum CodingKeys: String, CodingKey { case mode, calls, tileSize = "tile_size", cases }
    }

    public static func measure(calls: Int = 60) throws -> Figures {
        let size = Size(width: 1920, height: 1080)
        let stride = size.width * 4, bytes = stride * size.height
        let shadow = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        let scanout = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        defer { shadow.deallocate(); scanout.deallocate() }
        // A frame whose pixels differ (a uniform one would take the same path, plus a compare per word).
        let words = shadow.bindMemory(to: UInt32.self, capacity: size.width * size.height)
        for i in 0..<(size.width * size.height) { words[i] = UInt32(truncatingIfNeeded: i &* 2_654_435_761) & 0x00FF_FFFF }
        memset(scanout, 0, bytes)
        var tiles = TileFingerprints(size: size, color: 0)
        let compositor = try ShadowCompositor(size: size)
        let page = LayerSurface(size: size, isOpaque: true)
        for y in 0..<size.height {
            for x in 0..<size.width { page.bytes.storeBytes(of: 0xFF00_0000 | words[y * size.width + x], toByteOffset: y * page.stride + x * 4, as: UInt32.self) }
        }
        let items = [CompositeItem(source: .surface(page), frame: Rect(size: size))]
        let damages: [(name: String, rect: Rect)] = [
            ("clock 480x120", Rect(x: 40, y: 40, width: 480, height: 120)),
            ("full screen", Rect(size: size)),
        ]
        var cases: [Case] = []
        for damage in damages {
            let rect = damage.rect
            let touched = tiles.tiles(touching: [rect]).map {
                let column = $0 % tiles.columns, row = $0 / tiles.columns
                let x = column * TileFingerprints.tileSize, y = row * TileFingerprints.tileSize
                return min(TileFingerprints.tileSize, size.width - x) * min(TileFingerprints.tileSize, size.height - y)
            }.reduce(0, +)
            var copyTimes: [Double] = [], hashTimes: [Double] = [], composeTimes: [Double] = []
            for call in 0..<(calls * 3) {
                // Alternated, so all see the same machine; a pixel changes each call so nothing can be skipped.
                words[rect.y * size.width + rect.x] ^= 0x010101
                let t0 = MonotonicInstant.now()
                if call % 3 == 2 {
                    compositor.compose(items, damage: [rect])
                    composeTimes.append((MonotonicInstant.now() - t0).milliseconds)
                } else if call % 3 == 0 {
                    var source = UnsafeRawPointer(shadow).advanced(by: rect.y * stride + rect.x * 4)
                    var destination = scanout.advanced(by: rect.y * stride + rect.x * 4)
                    for _ in 0..<rect.height {
                        destination.copyMemory(from: source, byteCount: rect.width * 4)
                        source += stride
                        destination += stride
                    }
                    copyTimes.append((MonotonicInstant.now() - t0).milliseconds)
                } else {
                    tiles.update(damage: [rect], pixels: UnsafeRawPointer(shadow), stride: stride)
                    hashTimes.append((MonotonicInstant.now() - t0).milliseconds)
                }
            }
            precondition(scanout.load(fromByteOffset: rect.y * stride + rect.x * 4, as: UInt32.self) != 0 || words[rect.y * size.width + rect.x] == 0)
            let copyMs = median(copyTimes), hashMs = median(hashTimes), composeMs = median(composeTimes)
            cases.append(Case(damage: damage.name, damagePixels: rect.area, hashedPixels: touched, copyMs: copyMs,
                              fingerprintMs: hashMs, composeMs: composeMs, fingerprintVsCopy: benchRatio(hashMs, copyMs),
                              fingerprintVsCompose: benchRatio(hashMs, composeMs)))
        }
        return Figures(mode: "\(size.width)x\(size.height)", calls: calls, tileSize: TileFingerprints.tileSize, cases: cases)
    }

    private static func median(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : values.sorted()[values.count / 2]
    }
}

extension FingerprintRun.Figures {
    var table: String {
        var lines = ["fingerprint: the tiles under the damage hashed against the damage copied into a scanout buffer, \(mode), \(tileSize)x\(tileSize) tiles, alternated, \(calls) calls each",
                     "  damage          pixels    hashed    copy ms  fingerprint ms  compose ms  fingerprint/copy  fingerprint/compose"]
        for c in cases {
            lines.append("  " + c.damage.padding(toLength: 16, withPad: " ", startingAt: 0)
                         + String(c.damagePixels).padding(toLength: 10, withPad: " ", startingAt: 0)
                         + String(c.hashedPixels).padding(toLength: 10, withPad: " ", startingAt: 0)
                         + show(c.copyMs, "%.3f").padding(toLength: 9, withPad: " ", startingAt: 0)
                         + show(c.fingerprintMs, "%.3f").padding(toLength: 16, withPad: " ", startingAt: 0)
                         + show(c.composeMs, "%.3f").padding(toLength: 12, withPad: " ", startingAt: 0)
                         + show(c.fingerprintVsCopy, "%.2f").padding(toLength: 18, withPad: " ", startingAt: 0) + show(c.fingerprintVsCompose, "%.2f"))
        }
        lines.append("  compose includes the fingerprint; the copy goes into cached memory (a scanout buffer is write-combined, slower); an unchanged frame is not composed and hashes nothing")
        return lines.joined(separator: "\n")
    }
}
