import CDRM
import Foundation
import KioskCore
import KioskDisplay
import KioskRender
import KioskTestSupport
import XCTest

/// DRM tests need a real KMS device: inside the vkms VM (`scripts/vkms-run`), where KIOSKD_REQUIRE_DRM=1 turns a
/// missing device into a failure, never a skip. On a development host without /dev/dri they skip with the reason.
func requireDRMDevice() throws {
    if DRMCard.cardPaths().isEmpty {
        if ProcessInfo.processInfo.environment["KIOSKD_REQUIRE_DRM"] == "1" {
            XCTFail("KIOSKD_REQUIRE_DRM=1 but /dev/dri has no card node: vkms did not load")
            throw XCTSkip("unreachable after failure")
        }
        throw XCTSkip("no DRM device on this machine; these tests run inside the vkms VM (scripts/vkms-run)")
    }
}

/// Fills a buffer with a solid XRGB colour.
func fill(_ buffer: PixelBuffer, _ xrgb: UInt32) {
    for y in 0..<buffer.size.height {
        let row = (buffer.base + y * buffer.stride).bindMemory(to: UInt32.self, capacity: buffer.size.width)
        for x in 0..<buffer.size.width { row[x] = xrgb }
    }
}

/// Copies a buffer out with stride = width * 4.
func snapshot(_ buffer: PixelBuffer) -> [UInt8] {
    let rowBytes = buffer.size.width * 4
    var out = [UInt8](repeating: 0, count: rowBytes * buffer.size.height)
    out.withUnsafeMutableBytes { dst in
        for y in 0..<buffer.size.height { memcpy(dst.baseAddress! + y * rowBytes, buffer.base + y * buffer.stride, rowBytes) }
    }
    return out
}

extension MainLoop {
    /// Runs the loop until `done` holds or `seconds` pass (`Poll`, each turn waiting at most 100 ms); returns
    /// whether `done` held. With a `done` that never holds: the loop runs `seconds`, a window to show that
    /// nothing comes.
    func spin(seconds: Double = 5, until done: () -> Bool) -> Bool {
        (try? Poll.until("the condition", timeout: seconds, turning: self, every: .milliseconds(100), done)) != nil
    }
}
