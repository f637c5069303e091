import Foundation

/// `kioskd bench`'s report: one entry per scenario run (null for one not run), each with its measured figures and
/// the ratios computed from exactly those figures.
public struct BenchReport: Encodable {
    public var frames: Int
    public var dashboard: DashboardScenario?
    public var pageSlide: PageTransitionRun.Scenario?
    public var pageFade: PageTransitionRun.Scenario?
    public var updateStorm: UpdateStorm.Scenario?
    public var startup: StartupScenario?
    public var images: ImageMemoryRun.Figures?
    public var pages: PagesRun.Figures?
    public var plainFill: PlainFillRun.Figures?
    public var fingerprint: FingerprintRun.Figures?
    public var vnc: VNCRun.Figures?
    public var video: VideoRun.Scenario?
    public var web: WebRun.Scenario?

    public init(frames: Int) { self.frames = frames }

    enum CodingKeys: String, CodingKey { case frames, scenarios }
    enum ScenarioKeys: String, CodingKey { case dashboard, pageSlide = "page-slide", pageFade = "page-fade", updateStorm = "update-storm", startup, images, pages, plainFill = "plain-fill", fingerprint, vnc, video, web }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(frames, forKey: .frames)
        var s = c.nestedContainer(keyedBy: ScenarioKeys.self, forKey: .scenarios)
        try s.encode(dashboard, forKey: .dashboard)
        try s.encode(pageSlide, forKey: .pageSlide)
        try s.encode(pageFade, forKey: .pageFade)
        try s.encode(updateStorm, forKey: .updateStorm)
        try s.encode(startup, forKey: .startup)
        try s.encode(images, forKey: .images)
        try s.encode(pages, forKey: .pages)
        try s.encode(plainFill, forKey: .plainFill)
        try s.encode(fingerprint, forKey: .fingerprint)
        try s.encode(vnc, forKey: .vnc)
        try s.encode(video, forKey: .video)
        try s.encode(web, forKey: .web)
    }

    public var table: String {
        var sections: [String] = []
        if let dashboard { sections.append(dashboard.table) }
        if let pageSlide { sections.append(pageSlide.table) }
        if let pageFade { sections.append(pageFade.table) }
        if let updateStorm { sections.append(updateStorm.table) }
        if let startup { sections.append(startup.table) }
        if let images { sections.append(images.table) }
        if let pages { sections.append(pages.table) }
        if let plainFill { sections.append(plainFill.table) }
        if let fingerprint { sections.append(fingerprint.table) }
        if let vnc { sections.append(vnc.table) }
        if let video { sections.append(video.table) }
        if let web { sections.append(web.table) }
        return sections.joined(separator: "\n\n")
    }
}

/// A figure for a table: the number, or "null" where it was not measured.
func show(_ value: Double?, _ format: String = "%.3f") -> String { value.map { String(format: format, $0) } ?? "null" }
func show(_ value: Int?) -> String { value.map(String.init) ?? "null" }

func figuresRow(_ name: String, _ f: BenchFigures) -> String {
    name.padding(toLength: 24, withPad: " ", startingAt: 0)
        + [show(f.mainCPUMsPerFrame), show(f.totalCPUMsPerFrame), show(f.bytesWrittenPerFrame), show(f.mainMsP99),
           show(f.framesFlipped), show(f.missedVblanks), show(f.firstFrameMs, "%.1f")]
        .map { $0.padding(toLength: 11, withPad: " ", startingAt: 0) }.joined()
}

let figuresHeader = "".padding(toLength: 24, withPad: " ", startingAt: 0)
    + "main ms    total ms   bytes/frm  main p99   flipped    missed     first ms"

public struct DashboardScenario: Encodable {
    var mode: String
    var fullFrameBytes: Int
    var engineRoundRobin: BenchFigures
    var enginePriority: BenchFigures
    var naiveDirect: BenchFigures
    var naiveThroughSurfaces: BenchFigures
    var memcpyMsPerFrame: Double

    public init(mode: String, fullFrameBytes: Int, engineRoundRobin: BenchFigures, enginePriority: BenchFigures, naiveDirect: BenchFigures,
                naiveThroughSurfaces: BenchFigures, memcpyMsPerFrame: Double) {
        (self.mode, self.fullFrameBytes, self.engineRoundRobin, self.enginePriority) = (mode, fullFrameBytes, engineRoundRobin, enginePriority)
        (self.naiveDirect, self.naiveThroughSurfaces, self.memcpyMsPerFrame) = (naiveDirect, naiveThroughSurfaces, memcpyMsPerFrame)
    }

    enum CodingKeys: String, CodingKey {
        case mode, fullFrameBytes = "full_frame_bytes", engineRoundRobin = "engine_round_robin"
        case enginePriority = "engine_priority", naiveDirect = "naive_direct"
        case naiveThroughSurfaces = "naive_through_surfaces", memcpyMsPerFrame = "memcpy_ms_per_frame", ratios
    }

