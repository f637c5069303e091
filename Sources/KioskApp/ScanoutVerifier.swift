import Foundation
import KioskControl
import KioskCore
import KioskRender
import Logging

/// Scanout verification of one output: every `health.verify_every` (10 minutes by default) and on request
/// (`output.verify`, also answered as `display.verify`), the frame the CRTC produces for one present is read back
/// (`ScanoutReadback`: a writeback connector on DRM) and compared with the composed frame of the same present
/// (`LayerEngine.captureNextPresent`) within `ScanoutTolerance`. A mismatch becomes the engine's health reason
/// `scanout_mismatch` (stats, the MQTT state, an `error` event; unhealthy when `health.restart_on` names it) until a
/// verification matches, and both frames are saved as PNG under `imagesDirectory` (the state directory's `scanout/`),
/// keeping the last `keptPairs` pairs. Where the output has no writeback the verifier is unavailable, with the reason.
///
/// Nothing waits on the loop: the readback's fence is watched by the loop and its pixels copied off it, and the
/// comparison and the PNG encoding run on a background queue. One verification at a time: a request while one is
/// under way gets its result; a scheduled one is skipped. Main thread.
final class ScanoutVerifier {
    /// One verification's outcome, as `output.verify` replies and `stats` shows the last one. A plain value.
    struct Outcome: Sendable, Equatable {
        var comparison: ScanoutComparison
        /// The engine's present count at the compared frame (`frame` in replies; `frames_presented` in `stats`).
        var frame: Int
        /// The PNG pair saved for a mismatch.
        var images: (composed: String, scanout: String)?
        var at: MonotonicInstant

        static func == (a: Outcome, b: Outcome) -> Bool {
            a.comparison == b.comparison && a.frame == b.frame && a.images?.composed == b.images?.composed && a.at == b.at
        }
    }

    typealias Completion = (Result<Outcome, VerifyError>) -> Void

    /// Why a verification has no outcome; `code` is the control protocol's error code.
    struct VerifyError: Error, Equatable, CustomStringConvertible {
        var code: String
        var message: String
        var description: String { message }
    }

    /// How long the two frames may take to arrive after the request: a present, its flip and the writeback.
    static let timeout = Duration.seconds(3)
    /// Mismatch image pairs kept under `imagesDirectory`; older ones are removed.
    static let keptPairs = 3

    let engine: LayerEngine
    let name: String
    private let loop: MainLoop
    private let jobs: BackgroundJobs
    private let logger: Logger
    let tolerance: ScanoutTolerance
    /// Where mismatch pairs go; nil keeps none (no state directory).
    let imagesDirectory: String?
    /// Test hook (`kioskd run --verify-corrupt-composed`): `output.verify` accepts `corrupt_composed: true`, which
    /// spoils the copy of the composed frame compared, so a scanout path that works can be shown to be checked.
    var corruptionHookEnabled = false
    /// Whether the pointer's cursor is shown on a cursor plane now: the writeback has it, the composed frame not.
    var cursorOnPlane: () -> Bool = { false }

    /// The readback of the display adopted now, nil while there is none or it has no writeback.
    private(set) var readback: (any ScanoutReadback)?
    /// Why there is no readback, for `stats` and `output.verify`'s error.
    private(set) var unavailableReason = "no display is connected"
    private var timer: TimerHandle?
    private var current: Running?
    /// Verifications finished (matched or not), mismatches, and those that failed (no frame, a fence timeout).
    private(set) var verifications = 0
    private(set) var mismatches = 0
    private(set) var failures = 0
    private(set) var last: Outcome?
    /// The last failure's reason.
    private(set) var lastFailure: String?
    /// Mismatch pairs saved so far (numbers the files).
    private var pairsSaved = 0
    /// Between scheduled verifications; nil: on request only.
    let every: Duration?

    private final class Running {
        var composed: [UInt8]??
        var scanout: Result<[UInt8], OutputError>?
        var frame = 0
        var waiting: [Completion] = []
        var deadline: TimerHandle?
        var size: Size
        var corrupt: Bool
        init(size: Size, corrupt: Bool) { self.size = size; self.corrupt = corrupt }
    }

    init(engine: LayerEngine, name: String, loop: MainLoop, every: Duration?, imagesDirectory: String?,
         tolerance: ScanoutTolerance = ScanoutTolerance(), logger: Logger) throws {
        self.engine = engine
        self.name = name
        self.loop = loop
        self.imagesDirectory = imagesDirectory
        self.tolerance = tolerance
        self.logger = logger
        self.every = every
        jobs = try BackgroundJobs(loop: loop, label: "kioskd.scanout-verify")
        if let every {
            timer = loop.addTimer(after: every, repeating: every) { [unowned self] in scheduled() }
        }
    }

    deinit {
        timer?.cancel()
        current?.deadline?.cancel()
    }

