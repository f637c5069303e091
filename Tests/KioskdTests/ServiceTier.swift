import Foundation
import Glibc
import KioskCore
import KioskDisplay
import KioskRender
import KioskRenderTestSupport
import KioskTestSupport
import XCTest

/// A check of the service tier that did not hold, with what was seen instead.
struct ServiceCheckFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The service tier's driver inside the systemd VM: shell commands with deadlines, unit properties, waits on
/// observable state, and one `service-check: PASS|FAIL name: detail` line per check (scripts/test-all counts
/// them). Lives on the test's thread.
struct ServiceTier {
    /// Where kioskd's config, scene and the package put things.
    static let scene = "/etc/kioskd/scene.yaml"
    static let config = "/etc/kioskd/kioskd.yaml"
    static let dropInDirectory = "/etc/systemd/system/kioskd.service.d"
    static let socket = "/run/kioskd/control.sock"
    /// A non-root member of group kioskd that the checks run kioskctl as.
    static let member = "kioskcheck"

    private(set) var passed = 0
    private(set) var failed = 0
    private(set) var skipped = 0

    /// KIOSKD_SERVICE_CHECKS (`vm,install,vnc`): only these checks run, for a quicker run while working on one; the
    /// others print SKIP and count as neither passed nor failed. Unset: every check.
    static let selected: Set<String>? = ProcessInfo.processInfo.environment["KIOSKD_SERVICE_CHECKS"].map {
        Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    }

    /// Runs one check: prints its line, and fails the test with the same text when it does not hold.
    mutating func check(_ name: String, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> String) {
        if let selected = Self.selected, !selected.contains(name) {
            skipped += 1
            print("service-check: SKIP \(name): not in KIOSKD_SERVICE_CHECKS")
            return
        }
        do {
            let detail = try body()
            passed += 1
            print("service-check: PASS \(name): \(detail)")
        } catch {
            failed += 1
            print("service-check: FAIL \(name): \(error)")
            XCTFail("\(name): \(error)", file: file, line: line)
            // What the unit and kioskd said last, for the one reading the failure.
            if let journal = try? Self.shell("systemctl status kioskd.service --no-pager -n 0 | head -n 4; journalctl -u kioskd.service -n 15 --no-pager -o short-monotonic") {
                print(journal.text.split(separator: "\n").map { "    | \($0)" }.joined(separator: "\n"))
            }
        }
        fflush(nil)
    }

