import CDRM
import Foundation
import KioskCore
import KioskDisplay
import XCTest

/// DRM tests (classes named `…DRMTests`, which the vkms tier runs and the host tier leaves out) need a real KMS
/// device: inside the vkms VM (`scripts/vkms-run`), where KIOSKD_REQUIRE_DRM=1 turns a missing device into a
/// failure, never a skip. On a development host without /dev/dri they skip with the reason.
public func requireDRMDevice() throws {
    if DRMCard.cardPaths().isEmpty {
        if ProcessInfo.processInfo.environment["KIOSKD_REQUIRE_DRM"] == "1" {
            XCTFail("KIOSKD_REQUIRE_DRM=1 but /dev/dri has no card node: vkms did not load")
            throw XCTSkip("unreachable after failure")
        }
        throw XCTSkip("no DRM device on this machine; these tests run inside the vkms VM (scripts/vkms-run)")
    }
}

/// The virtio-gpu card with two outputs, its second forced on: fails (never skips) when the VM has no such card.
/// Returns the card's path.
@discardableResult
public func requireTwoConnectedOutputs() throws -> String {
    try requireDRMDevice()
    let path = try XCTUnwrap(DRMCard.cardPaths().first)
    let status = "/sys/class/drm/\((path as NSString).lastPathComponent)-Virtual-2/status"
    do {
        // A card of its own for the check, closed before the outputs open theirs.
        let card = try DRMCard(path: path)
        guard card.driver == "virtio_gpu" else {
            XCTFail("\(path) has driver \(card.driver), not virtio_gpu: run with KIOSKD_VM_DISPLAY=virtio-gpu-pci,max_outputs=2 KIOSKD_VM_MODULES=virtio_gpu")
            throw XCTSkip("unreachable after failure")
        }
    }
    guard FileManager.default.fileExists(atPath: status) else {
        XCTFail("\(path) has no second output (\(status) is missing): give QEMU's virtio-gpu-pci max_outputs=2")
        throw XCTSkip("unreachable after failure")
    }
    // QEMU without a UI enables only its first output; the second is forced on like a monitor plugged in.
    try "on".write(toFile: status, atomically: false, encoding: .utf8)
    let card = try DRMCard(path: path)
    card.setClientCap(Int32(DRM_CLIENT_CAP_UNIVERSAL_PLANES), 1)
    let connected = try DRMResources(card: card).connectors.filter { !$0.isWriteback && $0.status == .connected }
    guard connected.count >= 2 else {
        XCTFail("\(path): \(connected.count) connected connector(s) after forcing Virtual-2 on; two are needed")
        throw XCTSkip("unreachable after failure")
    }
    return path
}

/// Fills a buffer with a solid XRGB colour.
public func fill(_ buffer: PixelBuffer, _ xrgb: UInt32) {
    for y in 0..<buffer.size.height {
        let row = (buffer.base + y * buffer.stride).bindMemory(to: UInt32.self, capacity: buffer.size.width)
        for x in 0..<buffer.size.width { row[x] = xrgb }
    }
}

/// Copies a buffer out with stride = width * 4.
public func snapshot(_ buffer: PixelBuffer) -> [UInt8] {
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
    public func spin(seconds: Double = 5, until done: () -> Bool) -> Bool {
        (try? Poll.until("the condition", timeout: seconds, turning: self, every: .milliseconds(100), done)) != nil
    }
}