    /// The display adopted now can be read back through `readback`; nil with `reason` when it cannot.
    func adopt(_ readback: (any ScanoutReadback)?, reason: String) {
        self.readback = readback
        unavailableReason = reason
    }

    /// Verifies the next present; `completion` runs on the main thread with the outcome or why there is none.
    /// `corruptComposed` (the test hook, only while `corruptionHookEnabled`) spoils the composed copy compared.
    func verify(corruptComposed: Bool = false, _ completion: @escaping Completion) {
        if corruptComposed, !corruptionHookEnabled {
            return completion(.failure(VerifyError(code: "invalid_argument", message: "corrupt_composed: a test hook, accepted only from kioskd run --verify-corrupt-composed")))
        }
        if let current {
            current.waiting.append(completion)
            return
        }
        guard let readback, let backend = engine.backend else {
            return completion(.failure(VerifyError(code: "unavailable", message: "output \(name): scanout verification is unavailable: \(unavailableReason)")))
        }
        guard backend.isPoweredOn else {
            return completion(.failure(VerifyError(code: "display_off", message: "output \(name): the display is off; nothing is scanned out to verify")))
        }
        guard engine.layersOnPlanes == 0 else {
            return completion(.failure(VerifyError(code: "planes_in_use", message: "output \(name): \(engine.layersOnPlanes) layer(s) are on planes of their own, which the composed frame does not hold; verification waits for a frame composed whole")))
        }
        guard !cursorOnPlane() else {
            return completion(.failure(VerifyError(code: "planes_in_use", message: "output \(name): the pointer's cursor is shown on its cursor plane, which the composed frame does not hold; verification waits for it to hide")))
        }
        let running = Running(size: backend.info.mode.size, corrupt: corruptComposed)
        running.waiting = [completion]
        do {
            try readback.readBackNextPresent(timeout: Self.timeout) { [weak self, running] result in
                running.scanout = result
                self?.arrived(running)
            }
        } catch {
            return completion(.failure(VerifyError(code: "display_error", message: "output \(name): \(error)")))
        }
        current = running
        // The present the readback rides on: the next one. Its count is the frame number replies give.
        running.frame = engine.stats.framesPresented + 1
        engine.captureNextPresent { [weak self, running] pixels in
            running.composed = .some(pixels)
            self?.arrived(running)
        }
        let late = VerifyError(code: "timeout", message: "output \(name): no frame was presented and read back within \(Self.timeout)")
        running.deadline = loop.addTimer(after: Self.timeout) { [weak self, running] in self?.finish(running, .failure(late)) }
    }

    private func scheduled() {
        guard current == nil, readback != nil, engine.backend?.isPoweredOn == true, engine.layersOnPlanes == 0, !cursorOnPlane() else { return }
        verify { [logger, name] result in
            if case .failure(let error) = result { logger.warning("output \(name): scheduled scanout verification: \(error)") }
        }
    }

    private func arrived(_ running: Running) {
        guard running === current, let composed = running.composed, let scanout = running.scanout else { return }
        running.deadline?.cancel()
        let scanned: [UInt8]
        switch scanout {
        case .failure(let error):
            return finish(running, .failure(VerifyError(code: "readback_failed", message: "output \(name): \(error)")))
        case .success(let pixels): scanned = pixels
        }
        guard let composed else {
            return finish(running, .failure(VerifyError(code: "no_frame", message: "output \(name): the composed frame was not presented (the output went dark or stopped)")))
        }
        let size = running.size, tolerance = self.tolerance, corrupt = running.corrupt
        jobs.run({ () -> Result<ScanoutComparison, VerifyError> in
            var compared = composed
            if corrupt { Self.corrupt(&compared) }
            do {
                return .success(try ScanoutComparison(composed: compared, scanout: scanned, width: size.width, height: size.height, tolerance: tolerance))
            } catch {
                return .failure(VerifyError(code: "readback_failed", message: "\(error)"))
            }
        }, then: { [weak self] result in
            guard let self else { return }
            switch result {
            case .failure(let error): finish(running, .failure(error))
            case .success(let comparison):
                var outcome = Outcome(comparison: comparison, frame: running.frame, at: loop.now)
                if !comparison.matched {
                    var composedImage = composed
                    if corrupt { Self.corrupt(&composedImage) }
                    outcome.images = save(composed: composedImage, scanout: scanned, size: size)
                }
                finish(running, .success(outcome))
            }
        })
    }

    /// Spoils a composed frame the way a broken scanout path would show differently: the top half's colours inverted.
    static func corrupt(_ pixels: inout [UInt8]) {
        let half = pixels.count / 2
        for i in 0..<half where i % 4 != 3 { pixels[i] = ~pixels[i] }
    }

