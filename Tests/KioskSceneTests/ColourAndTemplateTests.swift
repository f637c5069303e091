import KioskScene
import XCTest

/// Colour and `{key}` template parsing, the two small languages inside scene values.
final class ColourAndTemplateTests: XCTestCase {
    func testColourForms() {
        XCTAssertEqual(Colour(parsing: "#f80"), Colour(red: 1, green: 0x88 / 255, blue: 0))
        XCTAssertEqual(Colour(parsing: "#102030")?.description, "#102030ff")
        XCTAssertEqual(Colour(parsing: "#10203080")?.alpha ?? 0, 128 / 255, accuracy: 1e-9)
        XCTAssertEqual(Colour(parsing: "White"), Colour(red: 1, green: 1, blue: 1))
        XCTAssertNil(Colour(parsing: "#12345"))
        XCTAssertNil(Colour(parsing: "#ggg"))
        XCTAssertNil(Colour(parsing: "chartreuse"))
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
