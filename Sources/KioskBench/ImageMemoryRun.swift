import Foundation

/// Not product code: `kioskd bench`'s images scenario. The same 800x480 scene shows one PNG in a 400x240 box, once
/// a 400x240 file and once a 12000x12000 poster (quadrants of flat colour, a few MB on disk); each runs as its own
/// `kioskd run` child (see `StartupRun`), which reports its memory. Issue 16's target: the poster's peak RSS at
/// most the small image's + 8 MiB. Runs on the calling thread; writes its files under a temporary folder.
public enum ImageMemoryRun {
    public struct Figures: Codable, Sendable {
        public var mode: String
        public var box: String
        public var small: StartupRun.Figures
        public var poster: StartupRun.Figures
        public var posterFileBytes: Int?
        public var peakRssDifferenceKib: Int?
        public var targetKib: Int
        public var targetMet: Bool?

        enum CodingKeys: String, CodingKey {
            case mode, box, small = "image_400x240", poster = "image_12000x12000", posterFileBytes = "poster_file_bytes"
            case peakRssDifferenceKib = "peak_rss_difference_kib", targetKib = "target_difference_kib", targetMet = "target_met"
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(mode, forKey: .mode)
            try c.encode(box, forKey: .box)
            try c.encode(small, forKey: .small)
            try c.encode(poster, forKey: .poster)
            try c.encode(posterFileBytes, forKey: .posterFileBytes)
            try c.encode(peakRssDifferenceKib, forKey: .peakRssDifferenceKib)
            try c.encode(targetKib, forKey: .targetKib)
            try c.encode(targetMet, forKey: .targetMet)
        }
    }

    public static func measure(frames: Int) throws -> Figures {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-bench-images-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let colours: [[UInt8]] = [[220, 40, 40, 255], [40, 90, 220, 255], [40, 180, 90, 255], [240, 240, 240, 255]]
        let mode = "800x480"
        func figures(_ name: String, width: Int, height: Int) throws -> (StartupRun.Figures, Int?) {
            let image = directory.appendingPathComponent("\(name).png").path
            try QuadrantPNG(width: width, height: height, colours: colours).write(to: image)
            let scene = directory.appendingPathComponent("\(name).yaml")
            try Data("""
            background: "#101418"
            pages:
              - widgets:
                  - {type: image, path: \(name).png, fit: contain, x: 200, y: 120, width: 400, height: 240}

            """.utf8).write(to: scene)
            let stats = try StartupRun.run(label: "images \(name)", mode: mode, frames: frames, extra: ["--scene", scene.path])
            let size = (try? FileManager.default.attributesOfItem(atPath: image)[.size]) as? Int
            return (StartupRun.Figures(mode: mode, stats: stats), size)
        }
        let (small, _) = try figures("small", width: 400, height: 240)
        let (poster, posterBytes) = try figures("poster", width: 12000, height: 12000)
        let difference = poster.peakRssKib.flatMap { p in small.peakRssKib.map { p - $0 } }
        let target = 8 * 1024
        return Figures(mode: mode, box: "400x240", small: small, poster: poster, posterFileBytes: posterBytes,
                       peakRssDifferenceKib: difference, targetKib: target, targetMet: difference.map { $0 <= target })
    }
}
