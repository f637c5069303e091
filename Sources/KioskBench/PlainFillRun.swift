import KioskCore
import KioskRender

/// Not product code: `kioskd bench`'s plain-fill scenario. Whether a full-screen background of one fill (a solid
/// colour, a gradient; square corners, no border) is cheaper drawn by the compositor into the damage at every
/// composition (`CompositeItem.Source.content`, no surface) than rendered once into a surface the compositor then
/// copies from (what every other layer does). kioskd draws directly only what this measured cheaper
/// (`RectContent.compositesWithoutSurface`, reported per fill).
///
/// Side by side in one run, on one `ShadowCompositor` at 1920x1080, alternating the two paths call by call: the
/// main thread's time per composition for the background alone under two damages, a clock-sized rectangle (what a
/// changing widget above the background costs) and the whole screen (a page transition); and what each path holds
/// (the surface's bytes) and costs once (the surface's render). Every figure measured, or nil.
public enum PlainFillRun {
    public struct Case: Codable, Sendable {
        public var fill: String
        public var damage: String
        /// Milliseconds per composition, median of the alternated calls.
        public var directMs: Double?
        public var surfaceMs: Double?
        /// `directMs / surfaceMs`: below 1, drawing the fill directly is cheaper.
        public var directVsSurface: Double?

        enum CodingKeys: String, CodingKey {
            case fill, damage, directMs = "direct_ms", surfaceMs = "surface_ms", directVsSurface = "direct_vs_surface"
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(fill, forKey: .fill)
            try c.encode(damage, forKey: .damage)
            try c.encode(directMs, forKey: .directMs)
            try c.encode(surfaceMs, forKey: .surfaceMs)
            try c.encode(directVsSurface, forKey: .directVsSurface)
        }
    }

    public struct Figures: Codable, Sendable {
        public var mode: String
        public var calls: Int
        public var cases: [Case]
        /// Bytes the surface path holds for the background; the direct path holds none.
        public var surfaceBytes: Int
        /// The one render the surface path needs per fill (ms, median of five), by fill.
        public var surfaceRenderMs: [String: Double?]
        /// Which fills kioskd draws without a surface (`RectContent.compositesWithoutSurface`).
        public var drawnWithoutSurface: [String: Bool]

        enum CodingKeys: String, CodingKey {
            case mode, calls, cases, surfaceBytes = "surface_bytes", surfaceRenderMs = "surface_render_ms"
            case drawnWithoutSurface = "drawn_without_surface"
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(mode, forKey: .mode)
            try c.encode(calls, forKey: .calls)
            try c.encode(cases, forKey: .cases)
            try c.encode(surfaceBytes, forKey: .surfaceBytes)
            try c.encode(surfaceRenderMs, forKey: .surfaceRenderMs)
            try c.encode(drawnWithoutSurface, forKey: .drawnWithoutSurface)
        }
    }

    /// The fills measured: a solid colour and a three-stop gradient at an angle, as a signage page's background.
    static let fills: [(name: String, content: RectContent)] = [
        ("solid", RectContent(color: Color(rgb: 0x203040))),
        ("gradient", RectContent(fill: .linearGradient(colors: [Color(rgb: 0x0B3D91), Color(rgb: 0x1E88E5), Color(rgb: 0x00BFA5)], angle: 30))),
    ]

    public static func measure(calls: Int = 60) throws -> Figures {
        let mode = OutputMode(width: 1920, height: 1080, refreshMilliHz: 60_000)
        let size = mode.size
        let screen = Rect(size: size)
        let compositor = try ShadowCompositor(size: size)
        let damages: [(name: String, rect: Rect)] = [
            ("clock 480x120", Rect(x: 40, y: 40, width: 480, height: 120)),
            ("full screen", screen),
        ]
        var cases: [Case] = []
        var renders: [String: Double?] = [:]
        for fill in fills {
            var renderTimes: [Double] = []
            var surface: LayerSurface?
            for _ in 0..<5 {
                let drawn = LayerSurface(size: size, isOpaque: fill.content.isOpaque)
                let t0 = MonotonicInstant.now()
                guard (try? fill.content.draw(into: drawn, isCancelled: { false })) != nil else { break }
                renderTimes.append((MonotonicInstant.now() - t0).milliseconds)
                surface = drawn
            }
            renders[fill.name] = renderTimes.count == 5 ? renderTimes.sorted()[2] : nil
            let direct = [CompositeItem(source: .content(fill.content), frame: screen)]
            for damage in damages {
                var directTimes: [Double] = [], surfaceTimes: [Double] = []
                for call in 0..<(calls * 2) {
                    // Alternated, so both paths see the same machine.
                    let useDirect = call % 2 == 0
                    let items: [CompositeItem]
                    if useDirect {
                        items = direct
                    } else if let surface {
                        items = [CompositeItem(source: .surface(surface), frame: screen)]
                    } else {
                        continue
                    }
                    let t0 = MonotonicInstant.now()
                    compositor.compose(items, damage: [damage.rect])
                    let ms = (MonotonicInstant.now() - t0).milliseconds
                    if useDirect { directTimes.append(ms) } else { surfaceTimes.append(ms) }
                }
                let directMs = median(directTimes), surfaceMs = median(surfaceTimes)
                cases.append(Case(fill: fill.name, damage: damage.name, directMs: directMs, surfaceMs: surfaceMs,
                                  directVsSurface: directMs.flatMap { d in surfaceMs.flatMap { $0 > 0 ? d / $0 : nil } }))
            }
        }
        return Figures(mode: mode.description, calls: calls, cases: cases, surfaceBytes: size.width * size.height * 4,
                       surfaceRenderMs: renders,
                       drawnWithoutSurface: Dictionary(uniqueKeysWithValues: fills.map { ($0.name, $0.content.compositesWithoutSurface) }))
    }

    private static func median(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : values.sorted()[values.count / 2]
    }
}
