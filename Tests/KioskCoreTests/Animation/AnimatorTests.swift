#if canImport(Glibc)
import Glibc
#endif
import KioskCore
import XCTest

/// A plain animatable object: one number, or several.
private final class Box {
    var value: [Double]
    init(_ value: Double...) { self.value = value }
}

private final class Swatch {
    var color: Color
    init(_ color: Color) { self.color = color }
}

extension AnimatableProperty where Target == Box {
    fileprivate static var value: Self {
        Self(name: "value", componentCount: 1, read: { $0.value }, write: { $0.value = $1 })
    }
}

extension AnimatableProperty where Target == Swatch {
    fileprivate static var color: Self {
        Self(name: "color", componentCount: 4,
             read: { [$0.color.red, $0.color.green, $0.color.blue, $0.color.alpha] },
             write: { $0.color = Color(red: $1[0], green: $1[1], blue: $1[2], alpha: $1[3]) })
    }
}

/// An instant `seconds` after an arbitrary origin of the manual clock.
private func at(_ seconds: Double) -> MonotonicInstant {
    MonotonicInstant(nanoseconds: 5_000_000_000 + UInt64((seconds * 1e9).rounded()))
}

final class AnimatorTests: XCTestCase {
    // MARK: Basic

    func testBasicAnimationValuesAtSteps() throws {
        let animator = Animator()
        let box = Box(0)
        var completions: [(finished: Bool, value: Double)] = []
        try animator.animate(box, .value, to: [10], curve: .basic(duration: 1, timing: .linear)) { finished in
            completions.append((finished, box.value[0]))
        }
        XCTAssertEqual(box.value, [0], "nothing moves before the first step")
        XCTAssertTrue(animator.isAnimating(box, key: "value"))

        animator.step(to: at(3))
        XCTAssertEqual(box.value[0], 0, "the clock starts at the first step, at the start value")
        animator.step(to: at(3.25))
        XCTAssertEqual(box.value[0], 2.5, accuracy: 1e-9)
        animator.step(to: at(3.5))
        XCTAssertEqual(box.value[0], 5, accuracy: 1e-9)
        animator.step(to: at(3.999))
        XCTAssertEqual(box.value[0], 9.99, accuracy: 1e-9)
        XCTAssertTrue(completions.isEmpty)
        XCTAssertEqual(animator.currentVelocity(of: box, key: "value") ?? [], [10], accuracy: 1e-9)

        animator.step(to: at(4.02))
        XCTAssertEqual(box.value, [10], "the end value exactly, even past the end")
        XCTAssertEqual(completions.count, 1)
        XCTAssertEqual(completions.first?.finished, true)
        XCTAssertEqual(completions.first?.value, 10, "the completion runs after the final value is written")
        XCTAssertFalse(animator.isAnimating(box, key: "value"))
        XCTAssertEqual(animator.activeCount, 0)

        animator.step(to: at(5))
        XCTAssertEqual(completions.count, 1, "called once")
    }

    func testBasicAnimationFollowsItsEasing() throws {
        let animator = Animator()
        let box = Box(20)
        try animator.animate(box, .value, to: [-20], curve: .basic(duration: 0.5, timing: .easeInOut))
        animator.step(to: at(0))
        for fraction in [0.1, 0.3, 0.5, 0.8] {
            animator.step(to: at(0.5 * fraction))
            XCTAssertEqual(box.value[0], 20 - 40 * TimingFunction.easeInOut.value(at: fraction), accuracy: 1e-9)
            let slope = TimingFunction.easeInOut.slope(at: fraction)
            XCTAssertEqual(animator.currentVelocity(of: box, key: "value") ?? [], [slope * -40 / 0.5], accuracy: 1e-9)
        }
    }

    func testZeroDurationJumpsAtTheFirstStep() throws {
        let animator = Animator()
        let box = Box(1)
        var finished: Bool?
        try animator.animate(box, .value, to: [4], curve: .basic(duration: 0)) { finished = $0 }
        animator.step(to: at(0))
        XCTAssertEqual(box.value, [4])
        XCTAssertEqual(finished, true)
    }

    // MARK: Spring and decay