    private func finish(_ running: Running, _ result: Result<Outcome, VerifyError>) {
        guard running === current else { return }
        current = nil
        running.deadline?.cancel()
        switch result {
        case .success(let outcome):
            verifications += 1
            last = outcome
            if outcome.comparison.matched {
                engine.scanoutVerified(mismatch: nil)
                logger.debug("output \(name): scanout verified at frame \(outcome.frame): \(outcome.comparison.summary)")
            } else {
                mismatches += 1
                let saved = outcome.images.map { "; saved \($0.composed) and \($0.scanout)" } ?? ""
                logger.error("output \(name): the scanned-out frame differs from the composed one: \(outcome.comparison.summary)\(saved)")
                engine.scanoutVerified(mismatch: "frame \(outcome.frame): \(outcome.comparison.summary)")
            }
        case .failure(let error):
            failures += 1
            lastFailure = error.message
        }
        for completion in running.waiting { completion(result) }
    }

    /// Writes the pair as `CONNECTOR-TIME-NNNN-composed.png` and `…-scanout.png` off the loop, then removes all but the last
    /// `keptPairs` pairs; returns the paths the files are written to, nil without a directory.
    private func save(composed: [UInt8], scanout: [UInt8], size: Size) -> (composed: String, scanout: String)? {
        guard let imagesDirectory else { return nil }
        pairsSaved += 1
        // Named after the connector (an output without one named in the config is called `auto`).
        let connector = engine.backend?.info.connector ?? name
        let stem = (imagesDirectory as NSString).appendingPathComponent(
            ScanoutVerifier.fileStem(output: connector, number: pairsSaved, at: Date()))
        let paths = (composed: stem + "-composed.png", scanout: stem + "-scanout.png")
        let directory = imagesDirectory, kept = Self.keptPairs, output = PageCaptures.fileName(output: connector)
        jobs.run({ () -> String? in
            do {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                try writePNG(xrgb8888: composed, size: size, stride: size.width * 4, to: paths.composed)
                try writePNG(xrgb8888: scanout, size: size, stride: size.width * 4, to: paths.scanout)
                ScanoutVerifier.prune(directory, output: output, keeping: kept)
            } catch {
                return "\(error)"
            }
            return nil
        }, then: { [logger, name] problem in
            if let problem { logger.error("output \(name): scanout mismatch images: \(problem)") }
        })
        return paths
    }

    /// `OUTPUT-YYYYmmddTHHMMSSZ-NNNN`: the output's name as a file name, the UTC time, the pair's number in this run.
    static func fileStem(output: String, number: Int, at date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMdd'T'HHmmss'Z'"
        return "\(PageCaptures.fileName(output: output))-\(formatter.string(from: date))-" + String(format: "%04d", number)
    }

    /// Removes the oldest pairs of `output` in `directory` (by name: time, then number) beyond `keeping`.
    static func prune(_ directory: String, output: String, keeping: Int) {
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { $0.hasPrefix(output + "-") && ($0.hasSuffix("-composed.png") || $0.hasSuffix("-scanout.png")) }
        let stems = Set(files.map { String($0.dropLast($0.hasSuffix("-composed.png") ? 13 : 12)) }).sorted()
        for stem in stems.dropLast(keeping) {
            for suffix in ["-composed.png", "-scanout.png"] {
                try? FileManager.default.removeItem(atPath: (directory as NSString).appendingPathComponent(stem + suffix))
            }
        }
    }

    /// `stats`' `verify`: `unavailable` (with `verify_unavailable_reason` beside it), or the schedule, the counts
    /// and the last outcome.
    var statsMembers: [String: JSONValue] {
        guard readback != nil else {
            return ["verify": "unavailable", "verify_unavailable_reason": .string(unavailableReason)]
        }
        var members: [String: JSONValue] = [
            "verifications": .int(Int64(verifications)), "mismatches": .int(Int64(mismatches)), "failures": .int(Int64(failures)),
            "every_s": every.map { .double($0.milliseconds / 1000) } ?? .null,
            "last": last.map { Self.value($0) } ?? .null,
        ]
        if let lastFailure { members["last_failure"] = .string(lastFailure) }
        return ["verify": .object(members)]
    }

    /// An outcome as `output.verify` replies with it.
    static func value(_ outcome: Outcome) -> JSONValue {
        let c = outcome.comparison
        var members: [String: JSONValue] = [
            "result": .string(c.matched ? "matched" : "mismatch"),
            "frame": .int(Int64(outcome.frame)),
            "width": .int(Int64(c.width)), "height": .int(Int64(c.height)),
            "pixels_differing": .int(Int64(c.differingPixels)),
            "fraction_differing": .double(c.differingFraction),
            "max_channel_difference": .int(Int64(c.maxChannelDifference)),
            "tolerance": ["channel_difference": .int(Int64(c.tolerance.channelDifference)), "pixel_fraction": .double(c.tolerance.pixelFraction)],
        ]
        if let images = outcome.images {
            members["images"] = ["composed": .string(images.composed), "scanout": .string(images.scanout)]
        }
        return .object(members)
    }
}
