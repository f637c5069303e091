import Foundation
import KioskCore
import KioskDisplay
import KioskTestSupport
import XCTest

/// A display device that goes away under a running kioskd: its driver is unbound, the kernel unplugs the DRM
/// device, and every later call on kioskd's fd answers ENODEV. kioskd must say so, naming the device and the errno,
/// and exit non-zero for the service manager, without spinning.
///
/// vkms in 6.1 registers its platform device without a driver, so it cannot be unbound; the VM has a second,
/// PCI display (QEMU's bochs-display, see scripts/vkms-run) whose bochs driver can. The test loads bochs from the
/// VM's initramfs, and unbinds, rebinds and unloads it, leaving vkms alone for the other DRM tests.
final class DeviceGoneDRMTests: XCTestCase {
    override func setUpWithError() throws { try requireDRMDevice() }

    func testKioskdExitsNonZeroNamingTheDeviceAndErrnoWhenItsDriverIsUnbound() throws {
        let display = try BochsDisplay.load()
        defer { display.unload() }
        let cardPath = try display.cardPath()

        // A small clock alone: kioskd presents once a second and is idle in between, so CPU spent spinning would
        // show. Small, because under TCG every byte copied into bochs's VRAM costs CPU.
        let scene = try KioskdProcess.scratchDirectory("device-gone").appendingPathComponent("clock.yaml")
        try Self.clockScene.write(to: scene, atomically: true, encoding: .utf8)
        let childrenCPUBefore = reapedChildrenCPUSeconds()
        let kiosk = try ControlledKioskd(["run", "--backend", "drm", "--device", cardPath, "--scene", scene.path])
        try Poll.until("kioskd to flip on \(cardPath)", timeout: 60) { try kiosk.framesFlipped() > 0 }
        // Idle before the unbind: start-up work (fonts, first renders; slow under TCG) is done once kioskd uses less
        // than half a CPU from one clock flip to the next, so CPU spent spinning afterwards would show. Polled
        // gently: every `stats` request costs kioskd CPU too.
        var idleRate = Double.infinity
        try Poll.until("kioskd to use less than half a CPU between clock flips", timeout: 60) {
            let flips = try kiosk.framesFlipped()
            let cpu = try XCTUnwrap(cpuSeconds(pid: kiosk.pid), "kioskd's /proc stat"), since = Date()
            try Poll.until("a clock flip", timeout: 30, interval: 0.25) { try kiosk.framesFlipped() > flips }
            idleRate = (try XCTUnwrap(cpuSeconds(pid: kiosk.pid)) - cpu) / Date().timeIntervalSince(since)
            return idleRate < 0.5
        }
        let cpuBefore = try XCTUnwrap(cpuSeconds(pid: kiosk.pid), "kioskd's /proc stat")
        print("kioskd idle at \(Int(idleRate * 1000)) ms of CPU per second before the unbind")

        let unbound = Date()
        try display.unbind()
        // The clock presents every second: the next present meets the unplugged device.
        let result = kiosk.waitForExit(timeout: 30)
        let took = Date().timeIntervalSince(unbound)
        // kioskd is the only child reaped since `childrenCPUBefore`.
        let total = reapedChildrenCPUSeconds() - childrenCPUBefore
        XCTAssertEqual(kiosk.process.process.terminationReason, .exit, "kioskd exited by itself, not killed at the deadline: \(result.stderr)")
        XCTAssertNotEqual(result.status, 0, result.stderr)
        XCTAssertLessThan(took, 10, "kioskd exits within 10 s of the device going away (took \(took) s)")
        print("kioskd exited with status \(result.status) \(Int(took * 1000)) ms after the unbind")

        let lines = result.stderr.split(separator: "\n")
        let gone = lines.filter { $0.contains("ENODEV") && $0.contains(cardPath) && $0.contains("is gone") }
        XCTAssertFalse(gone.isEmpty, "an error line names the device and the errno: \(result.stderr)")
        for line in gone { print("kioskd said: \(line)") }
        XCTAssertTrue(lines.contains { $0.contains("critical") && $0.contains("ENODEV") }, result.stderr)

        // No busy loop: kioskd exits by itself (above), and the CPU it used after the unbind (the clock's last render
        // and the teardown included) stays a small part of the time it took.
        let after = total - cpuBefore
        print("kioskd used \(Int(after * 1000)) ms of CPU after the unbind")
        XCTAssertLessThan(after, max(0.5, took / 2), "kioskd spun after the device went away")

        // The device comes back when the driver is bound again.
        try display.bind()
        let back = try display.cardPath()
        let card = try DRMCard(path: back)
        XCTAssertTrue(try DRMResources(card: card).connectors.contains { $0.status == .connected }, "\(back) is back with a display")
    }