    func testSpringFollowsSpringMotionAndEndsExactly() throws {
        let animator = Animator()
        let box = Box(0)
        var finished: [Bool] = []
        try animator.animate(box, .value, to: [100], curve: .spring(stiffness: 300, damping: 20)) { finished.append($0) }
        let reference = SpringMotion(stiffness: 300, damping: 20, mass: 1, from: 0, to: 100)
        var t = 0.0
        while finished.isEmpty, t < 5 {
            animator.step(to: at(t))
            let elapsed = Double(at(t).nanoseconds - at(0).nanoseconds) / 1e9
            if finished.isEmpty { XCTAssertEqual(box.value[0], reference.position(at: elapsed), accuracy: 1e-9, "t = \(t)") }
            t += 1.0 / 60
        }
        XCTAssertEqual(finished, [true])
        XCTAssertEqual(box.value, [100])
        let settle = try XCTUnwrap(reference.settlingDuration(threshold: 0.001))
        XCTAssertEqual(t - 1.0 / 60, settle, accuracy: 1.0 / 60 + 0.001, "ends at the first frame the spring is settled")
    }

    func testDecayEndsAtItsStopPoint() throws {
        let animator = Animator()
        let box = Box(10)
        var finished: [Bool] = []
        try animator.animate(box, .value, curve: .decay(velocity: [-600], threshold: 0.5)) { finished.append($0) }
        let reference = DecayMotion(from: 10, velocity: -600)
        animator.step(to: at(0))
        animator.step(to: at(0.1))
        XCTAssertEqual(box.value[0], reference.position(at: 0.1), accuracy: 1e-9)
        animator.step(to: at(reference.duration(threshold: 0.5) - 0.01))
        XCTAssertTrue(finished.isEmpty)
        animator.step(to: at(reference.duration(threshold: 0.5) + 0.01))
        XCTAssertEqual(finished, [true])
        XCTAssertEqual(box.value, [reference.stopPoint])
        XCTAssertEqual(reference.stopPoint, 10 - 600 / (1000 * -log(0.998)), accuracy: 1e-9)
    }

    // MARK: Interruption

    /// Runs the first animation to `t`, stepping at t − 2δ, t − δ and t; replaces it; steps the new one at
    /// t + δ (its start), t + 2δ and t + 3δ. Returns the positions and second-order one-sided velocities either side.
    private func handOff(first: (Animator, Box) throws -> Void, interruptAt t: Double,
                         second: (Animator, Box) throws -> Void) rethrows
        -> (before: Double, after: Double, lastOld: Double, firstNew: Double, handedOver: [Double]?)
    {
        let animator = Animator()
        let box = Box(0)
        let delta = 1e-4
        try first(animator, box)
        animator.step(to: at(0))
        var old: [Double] = []
        for time in [t - 2 * delta, t - delta, t] {
            animator.step(to: at(time))
            old.append(box.value[0])
        }
        try second(animator, box)
        let handedOver = animator.currentVelocity(of: box, key: "value")
        var new: [Double] = []
        for time in [t + delta, t + 2 * delta, t + 3 * delta] {
            animator.step(to: at(time))
            new.append(box.value[0])
        }
        let before = (3 * old[2] - 4 * old[1] + old[0]) / (2 * delta)
        let after = (-3 * new[0] + 4 * new[1] - new[2]) / (2 * delta)
        return (before, after, old[2], new[0], handedOver)
    }

    func testBasicInterruptedBySpringKeepsPositionAndVelocity() throws {
        var firstFinished: [Bool] = []
        let result = try handOff(first: { animator, box in
            try animator.animate(box, .value, to: [100], curve: .basic(duration: 1, timing: .linear)) { firstFinished.append($0) }
        }, interruptAt: 0.5, second: { animator, box in
            try animator.animate(box, .value, to: [0], curve: .spring())
            XCTAssertEqual(firstFinished, [false], "the replaced animation is told at once")
        })
        XCTAssertEqual(result.lastOld, 50, accuracy: 1e-9)
        XCTAssertEqual(result.firstNew, result.lastOld, "the interrupting step starts where the old one was")
        XCTAssertEqual(result.before, 100, accuracy: 1e-6)
        XCTAssertEqual(result.handedOver ?? [], [100], accuracy: 1e-9)
        XCTAssertEqual(result.after, result.before, accuracy: 0.5)
        XCTAssertEqual(firstFinished, [false])
    }

