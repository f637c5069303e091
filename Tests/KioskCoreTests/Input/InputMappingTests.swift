import KioskCore
import XCTest

/// Device positions to scene coordinates, for every rotation with and without calibration, on the Raspberry Pi
/// 7" panel's 800x480.
final class InputMappingTests: XCTestCase {
    let panel = Size(width: 800, height: 480)

    /// A device position, not calibrated by libinput (as from an absolute pointer or a fake device).
    func raw(_ x: Double, _ y: Double) -> DevicePosition { DevicePosition(x: x, y: y, calibrated: false) }

    func assertPoint(_ p: (x: Double, y: Double), _ x: Double, _ y: Double, _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(p.x, x, accuracy: 1e-6, "x: \(message)", file: file, line: line)
        XCTAssertEqual(p.y, y, accuracy: 1e-6, "y: \(message)", file: file, line: line)
    }

    /// The panel position (200, 120) - a quarter across, a quarter down - for each rotation lands where the
    /// compositor draws the scene pixel: the scene point found maps back to the panel position.
    func testEachRotationInvertsWhatTheCompositorDoes() {
        let expected: [OutputRotation: (Double, Double)] = [
            .degrees0: (200, 120),
            // At 90 the scene (480x800) has its top along the panel's right edge and its left edge along the
            // panel's top: panel y is scene x, and panel x counts scene y from the bottom (scene y = 800 - 200).
            .degrees90: (120, 600),
            .degrees180: (600, 360),
            .degrees270: (360, 200),
        ]
        for rotation in OutputRotation.allCases {
            let mapping = InputMapping(panel: panel, rotation: rotation, output: "DSI-1")
            let scene = mapping.scenePoint(raw(0.25, 0.25))
            let (ex, ey) = expected[rotation]!
            assertPoint(scene, ex, ey, "rotation \(rotation)")
            let back = rotation.sceneToPanel(sceneSize: mapping.sceneSize).apply(x: scene.x, y: scene.y)
            assertPoint(back, 200, 120, "rotation \(rotation) back to the panel")
        }
    }

    func testRotationTimesCalibration() throws {
        let calibrations: [(String, CalibrationMatrix?)] = [
            ("none", nil),
            ("identity", .identity),
            ("swap axes", try CalibrationMatrix(values: [0, 1, 0, 1, 0, 0])),
            ("mirror x", try CalibrationMatrix(values: [-1, 0, 1, 0, 1, 0])),
            ("shrink into the middle half", try CalibrationMatrix(values: [0.5, 0, 0.25, 0, 0.5, 0.25])),
        ]
        let device = raw(0.1, 0.3)
        for (name, calibration) in calibrations {
            // The calibrated device position, computed here from libinput's documented formula.
            let (cx, cy): (Double, Double) = switch name {
            case "swap axes": (0.3, 0.1)
            case "mirror x": (0.9, 0.3)
            case "shrink into the middle half": (0.3, 0.4)
            default: (0.1, 0.3)
            }
            let px = cx * 800, py = cy * 480
            for rotation in OutputRotation.allCases {
                let mapping = InputMapping(panel: panel, rotation: rotation, calibration: calibration, output: "DSI-1")
                assertPoint(mapping.panelPoint(device), px, py, "\(name) panel")
                let scene = mapping.scenePoint(device)
                let expected: (Double, Double) = switch rotation {
                case .degrees0: (px, py)
                case .degrees90: (py, 800 - px)
                case .degrees180: (800 - px, 480 - py)
                case .degrees270: (480 - py, px)
                }
                assertPoint(scene, expected.0, expected.1, "\(name) at \(rotation)")
            }
        }
    }

    func testAPositionLibinputCalibratedIsNotCalibratedTwice() throws {
        let swap = try CalibrationMatrix(values: [0, 1, 0, 1, 0, 0])
        let mapping = InputMapping(panel: panel, rotation: .degrees0, calibration: swap, output: "DSI-1")
        assertPoint(mapping.scenePoint(DevicePosition(x: 0.1, y: 0.3, calibrated: true)), 80, 144, "calibrated by libinput")
        assertPoint(mapping.scenePoint(raw(0.1, 0.3)), 240, 48, "calibrated here")
    }

    func testTheFarEdgeStaysInsideTheScene() {
        for rotation in OutputRotation.allCases {
            let mapping = InputMapping(panel: panel, rotation: rotation, output: "DSI-1")
            for corner in [raw(0, 0), raw(1, 1), raw(1, 0), raw(0, 1), raw(1.2, -0.1)] {
                let p = mapping.scenePoint(corner)
                XCTAssertTrue(p.x >= 0 && p.x < Double(mapping.sceneSize.width), "x \(p.x) at \(rotation)")
                XCTAssertTrue(p.y >= 0 && p.y < Double(mapping.sceneSize.height), "y \(p.y) at \(rotation)")
            }
        }
    }

    func testCalibrationParsingNamesTheProblem() throws {
        XCTAssertEqual(try CalibrationMatrix(parsing: "[0, 1, 0, 1, 0, 0]").values, [0, 1, 0, 1, 0, 0])
        XCTAssertEqual(try CalibrationMatrix(parsing: "1,0,0,0,1,0"), .identity)
        XCTAssertThrowsError(try CalibrationMatrix(parsing: "1,0,0,0,1")) { XCTAssertEqual("\($0)", "a calibration matrix has 6 values [a, b, c, d, e, f], got 5") }
        XCTAssertThrowsError(try CalibrationMatrix(parsing: "1,0,x,0,1,0")) { XCTAssertEqual("\($0)", "'x' in '1,0,x,0,1,0' is not a number") }
        XCTAssertThrowsError(try CalibrationMatrix(parsing: "1,0,inf,0,1,0")) { XCTAssertEqual("\($0)", "calibration values must be finite numbers") }
    }
}