    /// `bash -c script` under `timeout`, stdout and stderr together.
    @discardableResult
    static func shell(_ script: String, timeout: Double = 60) throws -> (status: Int32, text: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["-k", "5", String(Int(timeout)), "/bin/bash", "-c", script]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// `script` must succeed; its output.
    @discardableResult
    static func must(_ script: String, timeout: Double = 60) throws -> String {
        let r = try shell(script, timeout: timeout)
        guard r.status == 0 else { throw ServiceCheckFailure("`\(script)` exited \(r.status): \(r.text)") }
        return r.text
    }

    /// kioskd.service's properties (`systemctl show`).
    static func unit(_ name: String = "kioskd.service") throws -> [String: String] {
        let text = try must("systemctl show \(name) -p ActiveState,SubState,Result,MainPID,NRestarts,StatusText,ExecMainStatus")
        var properties: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let eq = line.firstIndex(of: "=") else { continue }
            properties[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        return properties
    }

    /// Seconds since boot (CLOCK_MONOTONIC, as the journal's monotonic timestamps).
    static func uptime() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    static func state(_ p: [String: String]) -> String {
        "\(p["ActiveState"] ?? "?") (\(p["SubState"] ?? "?")), result \(p["Result"] ?? "?")"
    }

    /// Polls `condition` every 100 ms until it holds or `timeout` seconds of CLOCK_MONOTONIC pass (`Poll`); how
    /// long it took.
    @discardableResult
    static func waitFor(_ what: String, timeout: Double, _ condition: () throws -> Bool) throws -> Double {
        let start = uptime()
        try Poll.until(what, timeout: timeout, interval: 0.1, condition)
        return uptime() - start
    }

    /// Writes `text` to `path` in one rename, so kioskd's watch never reads half a file.
    static func writeAtomically(_ text: String, to path: String) throws {
        try text.write(toFile: path + ".tmp", atomically: false, encoding: .utf8)
        guard rename(path + ".tmp", path) == 0 else { throw ServiceCheckFailure("rename to \(path): errno \(errno)") }
    }

    /// A command's output (stdout and stderr), or `?` when it could not be run: for a check that compares it.
    static func shellText(_ script: String) -> String {
        (try? shell(script).text) ?? "?"
    }

    /// The installed unit's ExecStart= command: drop-ins and headless renders add their options to it, so the
    /// unit's own options (keep-going, the socket group) cannot drift from what the checks run.
    static func shippedExecStart() throws -> String {
        let unit = try String(contentsOfFile: installedUnit, encoding: .utf8)
        guard let line = unit.split(separator: "\n").first(where: { $0.hasPrefix("ExecStart=") }) else {
            throw ServiceCheckFailure("\(installedUnit) has no ExecStart=")
        }
        return String(line.dropFirst("ExecStart=".count))
    }

    static let installedUnit = "/lib/systemd/system/kioskd.service"

    /// The installed unit with its ExecStart= extended by `--frames N --capture FILE` (a bounded run whose last
    /// frame is read back through writeback), as a drop-in; the rest of the unit as shipped.
    static func addCaptureDropIn(frames: Int, capture: String) throws {
        let command = try shippedExecStart() + " --frames \(frames) --capture \(capture)"
        try must("mkdir -p \(dropInDirectory) && printf '[Service]\\nExecStart=\\nExecStart=%s\\n' '\(command)' > \(dropInDirectory)/capture.conf && systemctl daemon-reload")
    }

    static func removeCaptureDropIn() {
        _ = try? shell("rm -f \(dropInDirectory)/capture.conf && systemctl daemon-reload")
    }

    /// The [Service] lines of the installed unit that make kioskd's sandbox and identity (everything but how
    /// systemd starts, stops, watches and reloads it, and the directories it makes), as `KEY=VALUE`.
    static func unitSandboxProperties() throws -> [String] {
        let lifecycle: Set<String> = ["Type", "NotifyAccess", "ExecStart", "ExecReload", "WatchdogSec", "WatchdogSignal", "Sockets",
                                      "Restart", "RestartSec", "KillSignal", "TimeoutStopSec", "RuntimeDirectory", "RuntimeDirectoryMode",
                                      "RuntimeDirectoryPreserve", "StateDirectory", "StateDirectoryMode", "Environment"]
        var inService = false
        var properties: [String] = []
        for raw in try String(contentsOfFile: installedUnit, encoding: .utf8).split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") { inService = line == "[Service]"; continue }
            guard inService, let eq = line.firstIndex(of: "="), !lifecycle.contains(String(line[..<eq])) else { continue }
            properties.append(line)
        }
        return properties
    }

    /// `/bin/sh -c script` as a transient service with `properties` (systemd-run --wait --pipe): its exit status
    /// and output.
    static func runSandboxed(_ script: String, properties: [String]) throws -> (status: Int32, text: String) {
        let options = properties.map { "-p '\($0)'" }.joined(separator: " ")
        return try shell("systemd-run --quiet --wait --pipe --collect \(options) /bin/sh -c '\(script)'", timeout: 60)
    }

    /// kioskctl's `--json` reply as the member: its `result` object.
    static func memberResult(_ arguments: String) throws -> [String: Any] {
        let r = try kioskctlAsMember("\(arguments) --json")
        guard r.status == 0 else { throw ServiceCheckFailure("kioskctl \(arguments) as \(member): exit \(r.status): \(r.text)") }
        guard let reply = try? JSONSerialization.jsonObject(with: Data(r.text.utf8)) as? [String: Any],
              let result = reply["result"] as? [String: Any] else {
            throw ServiceCheckFailure("kioskctl \(arguments): not a JSON reply with a result: \(r.text.prefix(300))")
        }
        return result
    }

    /// The clock helper: Python's ctypes calling glibc (adjtimex, clock_settime, settimeofday) on struct timex
    /// (x86_64 layout: modes at 0, maxerror 24, esterror 32, status 40), written where the unit's sandbox can read
    /// it (its /tmp is private). `state` prints the kernel's NTP state; `sync` clears STA_UNSYNC with a zero error
    /// bound (what chrony or ntpd do once synchronized), `unsync` sets it; `probe` tries each call and prints
    /// `NAME: ok` or `NAME: errno N`, setting the clock only to the time it just read.
    static let clockHelper = "/run/service-tier-clock.py"
    static let clockHelperText = """
        import ctypes, sys
        libc = ctypes.CDLL(None, use_errno=True)
        ADJ_MAXERROR, ADJ_ESTERROR, ADJ_STATUS, STA_UNSYNC, TIME_ERROR = 0x4, 0x8, 0x10, 0x40, 5
        def timex(modes=0, status=0):
            t = ctypes.create_string_buffer(256)
            ctypes.c_uint.from_buffer(t, 0).value = modes
            ctypes.c_int.from_buffer(t, 40).value = status
            return t
        def outcome(r):
            return "ok" if r != -1 else "errno %d" % ctypes.get_errno()
        def adjtimex(t):
            r = libc.adjtimex(t)
            if r == -1: sys.exit("adjtimex: errno %d" % ctypes.get_errno())
            return r
        what = sys.argv[1]
        if what == "state":
            t = timex(); r = adjtimex(t)
            status = ctypes.c_int.from_buffer(t, 40).value
            print("unsynchronized" if r == TIME_ERROR or status & STA_UNSYNC else "synchronized", "state %d status 0x%x" % (r, status))
        elif what == "sync":
            adjtimex(timex(ADJ_STATUS | ADJ_MAXERROR | ADJ_ESTERROR, 0))
        elif what == "unsync":
            adjtimex(timex(ADJ_STATUS, STA_UNSYNC))
        elif what == "probe":
            t = timex()
            print("adjtimex-read:", outcome(libc.adjtimex(t)))
            status = ctypes.c_int.from_buffer(t, 40).value
            print("adjtimex-set:", outcome(libc.adjtimex(timex(ADJ_STATUS, status))))
            now = ctypes.create_string_buffer(16)
            libc.clock_gettime(0, now)
            print("clock_settime:", outcome(libc.clock_settime(0, now)))
            tv = ctypes.create_string_buffer(16)
            libc.gettimeofday(tv, None)
            print("settimeofday:", outcome(libc.settimeofday(tv, None)))
        else:
            sys.exit("unknown: " + what)
        """ + "\n"

    /// Writes the clock helper (once) and runs it as root: its output.
    @discardableResult
    static func clock(_ what: String) throws -> String {
        if !FileManager.default.fileExists(atPath: clockHelper) {
            try clockHelperText.write(toFile: clockHelper, atomically: true, encoding: .utf8)
            try must("chmod 0644 \(clockHelper)")
        }
        return try must("/usr/bin/python3 \(clockHelper) \(what)")
    }

    /// The XRGB pixel at (x, y) of a PNG read with `readPNG`.
    static func pixel(_ image: (pixels: [UInt8], size: Size, stride: Int), x: Int, y: Int) -> UInt32 {
        let offset = y * image.stride + x * 4
        return UInt32(image.pixels[offset + 2]) << 16 | UInt32(image.pixels[offset + 1]) << 8 | UInt32(image.pixels[offset])
    }

    /// kioskctl as the non-root member of group kioskd.
    static func kioskctlAsMember(_ arguments: String, timeout: Double = 60) throws -> (status: Int32, text: String) {
        try shell("setpriv --reuid=\(member) --regid=\(member) --init-groups /usr/bin/kioskctl \(arguments)", timeout: timeout)
    }

    /// The framebuffer on the first CRTC of card0, read through `card` (an open fd that is not DRM master, so
    /// the kernel does not restore the console when another fd closes), or through a short-lived fd.
    static func crtcBuffer(_ card: DRMCard? = nil) throws -> UInt32? {
        let card = try card ?? DRMCard(path: DRMCard.cardPaths()[0])
        return try DRMResources(card: card).crtcs.first?.bufferID
    }

    /// `a` and `b` (PNG files) are the same picture, pixel for pixel; the comparison as text.
    static func samePicture(_ a: String, _ b: String) throws -> String {
        let x = try readPNG(path: a), y = try readPNG(path: b)
        guard x.size == y.size else { throw ServiceCheckFailure("\(a) is \(x.size), \(b) is \(y.size)") }
        let diff = compareImages(x.pixels, y.pixels, size: x.size, strideA: x.stride, strideB: y.stride, tolerance: 0)
        guard diff.differingPixels == 0 else { throw ServiceCheckFailure("\(a) differs from \(b): \(diff)") }
        return "\(x.size.width)x\(x.size.height), 0 pixels differ"
    }

    /// How many pixels of two PNG files differ (to show that a comparison can fail).
    static func differingPixels(_ a: String, _ b: String) throws -> Int {
        let x = try readPNG(path: a), y = try readPNG(path: b)
        guard x.size == y.size else { return x.size.width * x.size.height }
        return compareImages(x.pixels, y.pixels, size: x.size, strideA: x.stride, strideB: y.stride, tolerance: 0).differingPixels
    }
}
