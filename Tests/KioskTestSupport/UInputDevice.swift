import Foundation
import XCTest

/// Input devices for the VM tests: udevd running as on a board, and uinput devices made by `scripts/uinput-device`
/// with the capabilities of real hardware. Inside the VM (KIOSKD_REQUIRE_DRM=1) a missing /dev/uinput is a
/// failure, never a skip.
public enum InputTestEnvironment {
    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    public static let helper = repository.appendingPathComponent("scripts/uinput-device").path
    public static let hmiScene = repository.appendingPathComponent("scenes/hmi-panel.yaml").path

    public nonisolated(unsafe) static var udevd: Process?

    /// A scene of two buttons, `left` and `right`, each half of the screen: a pointer run into an edge is on one.
    public static func halvesScene() throws -> String {
        let path = try KioskdProcess.scratchDirectory("input-halves").appendingPathComponent("halves.yaml")
        try """
            size: display
            background: "#000000"
            widgets:
              - {id: left, type: button, label: Left, x: 0, y: 0, width: 50%, height: 100%, background: "#2050a0", corner_radius: 0}
              - {id: right, type: button, label: Right, x: 50%, y: 0, width: 50%, height: 100%, background: "#a05020", corner_radius: 0}
            """.write(to: path, atomically: true, encoding: .utf8)
        return path.path
    }

    /// Fails (or, on a development host, skips) without uinput; starts udevd when none runs (the VM boots without
    /// one) and waits until it answers.
    public static func prepare() throws {
        try requireDRMDevice()
        guard FileManager.default.fileExists(atPath: "/dev/uinput") else {
            if ProcessInfo.processInfo.environment["KIOSKD_REQUIRE_DRM"] == "1" {
                XCTFail("KIOSKD_REQUIRE_DRM=1 but /dev/uinput is missing: run the VM with KIOSKD_VM_MODULES=\"vkms uinput\"")
                throw XCTSkip("unreachable after failure")
            }
            throw XCTSkip("no /dev/uinput on this machine; the input tests run inside the vkms VM with uinput loaded")
        }
        if udevd == nil, try run("/usr/bin/udevadm", ["control", "--ping", "--timeout=1"]).status != 0 {
            // In the foreground, as a child of this process for the rest of the VM's life: Foundation's Process
            // waits for a `--daemon` parent through a descriptor the daemonized child inherits, and would wait forever.
            let udevd = Process()
            udevd.executableURL = URL(fileURLWithPath: "/lib/systemd/systemd-udevd")
            udevd.environment = ProcessInfo.processInfo.environment.merging(["SYSTEMD_IGNORE_CHROOT": "1"]) { $1 }
            udevd.standardInput = FileHandle.nullDevice
            udevd.standardOutput = FileHandle.nullDevice
            udevd.standardError = FileHandle.standardError
            try udevd.run()
            self.udevd = udevd
            try Poll.until("udevd to answer", timeout: 30, interval: 0.05) {
                try run("/usr/bin/udevadm", ["control", "--ping", "--timeout=5"]).status == 0
            }
            _ = try run("/usr/bin/udevadm", ["trigger", "--subsystem-match=input", "--action=add"])
            _ = try run("/usr/bin/udevadm", ["settle", "--timeout=20"])
        }
    }

    @discardableResult
    public static func run(_ path: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        // The VM chroots into the host's root; systemd's tools ignore requests in a chroot unless told not to.
        process.environment = ProcessInfo.processInfo.environment.merging(["SYSTEMD_IGNORE_CHROOT": "1"]) { $1 }
        let outputURL = FileManager.default.temporaryDirectory.appendingPathComponent("kioskd-run-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: outputURL) }
        let handle = try FileHandle(forWritingTo: outputURL)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = ProcessDeadline(process, seconds: 60)
        process.waitUntilExit()
        try deadline.finish("\(path) \(arguments.joined(separator: " "))")
        try handle.close()
        let output = (try? Data(contentsOf: outputURL)) ?? Data()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}

/// One uinput device, alive while this object is; commands go to the helper's stdin and each waits for its `ok`.
public final class UInputDevice {
    public enum Kind: String { case multitouch = "mt", hid, keyboard, mouse }

    public let kind: Kind
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let reader: PipeLineReader

    /// The kernel names it so; kioskd's `stats` lists devices by these.
    public var name: String {
        switch kind {
        case .multitouch: "kioskd-test ft5406 10-slot touch"
        case .hid: "kioskd-test USB HID touchscreen"
        case .keyboard: "kioskd-test keyboard"
        case .mouse: "kioskd-test USB mouse"
        }
    }

    public init(_ kind: Kind) throws {
        self.kind = kind
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [InputTestEnvironment.helper, kind.rawValue]
        process.standardInput = input
        process.standardOutput = output
        reader = PipeLineReader(output)
        try process.run()
        guard reader.nextLine(deadline: Date().addingTimeInterval(20)) == "ready" else {
            process.terminate()
            throw ControlTestError("uinput-device \(kind.rawValue) did not start (its error is on stderr; python3-evdev comes with scripts/setup-host)")
        }
    }

    deinit { remove() }

    public func send(_ command: String) throws {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
        guard reader.nextLine(deadline: Date().addingTimeInterval(20)) == "ok" else {
            throw ControlTestError("uinput-device \(kind.rawValue): no ok for '\(command)'")
        }
    }

    /// Sends a command without waiting for its `ok`, so the caller can turn its loop meanwhile (a test that
    /// times input must not leave libinput's descriptor unread while the helper answers); `confirm()` reads it.
    public func post(_ command: String) {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
    }

    public func confirm() throws {
        guard reader.nextLine(deadline: Date().addingTimeInterval(20)) == "ok" else {
            throw ControlTestError("uinput-device \(kind.rawValue): no ok")
        }
    }

    /// Unplugs the device: the helper closes it and exits.
    public func remove() {
        guard process.isRunning else { return }
        // The helper exits at the end of its input; killed if it has not within 10 s.
        let deadline = ProcessDeadline(process, seconds: 10)
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        deadline.cancel()
    }

    /// Device units for a panel position given as a share (0...1) of the panel's width and height.
    public func units(_ u: Double, _ v: Double) -> (Int, Int) {
        switch kind {
        case .hid: (Int(u * 4096), Int(v * 4096))
        default: (Int(u * 800), Int(v * 480))
        }
    }

    public func down(slot: Int = 0, _ u: Double, _ v: Double) throws {
        let (x, y) = units(u, v)
        try send("down \(slot) \(x) \(y)")
    }

    public func up(slot: Int = 0) throws { try send("up \(slot)") }

    /// Relative motion, in device counts (libinput accelerates it).
    public func move(_ dx: Int, _ dy: Int) throws { try send("rel \(dx) \(dy)") }

    /// A left click.
    public func click() throws {
        try send("press 272")
        try send("release 272")
    }

    public func tap(_ u: Double, _ v: Double) throws {
        try down(u, v)
        try up()
    }
}
