import KioskCore
import XCTest

/// The order an output falls back in after the kernel refused its configuration (EINVAL, ENOSPC).
final class ConfigurationFallbackTests: XCTestCase {
    private let requested = OutputMode(width: 1024, height: 768, refreshMilliHz: 75_000)
    private let preferred = OutputMode(width: 1024, height: 768, refreshMilliHz: 60_000, isPreferred: true)
    private let largerPreferred = OutputMode(width: 1920, height: 1080, refreshMilliHz: 60_000, isPreferred: true)

    private func steps(_ current: OutputConfiguration, _ modes: [OutputMode], atomic: Bool = true) -> [OutputConfiguration] {
        ConfigurationFallback(from: current, modes: modes, atomicAvailable: atomic).steps
    }

    func testAtomicFallsBackToLegacyBeforeTheModeChanges() {
        XCTAssertEqual(steps(OutputConfiguration(.atomic, requested), [requested, preferred]), [
            OutputConfiguration(.legacy, requested),
            OutputConfiguration(.atomic, preferred),
            OutputConfiguration(.legacy, preferred),
        ])
    }

    func testLegacyOnlyOutputsFallBackToThePreferredModeWithLegacy() {
        XCTAssertEqual(steps(OutputConfiguration(.legacy, requested), [requested, preferred], atomic: false),
                       [OutputConfiguration(.legacy, preferred)])
    }

    func testAnOutputAlreadyInThePreferredModeOnlyChangesTheCommitAPI() {
        XCTAssertEqual(steps(OutputConfiguration(.atomic, preferred), [requested, preferred]),
                       [OutputConfiguration(.legacy, preferred)])
        XCTAssertEqual(steps(OutputConfiguration(.legacy, preferred), [requested, preferred], atomic: false), [])
    }

    func testAPreferredModeOfAnotherSizeIsLeftOutAndSaysWhy() {
        let fallback = ConfigurationFallback(from: OutputConfiguration(.atomic, requested), modes: [largerPreferred, requested],
                                             atomicAvailable: true)
        XCTAssertEqual(fallback.steps, [OutputConfiguration(.legacy, requested)])
        let note = try? XCTUnwrap(fallback.note)
        XCTAssertTrue(note?.contains("1920x1080@60") ?? false, note ?? "no note")
        XCTAssertTrue(note?.contains("size differs") ?? false, note ?? "no note")
    }

    func testNoPreferredModeMeansNoModeFallback() {
        let other = OutputMode(width: 1024, height: 768, refreshMilliHz: 60_000)
        let fallback = ConfigurationFallback(from: OutputConfiguration(.atomic, requested), modes: [requested, other],
                                             atomicAvailable: true)
        XCTAssertEqual(fallback.steps, [OutputConfiguration(.legacy, requested)])
        XCTAssertNil(fallback.note)
    }

    func testDescriptionsNameTheAPIAndTheExactMode() {
        let mode = OutputMode(width: 1920, height: 1080, refreshMilliHz: 59_940)
        XCTAssertEqual(OutputConfiguration(.legacy, mode).description, "legacy commits, mode 1920x1080@59.94")
    }
}
