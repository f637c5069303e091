import KioskControl
import XCTest

final class LineFramerTests: XCTestCase {
    private func lines(_ pieces: [LineFramer.Piece]) -> [String] {
        pieces.compactMap { if case .line(let bytes) = $0 { return String(decoding: bytes, as: UTF8.self) } else { return nil } }
    }

    func testLineSplitAcrossReadsComesOutWhole() {
        var framer = LineFramer()
        XCTAssertEqual(framer.append(Array(#"{"cmd":"pi"#.utf8)), [])
        XCTAssertEqual(framer.pendingByteCount, 10)
        XCTAssertEqual(lines(framer.append(Array("ng\"}\n{\"cmd\"".utf8))), [#"{"cmd":"ping"}"#])
        XCTAssertEqual(lines(framer.append(Array(":\"version\"}\n".utf8))), [#"{"cmd":"version"}"#])
        XCTAssertEqual(framer.pendingByteCount, 0)
    }

    func testCRLFIsToleratedAndBlankLinesSkipped() {
        var framer = LineFramer()
        XCTAssertEqual(lines(framer.append(Array("a\r\n\r\n\nb\r".utf8))), ["a"])
        XCTAssertEqual(lines(framer.append(Array("\n".utf8))), ["b"])
    }

    func testManyLinesInOneRead() {
        var framer = LineFramer()
        let text = (0..<1000).map { "line \($0)\n" }.joined()
        let out = lines(framer.append(Array(text.utf8)))
        XCTAssertEqual(out.count, 1000)
        XCTAssertEqual(out.first, "line 0")
        XCTAssertEqual(out.last, "line 999")
    }

    func testLineOfExactlyTheLimitPassesAndOneMoreByteFails() {
        var framer = LineFramer(maxLineBytes: 16)
        let exact = String(repeating: "x", count: 16)
        XCTAssertEqual(lines(framer.append(Array((exact + "\n").utf8))), [exact])
        // The limit counts content, not the CRLF terminator.
        XCTAssertEqual(lines(framer.append(Array((exact + "\r\n").utf8))), [exact])

        var over = LineFramer(maxLineBytes: 16)
        XCTAssertEqual(over.append(Array((exact + "y\n").utf8)), [.overLong])
        XCTAssertEqual(over.append(Array("ok\n".utf8)), [], "a poisoned framer yields nothing more")
    }

    func testOverLongLineIsReportedBeforeItsNewlineArrives() {
        var framer = LineFramer(maxLineBytes: 16)
        XCTAssertEqual(lines(framer.append(Array("short\n".utf8))), ["short"])
        XCTAssertEqual(framer.append(Array((String(repeating: "z", count: 16) + "\r").utf8)), [])  // may still be `...\r\n`
        XCTAssertEqual(framer.append(Array("zz".utf8)), [.overLong])
        XCTAssertEqual(framer.pendingByteCount, 0, "the over-long line is not kept")
    }

    func testSeventeenBytesWithoutCarriageReturnAreAlreadyOverALimitOfSixteen() {
        var framer = LineFramer(maxLineBytes: 16)
        XCTAssertEqual(framer.append(Array(String(repeating: "z", count: 17).utf8)), [.overLong])
    }

    func testLinesBeforeAnOverLongLineStillComeOut() {
        var framer = LineFramer(maxLineBytes: 8)
        let pieces = framer.append(Array("one\ntwo\n0123456789\nthree\n".utf8))
        XCTAssertEqual(pieces, [.line(Array("one".utf8)), .line(Array("two".utf8)), .overLong])
    }
}
