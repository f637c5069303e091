import Foundation
@testable import KioskApp
import KioskControl
import KioskCore
import KioskDisplay
import KioskRender
import KioskTestSupport
import Logging
import XCTest

/// Scanout verification on the manual clock, over the fault-injecting backend with a fake writeback that reads
/// back what each flip put on screen (the backend's front buffer), spoilt, refused or never: each branch of
/// `ScanoutVerifier` (matched, mismatch with its images and health reason, a failed readback, a fence that never
/// signals, no writeback, the schedule of `health.verify_every`, the corruption hook, the images kept bounded).
final class ScanoutVerifierTests: XCTestCase {
    /// What the fake writeback does with the next present it is asked to read back.
    enum Behaviour { case matching, mismatching, failing, neverCompleting }

    /// A writeback that reads the frame back at the flip of the present it was armed for. Main thread.
    final class FakeWriteback: ScanoutReadback {
        var behaviour = Behaviour.matching
        private(set) var armed = 0
        private var waiting: [(Result<[UInt8], OutputError>) -> Void] = []
        private var listener: ListenerToken?
        private let backend: FaultInjectingBackend

        init(engine: LayerEngine, backend: FaultInjectingBackend) {
            self.backend = backend
            listener = engine.addFlipListener { [unowned self] _ in flipped() }
        }

        func readBackNextPresent(timeout: Duration, _ completion: @escaping (Result<[UInt8], OutputError>) -> Void) throws {
            armed += 1
            waiting.append(completion)
        }

        private func flipped() {
            let taken = waiting
            waiting = []
            for completion in taken {
                switch behaviour {
                case .matching: completion(.success(backend.frontBufferSnapshot() ?? []))
                case .mismatching:
                    // A stale patch in the scanned-out frame: the first 10 % of its bytes off by 100 levels.
                    var pixels = backend.frontBufferSnapshot() ?? []
                    for i in 0..<(pixels.count / 10) { pixels[i] = pixels[i] &+ 100 }
                    completion(.success(pixels))
                case .failing: completion(.failure(OutputError("connector Fake-1: the present carrying the writeback capture was refused")))
                case .neverCompleting: break
                }
            }
        }
    }

    private var loop: MainLoop!
    private var poller: ManualPoller!
    private let pool = RenderQueuePool(strategy: .manual)
    private var backend: FaultInjectingBackend!
    private var engine: LayerEngine!
    private var writeback: FakeWriteback!
    private var verifier: ScanoutVerifier!
    private var directory: URL!
    private var faults: [FrameFault] = []
    private var listeners: [ListenerToken] = []

    private func start(every: Duration? = nil, restartOn: Set<ScreenHealthSettings.Problem> = [], withWriteback: Bool = true) throws {
        directory = try KioskdProcess.scratchDirectory("scanout-verify-\(name.filter(\.isLetter))")
        (loop, poller) = MainLoop.manual(startingAt: MonotonicInstant(nanoseconds: 1_000_000_000))
        let mode = OutputMode(width: 64, height: 48, refreshMilliHz: 60_000)
        backend = try FaultInjectingBackend(mode: mode)
        engine = try LayerEngine(loop: loop, backend: backend, compositor: try ShadowCompositor(size: mode.size), pool: pool)
        var health = ScreenHealthSettings(restartOn: restartOn)
        health.verifyEvery = every
        engine.screenHealth = health
        let layer = Layer(frame: Rect(x: 8, y: 8, width: 32, height: 24), name: "tile")
        layer.backgroundColor = Color(rgb: 0x3366cc)
        engine.rootLayer.addChild(layer)
        listeners = [engine.addFaultListener { [unowned self] in faults.append($0) }]
        try engine.start()
        verifier = try ScanoutVerifier(engine: engine, name: "Fake-1", loop: loop, every: every,
                                       imagesDirectory: directory.appendingPathComponent("scanout").path, logger: Logger(label: "test"))
        writeback = FakeWriteback(engine: engine, backend: backend)
        if withWriteback {
            verifier.adopt(writeback, reason: "")
        } else {
            verifier.adopt(nil, reason: "connector Fake-1: the atomic backend has no writeback connector")
        }
        try settle()
    }

