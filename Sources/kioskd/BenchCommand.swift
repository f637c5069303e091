import ArgumentParser
import Foundation
import KioskBench
import KioskCore
import KioskRuntime
import KioskVideo

/// `kioskd bench`: scenarios measured side by side, each contestant's figures as measured (or null), with the
/// ratios between them. `dashboard`: the default scene, the engine with both render-queue strategies against a
/// naive single-threaded full redraw (each widget drawn straight into the frame, and each through a surface of its
/// own) and one full-frame memcpy. `page-slide`, `page-fade`: two full-screen
/// pages changing in turn, the engine's CPU per frame (composed, and with two overlay planes) against one full-frame
/// memcpy (`PageTransitionRun`). `update-storm`: a large wrapped text updated at
/// 50 Hz, faster than it renders, beside a seconds clock and a label: how far each widget's shown content lags its
/// newest data, frames composed per second, and issue 10's target (lag <= 2 x render time + 1 frame). `startup`:
/// this binary started as `kioskd run`, process start to the first flip of the fully rendered default scene, and
/// its memory (peak, private, file-backed, private dirty) as the child read it from procfs. `images`: the same
/// 800x480 scene with a 400x240 PNG and with a 12000x12000 one in a 400x240 box, peak RSS of each. `pages`: a
/// 20-page signage loop at 1920x1080 against the same file with one page, each page --frames / 300 s (0.5 to 1 s): peak
/// RSS, surface memory, frames missed at timed changes, and `page.show` to a purged page. `video` (run only when named): a 1920x1080 30 fps clip decoded by
/// GStreamer, the composited path and the overlay-plane path (a headless output with a plane, whose buffers the
/// frames are copied into as on DRM) against a naive copy of each decoded frame into the scanout buffer: main-thread
/// CPU per shown frame, frames decoded, shown and dropped, main-thread p99, the video layer's path. `web` (run only
/// when named): a page from loopback with a CSS animation in a quarter of 1024x768, in a `web` widget beside a clock
/// and a ticker, against `cog -P headless` showing the same page, each for --frames / 60 seconds: each process tree's
/// resident memory and CPU, kioskd's page frames per second and its main thread's CPU per page frame, then the loop's
/// wake-ups with the page static (for --frames / 30 seconds). `vnc`: the default scene at --mode viewed over VNC,
/// bytes per second to a viewer asking for changes against one asking for whole frames, in the same run (`VNCRun`).
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure the engine on scenarios (headless): dashboard, page-slide, page-fade, update-storm, startup, images, pages, plain-fill, fingerprint, vnc, video, web.")

    /// The scenarios run when none is named.
    static let scenarios = ["dashboard", "page-slide", "page-fade", "update-storm", "startup", "images", "pages", "plain-fill", "fingerprint", "vnc"]
    /// Run only when named: `video` first encodes its clip (unless given one) and plays it in real time; `web` runs
    /// WebKit and cog for seconds each.
    static let namedOnly = ["video", "web"]

    @Option(help: ArgumentHelp("Run one scenario: \((BenchCommand.scenarios + BenchCommand.namedOnly).joined(separator: ", ")); default: all but video and web.", valueName: "NAME"))
    var scenario: String?

    @Option(help: ArgumentHelp("The clip of the video scenario (at least --frames frames long); default: a 1920x1080 30 fps H.264 clip made with gst-launch-1.0.", valueName: "FILE"))
    var clip: String?

    @Option(help: "Frames measured per contestant (after the warm-up).")
    var frames = 300

    @Option(help: "Output size and refresh of the dashboard and vnc scenarios, WxH[@Hz] (page-slide, page-fade and update-storm run at 1920x1080).")
    var mode = ModeRequest(width: 1920, height: 1080, refreshHz: 60)

    @Option(help: ArgumentHelp("Render workers of the update-storm scenario, comma-separated; default: 1, 2 and one per online processor.", valueName: "N,N"))
    var workers: String?

    @Flag(help: "Print one JSON object instead of the tables.")
    var json = false

    func validate() throws {
        guard frames >= 10 else { throw ValidationError("--frames \(frames): at least 10") }
        if let scenario, !(Self.scenarios + Self.namedOnly).contains(scenario) {
            throw ValidationError("--scenario \(scenario): one of \((Self.scenarios + Self.namedOnly).joined(separator: ", "))")
        }
        if let workers { do { _ = try UpdateStorm.workerCounts(parsing: workers) } catch { throw ValidationError("\(error)") } }
    }

    func run() throws {
        do { try runBench() } catch let exit as ExitCode { throw exit } catch { throw fail(error) }
    }

    private func runBench() throws {
        var report = BenchReport(frames: frames)
        for name in scenario.map({ [$0] }) ?? Self.scenarios {
            switch name {
            case "dashboard": report.dashboard = try dashboard()
            case "page-slide": report.pageSlide = try PageTransitionRun.measure(transition: "slide", frames: frames)
            case "page-fade": report.pageFade = try PageTransitionRun.measure(transition: "fade", frames: frames)
            case "update-storm": report.updateStorm = try updateStorm()
            case "images": report.images = try ImageMemoryRun.measure(frames: 30)
            case "pages": report.pages = try PagesRun.measure(pageSeconds: min(1, max(0.5, Double(frames) / 300)))
            case "plain-fill": report.plainFill = try PlainFillRun.measure()
            case "fingerprint": report.fingerprint = try FingerprintRun.measure()
            case "vnc": report.vnc = try vnc()
            case "video": report.video = try video()
            case "web": report.web = try WebRun.run(seconds: max(2, Double(frames) / 60), staticSeconds: max(2, Double(frames) / 30))
            default: report.startup = try startup()
            }
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print(report.table)
        }
    }

    private var displayMode: OutputMode {
        OutputMode(width: mode.width, height: mode.height, refreshMilliHz: mode.refreshMilliHz ?? 60_000)
    }

    private func dashboard() throws -> DashboardScenario {
        guard let path = BundledScenes.defaultScene else {
            throw OutputError("bench dashboard: the default scene is missing: kioskd_KioskRuntime.resources must be installed next to the kioskd binary")
        }
        let m = displayMode
        let bytes = m.width * m.height * 4
        return DashboardScenario(
            mode: m.description, fullFrameBytes: bytes,
            engineRoundRobin: try Contestants.engine(scene: path, mode: m, frames: frames, strategy: .roundRobin),
            enginePriority: try Contestants.engine(scene: path, mode: m, frames: frames, strategy: .priority),
            naiveDirect: try Contestants.naive(scene: path, mode: m, frames: frames, strategy: .direct),
            naiveThroughSurfaces: try Contestants.naive(scene: path, mode: m, frames: frames, strategy: .throughSurfaces),
            memcpyMsPerFrame: Contestants.memcpyMsPerFrame(bytes: bytes, frames: frames))
    }

    /// At 1920x1080: updates for --frames refreshes (at least three seconds), then until every update is shown.
    private func updateStorm() throws -> UpdateStorm.Scenario {
        let m = OutputMode(width: 1920, height: 1080, refreshMilliHz: 60_000)
        let counts = try workers.map(UpdateStorm.workerCounts(parsing:)) ?? UpdateStorm.defaultWorkerCounts
        return try UpdateStorm.scenario(mode: m, seconds: max(3, Double(frames) / 60), workerCounts: counts)
    }

    /// The default scene at --mode, viewed over VNC for --frames refreshes (at least two seconds).
    private func vnc() throws -> VNCRun.Figures {
        guard let path = BundledScenes.defaultScene else {
            throw OutputError("bench vnc: the default scene is missing: kioskd_KioskRuntime.resources must be installed next to the kioskd binary")
        }
        return try VNCRun.measure(scene: path, mode: displayMode, seconds: max(2, Double(frames) / 60))
    }

    private func video() throws -> VideoRun.Scenario {
        let m = OutputMode(width: 1920, height: 1080, refreshMilliHz: 60_000)
        let path = try clip ?? BenchClip.make(width: m.width, height: m.height, frames: frames + 30)
        return try VideoRun.run(clip: path, mode: m, frames: frames) { loop in try GStreamerVideo(loop: loop) }
    }

    private func startup() throws -> StartupScenario {
        StartupScenario(runs: try ["800x480", "1920x1080"].map { try StartupRun.measure(mode: $0, frames: 30) })
    }
}
