@testable import KioskRemote
import XCTest

/// DES against published vectors, and VNC authentication's response against one made by vncdotool 1.4.2 (its
/// `des_encrypt(_vnc_des("kiosk"), bytes(range(16)))`, through the `cryptography` package's DES).
final class DESTests: XCTestCase {
    private func hex(_ s: String) -> [UInt8] {
        stride(from: 0, to: s.count, by: 2).map { UInt8(s.dropFirst($0).prefix(2), radix: 16)! }
    }

    func testPublishedVectors() {
        // The worked example of J. Orlin Grabbe's "The DES Algorithm Illustrated".
        XCTAssertEqual(DES(key: hex("133457799BBCDFF1")).encrypt(block: hex("0123456789ABCDEF")), hex("85E813540F0AB405"))
        // NIST SP 800-17, variable-plaintext known-answer test, first entry (key of parity bits only).
        XCTAssertEqual(DES(key: hex("0101010101010101")).encrypt(block: hex("8000000000000000")), hex("95F8A5E5DD31D900"))
        XCTAssertEqual(DES(key: hex("0E329232EA6D0D73")).encrypt(block: hex("8787878787878787")), hex("0000000000000000"))
    }

    func testVNCKeyReversesEachBytesBitsAndPadsWithZeros() {
        XCTAssertEqual(DES.vncKey(password: [0x01, 0x80, 0x0F]), [0x80, 0x01, 0xF0, 0, 0, 0, 0, 0])
        XCTAssertEqual(DES.vncKey(password: Array("123456789".utf8)).count, 8)
    }

    func testVNCResponseMatchesARealClients() {
        XCTAssertEqual(DES.vncResponse(challenge: Array(0..<16), password: Array("kiosk".utf8)), hex("9e23c67debe2c8798a512fc41172ebfb"))
    }
}
