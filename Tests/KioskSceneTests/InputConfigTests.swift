import Foundation
import KioskCore
import KioskScene
import XCTest

/// The config file's `input:` and `idle:` sections: what they decode to, and one located line per mistake.
final class InputConfigTests: XCTestCase {
    private let file = "/etc/kioskd/kioskd.yaml"

    private func parse(_ text: String) throws(SceneValidationError) -> KioskConfig {
        try ConfigLoader.parse(data: Data(text.utf8), file: file, baseDirectory: "/etc/kioskd").config
    }

    private func errors(_ text: String) -> [String] {
        do {
            _ = try parse(text)
            XCTFail("no error for:\n\(text)")
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    func testInputDecodes() throws {
        let config = try parse("""
            input:
              devices: [/dev/input/event3, event4]
              calibration: [0, 1, 0, 1, 0, 0]
              map:
                - {device: "*ft5406*", output: DSI-1, calibration: [-1, 0, 1, 0, 1, 0]}
                - {device: "eGalax*", output: HDMI-A-1}
            """)
        XCTAssertEqual(config.input.devices, ["/dev/input/event3", "/etc/kioskd/event4"])
        XCTAssertEqual(config.input.calibration, CalibrationMatrix(a: 0, b: 1, c: 0, d: 1, e: 0, f: 0))
        XCTAssertEqual(config.input.map, [
            InputDeviceRule(device: "*ft5406*", output: "DSI-1", calibration: CalibrationMatrix(a: -1, b: 0, c: 1, d: 0, e: 1, f: 0)),
            InputDeviceRule(device: "eGalax*", output: "HDMI-A-1"),
        ])
        let rules = InputDeviceRules(rules: config.input.map, calibration: config.input.calibration)
        XCTAssertEqual(rules.calibration(forDevice: "raspberrypi-ts ft5406 touch")?.a, -1, "the map entry's matrix first")
        XCTAssertEqual(rules.calibration(forDevice: "eGalax Inc. USB TouchController"), config.input.calibration, "else the section's")
        XCTAssertEqual(rules.output(forDevice: "eGalax Inc. USB TouchController"), "HDMI-A-1")
        XCTAssertNil(rules.output(forDevice: "Logitech USB Keyboard"))
        XCTAssertEqual(try parse("input: {seat: seat1}\n").input.seat, "seat1")
        XCTAssertEqual(try parse("input:\n").input, KioskConfig.Input(), "an empty section changes nothing")
    }

    func testInputMistakesAreLocated() {
        XCTAssertEqual(errors("""
            input:
              seat: seat0
              devices: [/dev/input/event3]
              calibration: [1, 0, 0, 0, 1]
              map:
                - {output: DSI-1}
                - {device: "*", ouput: DSI-1}
                - {device: "*"}
                - {device: "*", calibration: [1, 0, 0, 0, x, 0]}
            """), [
            "\(file):2:3: input.seat: give seat or devices, not both (devices use libinput's path backend)",
            "\(file):4:16: input.calibration: a calibration matrix has 6 values [a, b, c, d, e, f], got 5",
            "\(file):6:7: input.map[0]: an entry needs 'device', a glob on the device's name (\"*Touch*\")",
            "\(file):7:7: input.map[1]: an entry needs 'output' or 'calibration' (or both)",
            "\(file):7:21: input.map[1].ouput: unknown key 'ouput'; did you mean 'output'?",
            "\(file):8:7: input.map[2]: an entry needs 'output' or 'calibration' (or both)",
            "\(file):9:47: input.map[3].calibration[4]: expected a number",
        ])
        XCTAssertEqual(errors("input: {devics: []}\n"), ["\(file):1:9: input.devics: unknown key 'devics'; did you mean 'devices'?"])
    }

    func testIdleDecodes() throws {
        let config = try parse("""
            idle:
              dim_after: 60
              dim_level: 0.1
              blank_after: 300
              schedule:
                - {off: 22:00, on: "07:00", days: [mon, tue, wed, thu, fri]}
                - {off: "23:30", on: "9:00", days: [sat, sun]}
                - {off: "12:00", on: "12:30"}
            """)
        XCTAssertEqual(config.idle.dimAfter, 60)
        XCTAssertEqual(config.idle.dimLevel, 0.1)
        XCTAssertEqual(config.idle.blankAfter, 300)
        XCTAssertEqual(config.idle.schedule, [
            ScreenScheduleEntry(off: TimeOfDay(hour: 22, minute: 0)!, on: TimeOfDay(hour: 7, minute: 0)!, days: [.mon, .tue, .wed, .thu, .fri]),
            ScreenScheduleEntry(off: TimeOfDay(hour: 23, minute: 30)!, on: TimeOfDay(hour: 9, minute: 0)!, days: [.sat, .sun]),
            ScreenScheduleEntry(off: TimeOfDay(hour: 12, minute: 0)!, on: TimeOfDay(hour: 12, minute: 30)!),
        ])
    }

    func testIdleMistakesAreLocated() {
        XCTAssertEqual(errors("""
            idle:
              dim_after: 0
              dim_level: 2
              blank_after: -5
              schedule:
                - {off: "25:00", on: "07:00"}
                - {on: "07:00", days: [mon, tues]}
                - {off: "07:00", on: "07:00"}
                - {off: "22:00", on: "07:00", days: []}
            """), [
            "\(file):2:14: idle.dim_after: must be a positive number of seconds",
            "\(file):3:14: idle.dim_level: 2 is out of range 0...1",
            "\(file):4:16: idle.blank_after: must be a positive number of seconds",
            "\(file):6:13: idle.schedule[0].off: expected a time of day from 00:00 to 23:59 (\"07:00\")",
            "\(file):7:7: idle.schedule[1]: an entry needs 'off', a time of day (\"07:00\")",
            "\(file):7:33: idle.schedule[1].days[1]: 'tues' is not one of mon, tue, wed, thu, fri, sat, sun; did you mean 'tue'?",
            "\(file):8:26: idle.schedule[2].on: the same time as 'off' (07:00): the screen would never be off",
            "\(file):9:41: idle.schedule[3].days: give at least one day (mon, tue, wed, thu, fri, sat, sun), or leave days out for every day",
        ])
        XCTAssertEqual(errors("idle: {dim_after: 60, blank_after: 30}\n"),
                       ["\(file):1:36: idle.blank_after: 30 must come after idle.dim_after 60"])
    }
}