    /// Each engine strategy's total CPU against both naive redraws and the memcpy, and its bytes against a full
    /// frame.
    var ratios: [String: Double?] {
        var r: [String: Double?] = [:]
        for (name, f) in [("round_robin", engineRoundRobin), ("priority", enginePriority)] {
            r["\(name)_cpu_vs_naive_direct"] = benchRatio(f.totalCPUMsPerFrame, naiveDirect.totalCPUMsPerFrame)
            r["\(name)_cpu_vs_naive_through_surfaces"] = benchRatio(f.totalCPUMsPerFrame, naiveThroughSurfaces.totalCPUMsPerFrame)
            r["\(name)_cpu_vs_memcpy"] = benchRatio(f.totalCPUMsPerFrame, memcpyMsPerFrame)
            r["\(name)_bytes_vs_full_frame"] = benchRatio(f.bytesWrittenPerFrame.map(Double.init), Double(fullFrameBytes))
        }
        return r
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(mode, forKey: .mode)
        try c.encode(fullFrameBytes, forKey: .fullFrameBytes)
        try c.encode(engineRoundRobin, forKey: .engineRoundRobin)
        try c.encode(enginePriority, forKey: .enginePriority)
        try c.encode(naiveDirect, forKey: .naiveDirect)
        try c.encode(naiveThroughSurfaces, forKey: .naiveThroughSurfaces)
        try c.encode(memcpyMsPerFrame, forKey: .memcpyMsPerFrame)
        try c.encode(ratios, forKey: .ratios)
    }

    var table: String {
        var lines = ["dashboard: the default scene, \(mode), headless", figuresHeader,
                     figuresRow("engine (round-robin)", engineRoundRobin), figuresRow("engine (priority)", enginePriority),
                     figuresRow("naive redraw, direct", naiveDirect),
                     figuresRow("naive redraw, surfaces", naiveThroughSurfaces),
                     "memcpy of a full frame".padding(toLength: 24, withPad: " ", startingAt: 0) + show(memcpyMsPerFrame)]
        for (name, value) in ratios.sorted(by: { $0.key < $1.key }) { lines.append("  \(name): \(show(value))") }
        return lines.joined(separator: "\n")
    }
}

extension PageTransitionRun.Scenario {
    var table: String {
        let met = targetMet.map { $0 ? "met" : "NOT met" } ?? "null"
        var lines = ["page-\(transition): two full-screen pages changing in turn (\(transition)), \(mode), headless", figuresHeader,
                     figuresRow("engine, composed", engine), figuresRow("engine, 2 overlay planes", enginePlanes),
                     "memcpy of a full frame".padding(toLength: 24, withPad: " ", startingAt: 0) + show(memcpyMsPerFrame),
                     "memcpy, cold memory".padding(toLength: 24, withPad: " ", startingAt: 0) + show(coldMemcpyMsPerFrame),
                     "  layer frames copied into plane buffers: \(show(planeFramesCopied))",
                     "  composed frames written straight into the scanout buffer: \(show(directFrames))"]
        for (name, value) in ratios.sorted(by: { $0.key < $1.key }) { lines.append("  \(name): \(show(value))") }
        lines.append("  target (issue 27), composed: main CPU <= \(show(mainCPUTargetVsMemcpy, "%.0f")) x memcpy and main p99 <= \(show(mainP99TargetMs, "%.0f")) ms: \(met)")
        return lines.joined(separator: "\n")
    }
}

public struct StartupScenario: Encodable {
    var runs: [StartupRun.Figures]

    public init(runs: [StartupRun.Figures]) { self.runs = runs }

    /// Issue 16's targets for the default scene at 800x480: peak RSS at most 32 MiB, private dirty at most 12 MiB.
    static let targetPeakRssKib = 32 * 1024
    static let targetPrivateDirtyKib = 12 * 1024

    /// Whether the 800x480 run met both; nil when it was not measured.
    var targetMet: Bool? {
        guard let run = runs.first(where: { $0.mode == "800x480" }), let peak = run.peakRssKib,
              let dirty = run.privateDirtyKib else { return nil }
        return peak <= Self.targetPeakRssKib && dirty <= Self.targetPrivateDirtyKib
    }

    enum CodingKeys: String, CodingKey {
        case runs, targetPeakRssKib = "target_peak_rss_kib", targetPrivateDirtyKib = "target_private_dirty_kib"
        case targetMet = "target_met"
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(runs, forKey: .runs)
        try c.encode(Self.targetPeakRssKib, forKey: .targetPeakRssKib)
        try c.encode(Self.targetPrivateDirtyKib, forKey: .targetPrivateDirtyKib)
        try c.encode(targetMet, forKey: .targetMet)
    }

    var table: String {
        let met = targetMet.map { $0 ? "met" : "NOT met" } ?? "null"
        return (["startup: kioskd run --backend headless, process start to the first fully rendered flip"]
            + runs.map { "  \($0.mode): first frame \(show($0.firstFrameMs, "%.1f")) ms, \($0.memoryLine)" }
            + ["  target (issue 16), 800x480: peak RSS <= \(Self.targetPeakRssKib) KiB and private dirty <= \(Self.targetPrivateDirtyKib) KiB: \(met)"])
            .joined(separator: "\n")
    }
}

