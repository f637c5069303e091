import KioskCore
import XCTest

/// The one list of control commands: each found by its own name, the two older output names and `display.verify`
/// found as their commands, and any other name as none.
final class ControlCommandNameTests: XCTestCase {
    func testEveryCommandByItsNameAndTheOlderOutputNames() {
        for command in ControlCommandName.allCases {
            XCTAssertEqual(ControlCommandName(wireName: command.rawValue), command)
        }
        XCTAssertEqual(ControlCommandName(wireName: "display.info"), .outputInfo)
        XCTAssertEqual(ControlCommandName(wireName: "display.power"), .outputPower)
        XCTAssertEqual(ControlCommandName(wireName: "display.verify"), .outputVerify)
        XCTAssertNil(ControlCommandName(wireName: "display"))
        XCTAssertNil(ControlCommandName(wireName: "Output.Power"), "names are matched exactly, as the socket always has")
        XCTAssertNil(ControlCommandName(rawValue: "display.power"), "an alias is not a command of its own")
        XCTAssertEqual(ControlCommandName.acceptedNames.count, ControlCommandName.allCases.count + 3)
        XCTAssertEqual(ControlCommandName.acceptedNames, ControlCommandName.acceptedNames.sorted())
    }
}