    override func tearDown() {
        engine?.stop()
        listeners = []
        (verifier, writeback, engine, backend, loop, poller) = (nil, nil, nil, nil, nil, nil)
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// Runs the loop at the current instant until nothing is left to do now (the clock does not move).
    private func settleNow() {
        for _ in 0..<1000 {
            let wakeups = loop.wakeups
            loop.runOnce(timeout: .zero)
            if pool.runQueued() > 0 { continue }
            if loop.wakeups == wakeups && engine.transaction.isEmpty { return }
        }
        XCTFail("the loop never went quiet")
    }

    /// Runs `duration` of manual time, the loop settled at each instant it stops at.
    private func run(for duration: Duration) {
        runManualTime(loop, poller, for: duration, settlingAtEnd: true) { settleNow() }
    }

    /// Runs the loop at the current instant, and the clock to the next timer while a flip is pending, until the
    /// engine has nothing left to do and `condition` holds (background jobs finish on their own thread), for at most 10 s.
    private func settle(until condition: () -> Bool = { true }) throws {
        try Poll.until("the loop to settle", timeout: 10, interval: 0) {
            loop.runOnce(timeout: .zero)
            _ = pool.runQueued()
            if backend.isFlipPending, let next = loop.nextTimerDeadline, next > loop.now {
                poller.advance(to: next)
            }
            return !engine.hasPendingWork && condition()
        }
    }

    /// Asks for a verification and waits for its outcome.
    private func verify(corruptComposed: Bool = false) throws -> Result<ScanoutVerifier.Outcome, ScanoutVerifier.VerifyError> {
        var result: Result<ScanoutVerifier.Outcome, ScanoutVerifier.VerifyError>?
        verifier.verify(corruptComposed: corruptComposed) { result = $0 }
        try settle { result != nil }
        return try XCTUnwrap(result)
    }

    /// The PNG files saved (a file being written has a hidden temporary name until it is whole).
    private func savedImages() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("scanout").path)) ?? [])
            .filter { !$0.hasPrefix(".") }.sorted()
    }

    func testAMatchingScanoutIsReportedWithTheFrameAndLeavesTheHealthAlone() throws {
        try start()
        let outcome = try verify().get()
        XCTAssertTrue(outcome.comparison.matched)
        XCTAssertEqual(outcome.comparison.differingPixels, 0)
        XCTAssertEqual(outcome.comparison.maxChannelDifference, 0)
        XCTAssertEqual(outcome.comparison.pixelCount, 64 * 48)
        XCTAssertEqual(outcome.frame, engine.stats.framesPresented, "the frame compared is the last one presented")
        XCTAssertNil(outcome.images)
        XCTAssertEqual(engine.health, FrameHealth(isHealthy: true, reason: "ok"))
        XCTAssertEqual(writeback.armed, 1)
        let reply = ScanoutVerifier.value(outcome)
        XCTAssertEqual(reply["result"], "matched")
        XCTAssertEqual(reply["pixels_differing"], 0)
        XCTAssertEqual(verifier.statsMembers["verify"]?["verifications"], 1)
        XCTAssertEqual(verifier.statsMembers["verify"]?["last"]?["result"], "matched")
        XCTAssertEqual(savedImages(), [])
    }

    func testAMismatchIsAHealthReasonWithAnErrorEventAndBothImagesUntilAVerificationMatches() throws {
        try start(restartOn: [.scanoutMismatch])
        writeback.behaviour = .mismatching
        let outcome = try verify().get()
        XCTAssertFalse(outcome.comparison.matched)
        XCTAssertEqual(outcome.comparison.maxChannelDifference, 100)
        XCTAssertGreaterThan(outcome.comparison.differingFraction, 0.05)
        XCTAssertEqual(ScanoutVerifier.value(outcome)["result"], "mismatch")
        XCTAssertFalse(engine.health.isHealthy, "health.restart_on names scanout_mismatch")
        XCTAssertTrue(engine.health.reason.hasPrefix("scanout_mismatch: frame \(outcome.frame): "), engine.health.reason)
        XCTAssertEqual(faults.map(\.code), [.scanoutMismatch])
        let images = try XCTUnwrap(outcome.images)
        XCTAssertTrue((images.composed as NSString).lastPathComponent.hasPrefix("Headless-1-"), "named after the connector: \(images.composed)")
        try Poll.until("both images to be written") { savedImages().count == 2 }
        XCTAssertEqual(savedImages(), [images.composed, images.scanout].map { ($0 as NSString).lastPathComponent }.sorted())
        // Each file is the frame it names, as PNG.
        for path in [images.composed, images.scanout] {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            XCTAssertEqual(Array(data.prefix(4)), [0x89, 0x50, 0x4e, 0x47], path)
        }
        XCTAssertEqual(verifier.statsMembers["verify"]?["mismatches"], 1)

        writeback.behaviour = .matching
        XCTAssertTrue(try verify().get().comparison.matched)
        XCTAssertEqual(engine.health, FrameHealth(isHealthy: true, reason: "ok"))
    }

    func testAMismatchIsHealthyUnlessRestartOnNamesIt() throws {
        try start()
        writeback.behaviour = .mismatching
        XCTAssertFalse(try verify().get().comparison.matched)
        XCTAssertTrue(engine.health.isHealthy)
        XCTAssertTrue(engine.health.reason.hasPrefix("scanout_mismatch: "), engine.health.reason)
    }

    func testOnlyTheLastFewMismatchPairsAreKept() throws {
        try start()
        writeback.behaviour = .mismatching
        for _ in 0..<(ScanoutVerifier.keptPairs + 2) {
            XCTAssertFalse(try verify().get().comparison.matched)
        }
        // The newest pairs stay: numbers 3 to 5.
        let numbers = { self.savedImages().map { String($0.dropFirst("Headless-1-yyyymmddThhmmssZ-".count).prefix(4)) }.sorted() }
        try Poll.until("the last pair to be written and the oldest removed", reading: numbers,
                       satisfies: { $0 == ["0003", "0003", "0004", "0004", "0005", "0005"] })
    }

    func testAFailedReadbackIsAnErrorAndNotAMismatch() throws {
        try start()
        writeback.behaviour = .failing
        guard case .failure(let error) = try verify() else { return XCTFail("a refused capture cannot match") }
        XCTAssertEqual(error.code, "readback_failed")
        XCTAssertEqual(error.message, "output Fake-1: connector Fake-1: the present carrying the writeback capture was refused")
        XCTAssertEqual(engine.health, FrameHealth(isHealthy: true, reason: "ok"))
        XCTAssertEqual(verifier.failures, 1)
        XCTAssertEqual(verifier.statsMembers["verify"]?["last_failure"]?.stringValue, error.message)
    }

    func testAReadbackThatNeverCompletesTimesOutAndTheNextOneWorks() throws {
        try start()
        writeback.behaviour = .neverCompleting
        var result: Result<ScanoutVerifier.Outcome, ScanoutVerifier.VerifyError>?
        verifier.verify { result = $0 }
        // A second request while one is under way shares its outcome.
        var second: Result<ScanoutVerifier.Outcome, ScanoutVerifier.VerifyError>?
        verifier.verify { second = $0 }
        try settle()
        XCTAssertNil(result, "nothing is answered before the timeout")
        run(for: ScanoutVerifier.timeout)
        guard case .failure(let error) = try XCTUnwrap(result) else { return XCTFail("a readback that never came cannot match") }
        XCTAssertEqual(error.code, "timeout")
        XCTAssertEqual(error.message, "output Fake-1: no frame was presented and read back within 3.0 seconds")
        XCTAssertEqual(second.map { "\($0)" }, result.map { "\($0)" })
        XCTAssertEqual(writeback.armed, 1)
        writeback.behaviour = .matching
        XCTAssertTrue(try verify().get().comparison.matched)
    }

    func testWithoutWritebackVerificationIsUnavailableWithTheReason() throws {
        try start(every: .seconds(60), withWriteback: false)
        guard case .failure(let error) = try verify() else { return XCTFail("no writeback, no verification") }
        XCTAssertEqual(error.code, "unavailable")
        XCTAssertEqual(error.message, "output Fake-1: scanout verification is unavailable: connector Fake-1: the atomic backend has no writeback connector")
        XCTAssertEqual(verifier.statsMembers["verify"], "unavailable")
        XCTAssertEqual(verifier.statsMembers["verify_unavailable_reason"], "connector Fake-1: the atomic backend has no writeback connector")
        run(for: .seconds(150))
        XCTAssertEqual(writeback.armed, 0)
        XCTAssertEqual(verifier.verifications, 0)
    }

    /// What the composed frame lacks cannot be compared: a pointer cursor on its plane is waited out.
    func testACursorOnItsPlaneIsWaitedOut() throws {
        try start(every: .seconds(60))
        var cursorShown = true
        verifier.cursorOnPlane = { cursorShown }
        guard case .failure(let error) = try verify() else { return XCTFail("the cursor is not in the composed frame") }
        XCTAssertEqual(error.code, "planes_in_use")
        run(for: .seconds(60))
        XCTAssertEqual(writeback.armed, 0, "the scheduled verification is skipped while the cursor shows")
        cursorShown = false
        run(for: .seconds(60))
        try settle { verifier.verifications == 1 }
    }

    func testVerifyEveryVerifiesOnTheClockAndOffNever() throws {
        try start(every: .seconds(60))
        run(for: .seconds(59))
        XCTAssertEqual(writeback.armed, 0)
        for count in 1...3 {
            run(for: count == 1 ? .seconds(1) : .seconds(60))
            try settle { verifier.verifications == count }
        }
        XCTAssertEqual(writeback.armed, 3)
        XCTAssertEqual(verifier.mismatches, 0)
        XCTAssertEqual(verifier.statsMembers["verify"]?["every_s"], .double(60))
        tearDown()

        try start(every: nil)
        run(for: .seconds(3600))
        XCTAssertEqual(writeback.armed, 0)
        XCTAssertEqual(verifier.statsMembers["verify"]?["every_s"], .null)
    }

    func testTheCorruptionHookTurnsAMatchingScanoutIntoAMismatchOnlyWhereItIsEnabled() throws {
        try start()
        guard case .failure(let refused) = try verify(corruptComposed: true) else { return XCTFail("the hook is off by default") }
        XCTAssertEqual(refused.code, "invalid_argument")
        XCTAssertEqual(refused.message, "corrupt_composed: a test hook, accepted only from kioskd run --verify-corrupt-composed")
        XCTAssertEqual(writeback.armed, 0)
        verifier.corruptionHookEnabled = true
        XCTAssertTrue(try verify().get().comparison.matched, "the hook spoils only the verification that asks for it")
        let outcome = try verify(corruptComposed: true).get()
        XCTAssertFalse(outcome.comparison.matched)
        XCTAssertTrue(engine.health.reason.hasPrefix("scanout_mismatch: "), engine.health.reason)
        XCTAssertEqual(faults.map(\.code), [.scanoutMismatch])
    }

    func testTheComparisonCountsPixelsBeyondTheChannelToleranceAndIgnoresTheXByte() throws {
        let a: [UInt8] = [10, 20, 30, 0, 10, 20, 30, 0, 10, 20, 30, 0, 10, 20, 30, 0]
        var b = a
        b[3] = 255          // the X byte: never compared
        b[4] = 18           // 8 levels: within the tolerance
        b[10] = 50          // 20 levels: differs
        let comparison = try ScanoutComparison(composed: a, scanout: b, width: 2, height: 2,
                                               tolerance: ScanoutTolerance(channelDifference: 8, pixelFraction: 0.2))
        XCTAssertEqual(comparison.differingPixels, 1)
        XCTAssertEqual(comparison.maxChannelDifference, 20)
        XCTAssertEqual(comparison.differingFraction, 0.25)
        XCTAssertFalse(comparison.matched, "a quarter of the pixels is beyond 20 %")
        XCTAssertThrowsError(try ScanoutComparison(composed: a, scanout: [], width: 2, height: 2)) {
            XCTAssertEqual("\($0)", "scanout comparison: frames of 16 and 0 bytes for 2x2 (16 bytes each expected)")
        }
    }
}
