import KioskRuntime
import XCTest

final class StageErrorTests: XCTestCase {
    func testCodesAreTheProtocolsSnakeCaseNames() {
        XCTAssertEqual(StageError.Code.notFound.rawValue, "not_found")
        XCTAssertEqual(StageError.Code.invalidArgument.rawValue, "invalid_argument")
        XCTAssertEqual(StageError(.invalidScene, "a.yaml:1:1: bad").description, "a.yaml:1:1: bad")
    }
}