    static let clockScene = """
        size: display
        pages:
          - name: main
            widgets:
              - {type: clock, format: "%S", x: 0%, y: 0%, width: 5%, height: 5%, foreground: white, font: {size: 20}}
        """

    /// CPU time (user + system) of the children reaped so far: earlier tests' processes, insmod.
    private func reapedChildrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// utime + stime of a running process, from /proc/PID/stat (fields 14 and 15, in clock ticks).
    private func cpuSeconds(pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name, which may hold spaces: state is field 3, utime 14, stime 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let utime = Double(fields[11]), let stime = Double(fields[12]) else { return nil }
        return (utime + stime) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// QEMU's bochs-display and its bochs DRM driver inside the vkms VM: loaded from the initramfs (reached through
/// PID 1's root, /proc/1/root, since tests run chrooted into the host's filesystem), bound and unbound through
/// sysfs.
private struct BochsDisplay {
    static let driverDirectory = "/sys/bus/pci/drivers/bochs-drm"
    /// The PCI address of the bochs-display, e.g. `0000:00:04.0`.
    let address: String

    /// Loads bochs (and what it needs that is not loaded yet) and finds the device it bound.
    static func load() throws -> BochsDisplay {
        let closureFile = "/proc/1/root/modules.closure"
        guard let closures = try? String(contentsOfFile: closureFile, encoding: .utf8),
              let line = closures.split(separator: "\n").first(where: { $0.hasPrefix("bochs: ") }) else {
            throw ControlTestError("\(closureFile) has no bochs entry: not inside the vkms VM, or bochs is not in its initramfs (scripts/vkms-setup vm_modules)")
        }
        for module in line.dropFirst("bochs: ".count).split(separator: " ") where !FileManager.default.fileExists(atPath: "/sys/module/\(module)") {
            try run("/usr/sbin/insmod", ["/proc/1/root/lib/modules/\(module).ko"])
        }
        var address: String?
        try Poll.until("bochs to bind a device", timeout: 10) {
            address = try? FileManager.default.contentsOfDirectory(atPath: driverDirectory).first { $0.contains(":") }
            return address != nil
        }
        return BochsDisplay(address: address!)
    }

    /// The card node of the device, once it has one.
    func cardPath() throws -> String {
        var path: String?
        try Poll.until("a /dev/dri card node for \(address)", timeout: 10) {
            let drm = "/sys/bus/pci/devices/\(address)/drm"
            path = (try? FileManager.default.contentsOfDirectory(atPath: drm))?.first { $0.hasPrefix("card") }.map { "/dev/dri/\($0)" }
            return path.map { FileManager.default.fileExists(atPath: $0) } ?? false
        }
        return path!
    }

    func unbind() throws { try write(address, to: "\(Self.driverDirectory)/unbind") }
    func bind() throws { try write(address, to: "\(Self.driverDirectory)/bind") }

    /// Leaves the VM as the other DRM tests expect it: vkms alone.
    func unload() {
        if FileManager.default.fileExists(atPath: "\(Self.driverDirectory)/\(address)") { try? unbind() }
        try? Self.run("/usr/sbin/rmmod", ["bochs"])
    }

    private func write(_ text: String, to path: String) throws {
        guard let handle = FileHandle(forWritingAtPath: path) else { throw ControlTestError("cannot open \(path) for writing") }
        defer { try? handle.close() }
        try handle.write(contentsOf: Data(text.utf8))
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let deadline = ProcessDeadline(process, seconds: 60)
        process.waitUntilExit()
        try deadline.finish("\(tool) \(arguments.joined(separator: " "))")
        guard process.terminationStatus == 0 else {
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw ControlTestError("\(tool) \(arguments.joined(separator: " ")) failed with status \(process.terminationStatus): \(message)")
        }
    }
}