    func testSpringInterruptedBySpringKeepsPositionAndVelocity() throws {
        let result = try handOff(first: { animator, box in
            try animator.animate(box, .value, to: [100], curve: .spring(stiffness: 200, damping: 15))
        }, interruptAt: 0.08, second: { animator, box in
            try animator.animate(box, .value, to: [30], curve: .spring(stiffness: 500, damping: 30))
        })
        XCTAssertEqual(result.firstNew, result.lastOld)
        XCTAssertGreaterThan(result.before, 500, "still fast when interrupted")
        XCTAssertEqual(result.after, result.before, accuracy: abs(result.before) * 0.005)
        XCTAssertEqual(result.handedOver?.first ?? 0, result.before, accuracy: abs(result.before) * 0.005)
    }

    func testDecayInterruptedBySpringKeepsPositionAndVelocity() throws {
        let result = try handOff(first: { animator, box in
            try animator.animate(box, .value, curve: .decay(velocity: [1000]))
        }, interruptAt: 0.2, second: { animator, box in
            try animator.animate(box, .value, to: [0], curve: .spring())
        })
        let decay = DecayMotion(from: 0, velocity: 1000)
        XCTAssertEqual(result.lastOld, decay.position(at: 0.2), accuracy: 1e-9)
        XCTAssertEqual(result.firstNew, result.lastOld)
        XCTAssertEqual(result.before, decay.velocity(at: 0.2), accuracy: 0.01)
        XCTAssertEqual(result.after, result.before, accuracy: abs(result.before) * 0.005)
    }

    func testSpringInterruptedByDecayInheritsItsVelocity() throws {
        let result = try handOff(first: { animator, box in
            try animator.animate(box, .value, to: [100], curve: .spring(stiffness: 120, damping: 12))
        }, interruptAt: 0.1, second: { animator, box in
            try animator.animate(box, .value, curve: .decay())
        })
        XCTAssertEqual(result.firstNew, result.lastOld)
        XCTAssertEqual(result.after, result.before, accuracy: abs(result.before) * 0.005)
    }

    func testAGivenVelocityIsNotReplacedByTheOldOne() throws {
        let result = try handOff(first: { animator, box in
            try animator.animate(box, .value, to: [100], curve: .basic(duration: 1, timing: .linear))
        }, interruptAt: 0.5, second: { animator, box in
            try animator.animate(box, .value, to: [0], curve: .spring(velocity: [-40]))
        })
        XCTAssertEqual(result.handedOver ?? [], [-40])
        XCTAssertEqual(result.after, -40, accuracy: 1)
    }

    func testACompletionCanStartTheNextAnimationForTheSameKey() throws {
        let animator = Animator()
        let box = Box(0)
        var idles = 0
        animator.onIdle = { idles += 1 }
        try animator.animate(box, .value, to: [1], curve: .basic(duration: 0.1, timing: .linear)) { [unowned animator] _ in
            try? animator.animate(box, .value, to: [0], curve: .basic(duration: 0.1, timing: .linear))
        }
        animator.step(to: at(0))
        animator.step(to: at(0.1))
        XCTAssertEqual(box.value, [1])
        XCTAssertTrue(animator.isAnimating(box, key: "value"), "the chained animation is running")
        XCTAssertEqual(idles, 0, "never idle in between")
        animator.step(to: at(0.15))
        XCTAssertEqual(box.value, [1], "its clock started at the step after it was added")
        animator.step(to: at(0.25))
        XCTAssertEqual(box.value, [0])
        XCTAssertEqual(idles, 1)
    }

    // MARK: Lifetime