extension StartupRun.Figures {
    /// Peak RSS, and at exit the private (anonymous), file-backed and private dirty parts, in KiB.
    var memoryLine: String {
        "peak RSS \(show(peakRssKib)) KiB; at exit private \(show(rssAnonKib)), file-backed \(show(rssFileKib)), private dirty \(show(privateDirtyKib)) KiB"
    }
}

extension ImageMemoryRun.Figures {
    var table: String {
        let met = targetMet.map { $0 ? "met" : "NOT met" } ?? "null"
        return [
            "images: one PNG in a \(box) box, \(mode), kioskd run --backend headless",
            "  400x240 file:      \(small.memoryLine)",
            "  12000x12000 file:  \(poster.memoryLine) (file \(show(posterFileBytes)) bytes)",
            "  target (issue 16): peak RSS difference \(show(peakRssDifferenceKib)) KiB <= \(targetKib) KiB: \(met)",
        ].joined(separator: "\n")
    }
}

extension PagesRun.Figures {
    var table: String {
        let met = targetMet.map { $0 ? "met" : "NOT met" } ?? "null"
        return [
            "pages: a signage loop of \(pages) full-screen gradient pages with headlines, \(show(pageSeconds, "%.1f")) s each with fades, \(mode), headless",
            "  1 page:    \(onePage.memoryLine); surfaces \(show(onePageSurfaceBytes)) bytes at exit",
            "  \(pages) pages:  \(twentyPages.memoryLine); surfaces \(show(twentyPagesSurfaceBytes)) bytes at exit",
            "  target (issue 16): peak RSS difference \(show(peakRssDifferenceKib)) KiB <= \(targetDifferenceKib) KiB: \(met)",
            "  in process: \(show(timedChanges)) timed changes, \(show(framesMissedAtChanges)) frames missed at them, \(show(changesThatWaited)) waited for their page",
            "  vblanks missed: \(show(framesMissedAtChanges)) of \(show(vblanksAtChanges)) within 100 ms of a change, \(show(framesMissedElsewhere)) of \(show(vblanksElsewhere)) elsewhere",
            "  page.show to a purged page: shown whole after \(show(pageShowToPurgedMs, "%.1f")) ms",
        ].joined(separator: "\n")
    }
}

extension VideoRun.Scenario {
    private func path(_ f: VideoRun.Figures) -> String {
        guard let path = f.layerPath else { return "null" }
        return f.layerPathReason.map { "\(path) (\($0))" } ?? path
    }

    var table: String {
        func row(_ name: String, _ f: VideoRun.Figures) -> String {
            "  " + name.padding(toLength: 14, withPad: " ", startingAt: 0)
                + [show(f.mainCPUMsPerShownFrame), show(f.totalCPUMsPerShownFrame), show(f.framesDecoded), show(f.framesShown),
                   show(f.framesDropped), show(f.mainMsP99), show(f.otherWidgetUpdates)]
                .map { $0.padding(toLength: 11, withPad: " ", startingAt: 0) }.joined()
        }
        return [
            "video: \(clip) for \(frames) decoded frames, \(mode), headless (decoding on GStreamer's threads)",
            "                main ms    total ms   decoded    shown      dropped    main p99   other upd.",
            row("composited", composited), row("naive copy", naiveCopy), row("plane", plane),
            "  video layer's path: composited run \(path(composited)), plane run \(path(plane)); "
                + "frames copied into the plane's buffers: \(show(plane.planeFramesCopied))",
        ].joined(separator: "\n")
    }
}

extension PlainFillRun.Figures {
    var table: String {
        var lines = ["plain-fill: a full-screen plain fill composed directly (no surface) against copied from its surface, \(mode), alternated, \(calls) calls each",
                     "  fill      damage          direct ms  surface ms  direct/surface"]
        for c in cases {
            lines.append("  " + c.fill.padding(toLength: 10, withPad: " ", startingAt: 0) + c.damage.padding(toLength: 16, withPad: " ", startingAt: 0)
                         + show(c.directMs, "%.3f").padding(toLength: 11, withPad: " ", startingAt: 0)
                         + show(c.surfaceMs, "%.3f").padding(toLength: 12, withPad: " ", startingAt: 0) + show(c.directVsSurface, "%.2f"))
        }
        let renders = surfaceRenderMs.sorted { $0.key < $1.key }.map { "\($0.key) \(show($0.value, "%.1f")) ms" }.joined(separator: ", ")
        lines.append("  the surface path holds \(surfaceBytes) bytes per fill and renders it once (\(renders)); the direct path holds none")
        let kept = drawnWithoutSurface.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value ? "directly" : "from a surface")" }.joined(separator: ", ")
        lines.append("  kioskd draws: \(kept)")
        return lines.joined(separator: "\n")
    }
}
