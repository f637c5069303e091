import KioskCore
import KioskScene
import XCTest

/// The `wall:` section, at the top and in an `outputs:` entry: the panel's place, its bezels, every mistake located.
extension ConfigFileTests {
    func testTheWallSectionPlacesThePanelAtTheTopAndPerOutput() throws {
        let (config, warnings) = try parse("""
            wall: {columns: 2, rows: 2, column: 1, row: 0, bezel: {x: 12, y: 8px}}
            outputs:
              - connector: HDMI-A-1
              - connector: HDMI-A-2
                wall: {columns: 3, column: 2, bezel: {x: 6.5mm}, panel_mm: {width: 527, height: 296.5}}

            """)
        XCTAssertEqual(warnings.map(\.description), [])
        var top = WallSettings()
        (top.columns, top.rows, top.column, top.row, top.bezelX, top.bezelY) = (2, 2, 1, 0, .pixels(12), .pixels(8))
        XCTAssertEqual(config.wall, top)
        XCTAssertNil(config.outputs[0].wall, "an entry without its own wall takes the kiosk's when the run resolves it")
        var second = WallSettings()
        (second.columns, second.column, second.bezelX) = (3, 2, .millimetres(6.5))
        second.panelMM = (527, 296.5)
        XCTAssertEqual(config.outputs[1].wall, second)
        XCTAssertEqual(try parse("wall: {}\n").config.wall, WallSettings(), "an empty section is one panel, the scene whole")
    }

    func testBadWallValuesAreNamedAtTheirLocation() {
        XCTAssertEqual(errors("""
            wall:
              columns: 2
              rows: 0
              colum: 1
              bezel: {x: 1.5, y: wide}

            """), [
            "\(file):2:3: wall: missing 'column': which of the 2 columns this panel is (from 0)",
            "\(file):3:9: wall.rows: 0 is out of range 1...16",
            "\(file):4:3: wall.colum: unknown key 'colum'; did you mean 'column'?",
            "\(file):5:14: wall.bezel.x: '1.5': pixels are whole numbers; expected pixels (24 or 24px) or millimetres (6.5mm), 0 to 1000",
            "\(file):5:22: wall.bezel.y: 'wide': expected pixels (24 or 24px) or millimetres (6.5mm), 0 to 1000",
        ])
        XCTAssertEqual(errors("wall: {columns: 2}\n"), ["\(file):1:7: wall: missing 'column': which of the 2 columns this panel is (from 0)"])
        XCTAssertEqual(errors("wall: {columns: 2, column: 2}\n"),
                       ["\(file):1:28: wall.column: 2 is outside the wall: columns 2 are numbered 0 to 1"])
        XCTAssertEqual(errors("wall: {bezel: {x: 5mm}}\n"),
                       ["\(file):1:19: wall.bezel: a bezel in millimetres needs the panel's picture size: set wall.panel_mm: {width, height}"])
        XCTAssertEqual(errors("wall: {panel_mm: {width: 500}}\n"), ["\(file):1:18: wall.panel_mm: expected both width and height, in millimetres"])
        XCTAssertEqual(errors("wall: 3\n"), ["\(file):1:7: wall: expected a mapping (columns, rows, column, row, bezel, panel_mm)"])
        XCTAssertEqual(errors("outputs:\n  - connector: DSI-1\n    wall: {rows: 2, row: -1}\n"),
                       ["\(file):3:26: outputs[0].wall.row: -1 is out of range 0...15"])
    }
}
