import CCairo
import Foundation
import KioskCore

/// The reference dashboard: a clock ticking each second, a scrolling ticker, an animating progress bar and eight
/// static cards of text and images. `kioskd bench` measures it, `kioskd run --scene reference` shows it, and the
/// VM tests compare its writeback capture with a headless render.
///
/// Its moving parts are driven by `apply(sceneTime:)` and `setClock(_:)` so that the engine (stepped by vblank
/// timestamps) and the naive baseline (stepped by frame number) show exactly the same state for the same inputs.
/// The ticker and the progress bar move by changing layer frames only: no re-render, just damage. Lives on the
/// main thread with the layer tree.
public final class ReferenceDashboard {
    public let size: Size
    public let root: Layer
    public let clockLayer: Layer
    public let tickerStrip: Layer
    public let progressFill: Layer
    public let cards: [Layer]
    /// Ticker speed in pixels per second.
    public let tickerSpeed: Double = 120
    /// Seconds for the progress bar to fill and empty once.
    public let progressPeriod: Double = 8

    private let tickerBand: Rect
    private let progressTrack: Rect
    private let tickerWidth: Int
    private var clockText = ""

    public static let tickerText = "Platform 4: the 10:42 to Cambridge is delayed by 5 minutes  ·  Lift B out of service until Friday  ·  "
        + "Lunch menu: lentil soup, grilled halloumi, apple crumble  ·  Fire drill Thursday 11:00  ·  Welcome to kioskd"

    /// - Parameters:
    ///   - imageDirectory: where the card icons are written (PNG) if not already there; cards decode them on workers.
    public init(size: Size, imageDirectory: String, clock: Int) throws {
        self.size = size
        let w = size.width, h = size.height
        let unit = max(4, min(w, h) / 40)
        root = Layer(frame: Rect(size: size), name: "dashboard")
        root.content = RectContent(fill: .verticalGradient(top: Color(rgb: 0x141824), bottom: Color(rgb: 0x06070B)))

        clockLayer = Layer(frame: Rect(x: unit * 2, y: unit, width: w / 2, height: unit * 5), name: "clock")
        clockLayer.content = ClockContent(text: "--:--:--", font: "Sans Bold \(unit * 4)", color: Color(rgb: 0xEEF0F4), alignment: .left)
        root.addChild(clockLayer)
        let title = Layer(frame: Rect(x: w * 2 / 5, y: unit * 2, width: w * 3 / 10, height: unit * 3), name: "title")
        title.content = TextContent("Operations · Building 4", font: "Sans \(unit * 5 / 4)", color: Color(rgb: 0x9EA8BC),
                                    centersVertically: true)
        root.addChild(title)

        // Eight cards in a 4 x 2 grid.
        let icons = try Self.writeIcons(in: imageDirectory, size: unit * 3)
        let gridTop = unit * 8, gridBottom = h - unit * 12
        let gap = unit * 2
        let cardW = (w - gap * 5) / 4, cardH = (gridBottom - gridTop - gap) / 2
        let labels = [("Visitors today", "1 284"), ("Energy", "42.7 kWh"), ("Temperature", "21.4 °C"), ("Humidity", "38 %"),
                      ("Open tickets", "17"), ("Parking", "64 / 120"), ("Air quality", "Good"), ("Next event", "14:30")]
        var cards: [Layer] = []
        for (i, (label, value)) in labels.enumerated() {
            let col = i % 4, row = i / 4
            let card = Layer(frame: Rect(x: gap + col * (cardW + gap), y: gridTop + row * (cardH + gap), width: cardW, height: cardH),
                             name: "card\(i)")
            card.content = RectContent(color: Color(rgb: 0x1C2030), cornerRadius: Double(unit),
                                       border: .init(width: 1, color: Color(rgb: 0x2C3246)))
            let icon = Layer(frame: Rect(x: unit, y: unit, width: unit * 3, height: unit * 3), name: "card\(i).icon")
            icon.content = ImageContent(path: icons[i % icons.count], fit: .contain)
            let labelLayer = Layer(frame: Rect(x: unit * 5, y: unit, width: cardW - unit * 6, height: unit * 3), name: "card\(i).label")
            labelLayer.content = TextContent(label, font: "Sans \(unit)", color: Color(rgb: 0x9EA8BC), centersVertically: true)
            let valueLayer = Layer(frame: Rect(x: unit, y: cardH - unit * 4, width: cardW - unit * 2, height: unit * 3), name: "card\(i).value")
            valueLayer.content = TextContent(value, font: "Sans Bold \(unit * 2)", color: Color(rgb: 0xEEF0F4))
            for child in [icon, labelLayer, valueLayer] { card.addChild(child) }
            root.addChild(card)
            cards.append(card)
        }
        self.cards = cards

        progressTrack = Rect(x: gap, y: h - unit * 9, width: w - gap * 2, height: unit)
        let track = Layer(frame: progressTrack, name: "progress.track")
        track.content = RectContent(color: Color(rgb: 0x242733), cornerRadius: Double(unit) / 2)
        root.addChild(track)
        progressFill = Layer(frame: Rect(x: progressTrack.x, y: progressTrack.y, width: 0, height: progressTrack.height),
                             name: "progress.fill")
        progressFill.backgroundColor = Color(rgb: 0xFA9E28)
        root.addChild(progressFill)

        tickerBand = Rect(x: 0, y: h - unit * 6, width: w, height: unit * 5)
        let band = Layer(frame: tickerBand, name: "ticker.band")
        band.backgroundColor = Color(rgb: 0x10131C)
        root.addChild(band)
        let tickerContent = TickerTextContent(Self.tickerText, font: "Sans \(unit * 2)", color: Color(rgb: 0xD8DCE6))
        let natural = try tickerContent.naturalSize()
        tickerWidth = natural.width
        tickerStrip = Layer(frame: Rect(x: w, y: tickerBand.y + (tickerBand.height - natural.height) / 2,
                                        width: natural.width, height: natural.height), name: "ticker.strip")
        tickerStrip.content = tickerContent
        root.addChild(tickerStrip)

        setClock(clock)
        apply(sceneTime: 0)
    }

