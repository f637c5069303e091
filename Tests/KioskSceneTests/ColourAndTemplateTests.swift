import KioskCore
import KioskScene
import XCTest

/// Colour and `{key}` template parsing, the two small languages inside scene values.
final class ColourAndTemplateTests: XCTestCase {
    func testColourForms() {
        XCTAssertEqual(Color(parsing: "#f80"), Color(red: 1, green: 0x88 / 255, blue: 0))
        XCTAssertEqual(Color(parsing: "#102030")?.description, "#102030ff")
        XCTAssertEqual(Color(parsing: "#10203080")?.alpha ?? 0, 128 / 255, accuracy: 1e-9)
        XCTAssertEqual(Color(parsing: "White"), Color(red: 1, green: 1, blue: 1))
        XCTAssertNil(Color(parsing: "#12345"))
        XCTAssertNil(Color(parsing: "#ggg"))
        XCTAssertNil(Color(parsing: "chartreuse"))
    }

    func testTemplatePartsKeysAndRendering() throws {
        let t = try Template(parsing: "{room.name}: {temp} °C {{raw}} {temp}")
        XCTAssertEqual(t.keys, ["room.name", "temp"])
        XCTAssertEqual(t.render(["temp": "21"]), "–: 21 °C {raw} 21")
    }

    func testTemplateSyntaxErrorsSayWhere() {
        XCTAssertThrowsError(try Template(parsing: "abc {unclosed")) { error in
            XCTAssertEqual((error as? Template.SyntaxError)?.offset, 4)
        }
        XCTAssertThrowsError(try Template(parsing: "a } b"))
        XCTAssertThrowsError(try Template(parsing: "{}"))
        XCTAssertThrowsError(try Template(parsing: "{1abc}"))
    }
}