    func testAFreedTargetDropsItsAnimation() throws {
        let animator = Animator()
        var results: [Bool] = []
        var idles = 0, actives = 0
        animator.onIdle = { idles += 1 }
        animator.onActive = { actives += 1 }
        weak var weakBox: Box?
        do {
            let box = Box(0)
            weakBox = box
            try animator.animate(box, .value, to: [1], curve: .spring()) { results.append($0) }
            animator.step(to: at(0))
            animator.step(to: at(0.016))
            XCTAssertEqual(animator.activeCount, 1)
        }
        XCTAssertNil(weakBox, "the animator does not keep its target alive")
        XCTAssertEqual(animator.activeCount, 0)
        XCTAssertTrue(results.isEmpty)
        animator.step(to: at(0.032))
        XCTAssertEqual(results, [false])
        XCTAssertEqual(actives, 1)
        XCTAssertEqual(idles, 1)
    }

    func testStopLeavesTheValueAndReportsUnfinished() throws {
        let animator = Animator()
        let box = Box(0)
        var results: [Bool] = []
        var idles = 0
        animator.onIdle = { idles += 1 }
        let id = try animator.animate(box, .value, to: [10], curve: .basic(duration: 1, timing: .linear)) { results.append($0) }
        animator.step(to: at(0))
        animator.step(to: at(0.3))
        animator.stop(box, key: "value")
        XCTAssertEqual(box.value[0], 3, accuracy: 1e-9)
        XCTAssertEqual(results, [false])
        XCTAssertFalse(animator.isAnimating(box, key: "value"))
        XCTAssertNil(animator.currentVelocity(of: box, key: "value"))
        XCTAssertEqual(idles, 1)
        animator.stop(id)
        animator.step(to: at(0.6))
        XCTAssertEqual(box.value[0], 3, accuracy: 1e-9)
        XCTAssertEqual(results, [false], "stopping twice reports once")
    }

    func testKeysSeparateAnimationsOfOneTarget() throws {
        let animator = Animator()
        let box = Box(0)
        let counter = Box(0)
        try animator.animate(box, .value, to: [10], curve: .basic(duration: 1, timing: .linear), key: "a")
        try animator.animate(counter, .value, to: [5], curve: .basic(duration: 1, timing: .linear), key: "a")
        try animator.animate(box, .value, to: [10], curve: .basic(duration: 2, timing: .linear), key: "b")
        XCTAssertEqual(animator.activeCount, 3, "same key on different targets, different keys on one target")
        animator.stopAll()
        XCTAssertEqual(animator.activeCount, 0)
    }

    // MARK: Components and properties

    func testColourAnimatesComponentWise() throws {
        let animator = Animator()
        let swatch = Swatch(Color(red: 1, green: 0, blue: 0, alpha: 1))
        try animator.animate(swatch, .color, to: [0, 0, 1, 0.5], curve: .basic(duration: 1, timing: .linear))
        animator.step(to: at(0))
        animator.step(to: at(0.5))
        XCTAssertEqual(swatch.color.red, 0.5, accuracy: 1e-9)
        XCTAssertEqual(swatch.color.green, 0, accuracy: 1e-9)
        XCTAssertEqual(swatch.color.blue, 0.5, accuracy: 1e-9)
        XCTAssertEqual(swatch.color.alpha, 0.75, accuracy: 1e-9)

        // A spring from mid-flight: each component its own spring with the same parameters and handed-over velocity.
        try animator.animate(swatch, .color, to: [0, 1, 0, 1], curve: .spring(stiffness: 200, damping: 30))
        animator.step(to: at(0.6))
        animator.step(to: at(0.7))
        let red = SpringMotion(stiffness: 200, damping: 30, from: 0.5, to: 0, velocity: -1)
        let alpha = SpringMotion(stiffness: 200, damping: 30, from: 0.75, to: 1, velocity: -0.5)
        XCTAssertEqual(swatch.color.red, red.position(at: 0.1), accuracy: 1e-9)
        XCTAssertEqual(swatch.color.alpha, alpha.position(at: 0.1), accuracy: 1e-9)
        var t = 0.7
        while animator.activeCount > 0, t < 10 {
            t += 1.0 / 60
            animator.step(to: at(t))
        }
        XCTAssertEqual(swatch.color, Color(red: 0, green: 1, blue: 0, alpha: 1))
    }