    /// Moves the ticker and the progress bar to where they are `sceneTime` seconds after start.
    public func apply(sceneTime t: Double) {
        let travel = Double(size.width + tickerWidth)
        let offset = (t * tickerSpeed).truncatingRemainder(dividingBy: travel)
        var f = tickerStrip.frame
        f.x = size.width - Int(offset)
        if f != tickerStrip.frame { tickerStrip.frame = f }

        let phase = (t / progressPeriod).truncatingRemainder(dividingBy: 1)
        let value = phase < 0.5 ? phase * 2 : (1 - phase) * 2
        var p = progressFill.frame
        p.width = Int((Double(progressTrack.width) * value).rounded())
        if p != progressFill.frame { progressFill.frame = p }
    }

    /// Drives the dashboard from `engine`'s display link: scene time counts from the first vblank, and the clock
    /// shows `clock(sceneTime)`. The engine holds the dashboard weakly; `onTick` runs after each step.
    @discardableResult
    public func animate(on engine: LayerEngine, clock: @escaping (_ sceneTime: Double) -> Int,
                        onTick: ((DisplayTick) -> Void)? = nil) -> LayerEngine.AnimationToken {
        var start: MonotonicInstant?
        return engine.addAnimation(target: self) { scene, tick in
            let t0 = start ?? tick.event.timestamp
            start = t0
            let t = (tick.event.timestamp - t0).milliseconds / 1000
            scene.apply(sceneTime: t)
            scene.setClock(clock(t))
            onTick?(tick)
            return true
        }
    }

    /// Shows `time` (seconds since the epoch) on the clock; re-renders only when the text changes.
    public func setClock(_ time: Int) {
        let text = ClockContent.format(time: time, format: "%H:%M:%S")
        guard text != clockText else { return }
        clockText = text
        let old = clockLayer.content as? ClockContent
        clockLayer.content = ClockContent(text: text, font: old?.font ?? "Sans Bold 32", color: old?.color ?? .white, alignment: .left)
    }

    /// The scene as (content, screen frame) pairs, back to front: what a naive renderer draws every frame.
    public func flattened() -> [(content: any LayerContent, frame: Rect)] {
        var out: [(content: any LayerContent, frame: Rect)] = []
        func walk(_ layer: Layer, _ dx: Int, _ dy: Int) {
            guard !layer.isHidden else { return }
            let frame = Rect(x: layer.frame.x + dx, y: layer.frame.y + dy, width: layer.frame.width, height: layer.frame.height)
            if let content = layer.content {
                out.append((content, frame))
            } else if let colour = layer.backgroundColor, !frame.isEmpty {
                out.append((RectContent(color: colour), frame))
            }
            for child in layer.children.sorted(by: { $0.zPosition < $1.zPosition }) { walk(child, frame.x, frame.y) }
        }
        walk(root, 0, 0)
        return out
    }

    /// Card icons: simple shapes drawn with Cairo, written once as PNG so cards exercise real image decoding.
    static func writeIcons(in directory: String, size: Int) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let colours: [UInt32] = [0x4FC3F7, 0x81C784, 0xFFB74D, 0xE57373]
        var paths: [String] = []
        for (i, rgb) in colours.enumerated() {
            let path = "\(directory)/icon\(i)-\(size).png"
            paths.append(path)
            if FileManager.default.fileExists(atPath: path) { continue }
            let canvas = try CairoCanvas(size: Size(width: size, height: size))
            let cr = canvas.cairoContext
            let c = Color(rgb: rgb)
            cairo_set_source_rgb(cr, 0.11, 0.13, 0.19)
            cairo_paint(cr)
            cairo_set_source_rgb(cr, c.red, c.green, c.blue)
            let s = Double(size)
            switch i {
            case 0: cairo_arc(cr, s / 2, s / 2, s * 0.38, 0, 2 * Double.pi)
            case 1: cairo_rectangle(cr, s * 0.15, s * 0.15, s * 0.7, s * 0.7)
            case 2:
                cairo_move_to(cr, s / 2, s * 0.1); cairo_line_to(cr, s * 0.9, s * 0.85); cairo_line_to(cr, s * 0.1, s * 0.85)
                cairo_close_path(cr)
            default:
                cairo_arc(cr, s / 2, s / 2, s * 0.38, 0, 2 * Double.pi)
                cairo_fill(cr)
                cairo_set_source_rgb(cr, 0.11, 0.13, 0.19)
                cairo_arc(cr, s / 2, s / 2, s * 0.2, 0, 2 * Double.pi)
            }
            cairo_fill(cr)
            try canvas.checkStatus()
            try canvas.writePNG(to: path)
        }
        return paths
    }
}