    func testLayerProperties() throws {
        let animator = Animator()
        let layer = Layer(frame: Rect(x: 10, y: 20, width: 30, height: 40))
        try animator.animate(layer, .position, to: [110, -80], curve: .basic(duration: 1, timing: .linear))
        try animator.animate(layer, .opacity, to: [0], curve: .basic(duration: 1, timing: .linear))
        try animator.animate(layer, .scale, to: [2, 0.5], curve: .basic(duration: 1, timing: .linear))
        try animator.animate(layer, .rotation, to: [Double.pi], curve: .basic(duration: 1, timing: .linear))
        try animator.animate(layer, .translation, to: [3, -7], curve: .basic(duration: 1, timing: .linear))
        XCTAssertEqual(animator.activeCount, 5)
        animator.step(to: at(0))
        animator.step(to: at(0.333))
        XCTAssertEqual(layer.frame, Rect(x: 43, y: -13, width: 30, height: 40), "origin rounded to pixels, size kept")
        XCTAssertEqual(layer.opacity, 0.667, accuracy: 1e-9)
        XCTAssertEqual(layer.transform.scaleX, 1.333, accuracy: 1e-9)
        XCTAssertEqual(layer.transform.scaleY, 1 - 0.5 * 0.333, accuracy: 1e-9)
        XCTAssertEqual(layer.transform.rotation, Double.pi * 0.333, accuracy: 1e-9)
        XCTAssertEqual(layer.transform.translateX, 0.999, accuracy: 1e-9)
        XCTAssertEqual(layer.transform.translateY, -2.331, accuracy: 1e-9)
        animator.step(to: at(1))
        XCTAssertEqual(layer.frame, Rect(x: 110, y: -80, width: 30, height: 40))
        XCTAssertEqual(layer.opacity, 0)
        XCTAssertEqual(layer.transform, LayerTransform(translateX: 3, translateY: -7, scaleX: 2, scaleY: 0.5, rotation: Double.pi))
        XCTAssertEqual(animator.activeCount, 0)
    }

    // MARK: Refused input

    func testBadInputIsRefusedAndChangesNothing() throws {
        let animator = Animator()
        let box = Box(0)
        var results: [Bool] = []
        try animator.animate(box, .value, to: [1], curve: .basic(duration: 1)) { results.append($0) }
        let refused: [(String, () throws -> Void)] = [
            ("component count", { try animator.animate(box, .value, to: [1, 2], curve: .spring()) }),
            ("not finite", { try animator.animate(box, .value, to: [.nan], curve: .spring()) }),
            ("no stiffness", { try animator.animate(box, .value, to: [1], curve: .spring(stiffness: 0)) }),
            ("no damping", { try animator.animate(box, .value, to: [1], curve: .spring(damping: 0)) }),
            ("negative duration", { try animator.animate(box, .value, to: [1], curve: .basic(duration: -1)) }),
            ("bad bezier", { try animator.animate(box, .value, to: [1], curve: .basic(duration: 1, timing: .cubicBezier(2, 0, 1, 1))) }),
            ("velocity count", { try animator.animate(box, .value, to: [1], curve: .spring(velocity: [1, 2])) }),
            ("decay with an end", { try animator.animate(box, .value, to: [1], curve: .decay(velocity: [5])) }),
            ("spring without an end", { try animator.animate(box, .value, curve: .spring()) }),
            ("deceleration", { try animator.animate(box, .value, curve: .decay(velocity: [5], deceleration: 1)) }),
        ]
        for (name, attempt) in refused {
            XCTAssertThrowsError(try attempt(), name) { error in
                XCTAssertTrue(error is AnimationError, name)
                XCTAssertFalse("\(error)".isEmpty)
            }
        }
        XCTAssertEqual(animator.activeCount, 1)
        XCTAssertTrue(results.isEmpty, "the running animation was not replaced")
        XCTAssertEqual(
            AnimationCurve.spring(velocity: [1, 2]).validationError(componentCount: 1),
            .componentCount(what: "velocity", expected: 1, got: 2))
    }
}

/// Element-wise equality of two arrays within `accuracy`.
private func XCTAssertEqual(_ a: [Double], _ b: [Double], accuracy: Double, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(a.count, b.count, "\(a) vs \(b)", file: file, line: line)
    for (x, y) in zip(a, b) { XCTAssertEqual(x, y, accuracy: accuracy, "\(a) vs \(b)", file: file, line: line) }
}
