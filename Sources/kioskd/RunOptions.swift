import ArgumentParser
import KioskApp
import KioskCore
import KioskScene

// The options of `kioskd run` beside its own: the control socket's, and input's and screen power's. Each group is
// read into the config file's sections (`layer`), which `KioskConfiguration.resolve` merges.

/// Options of `kioskd run` for the control socket.
struct ControlOptions: ParsableArguments {
    @Option(help: "Control socket path (default: $KIOSKD_SOCKET, else /run/kioskd/control.sock); 'none' disables it.")
    var socket: String?

    @Option(help: "Group (name or number) owning the control socket (mode 0660); its members may connect.")
    var socketGroup: String?

    @Option(name: .customLong("control-allow-uid"), help: "Also allow this uid on the control socket (repeatable; root and kioskd's own user always are).")
    var allowUIDs: [UInt32] = []

    @Option(name: .customLong("control-allow-gid"), help: "Also allow peers whose primary gid is this (repeatable).")
    var allowGIDs: [UInt32] = []

    @Option(help: ArgumentHelp("The only folder `screenshot` may write a server-side file into (default \(KioskConfig.defaultScreenshotDirectory)).", valueName: "DIR"))
    var screenshotDir: String?

    /// The control options given, as the config file's `control:` section has them.
    var layer: KioskConfig.Control {
        var control = KioskConfig.Control()
        control.socket = socket
        control.socketGroup = socketGroup
        control.allowUIDs = allowUIDs
        control.allowGIDs = allowGIDs
        control.screenshotDirectory = screenshotDir
        return control
    }
}

/// Options of `kioskd run` for input devices and screen power.
struct InputOptions: ParsableArguments {
    @Option(name: .customLong("input"), help: ArgumentHelp("Use this input event device (repeatable) through libinput's path backend instead of the udev seat.", valueName: "path"))
    var inputPaths: [String] = []

    @Option(help: "udev seat whose input devices are used (default: seat0 with a display backend; headless uses none unless given), or none.")
    var seat: String?

    @Option(help: ArgumentHelp("Touch calibration matrix [a, b, c, d, e, f] as libinput takes it (x' = a x + b y + c, y' = d x + e y + f on 0...1 positions), applied to every device that supports it.", valueName: "a,b,c,d,e,f"),
            transform: { text in
                do { return try CalibrationMatrix(parsing: text) } catch { throw ValidationError("--calibration \(text): \(error)") }
            })
    var calibration: CalibrationMatrix?

    @Option(help: ArgumentHelp("Dim the backlight after this many seconds without input.", valueName: "seconds"))
    var idleDimAfter: Double?

    @Option(help: ArgumentHelp("Dimmed brightness as a share of the normal one, 0 to 1 (default 0.2).", valueName: "level"))
    var idleDimLevel: Double?

    @Option(help: ArgumentHelp("Blank the output after this many seconds without input; the touch that wakes it presses nothing.", valueName: "seconds"))
    var idleBlankAfter: Double?

    @Option(help: ArgumentHelp("A directory laid out as /sys/class/backlight (one directory per device, with brightness and max_brightness) to dim through; default /sys/class/backlight.", valueName: "dir"))
    var backlightDir: String?

    func validate() throws {
        try Self.validate(idleLayer)
        if !inputPaths.isEmpty, let seat, seat != "none" { throw ValidationError("--input and --seat \(seat) exclude each other: give devices or a seat") }
    }

    /// Refuses idle settings that cannot work, naming the options.
    static func validate(_ idle: KioskConfig.Idle) throws {
        do { _ = try InputSettings.idle(idle).validated() } catch {
            throw ValidationError("\(error)".replacingOccurrences(of: "idle.", with: "--idle-").replacingOccurrences(of: "_", with: "-"))
        }
    }

    /// The input options given, as the config file's `input:` section has them.
    var layer: KioskConfig.Input {
        var input = KioskConfig.Input()
        input.devices = inputPaths
        input.seat = seat
        input.calibration = calibration
        return input
    }

    /// The idle options given, as the config file's `idle:` section has them.
    var idleLayer: KioskConfig.Idle {
        var idle = KioskConfig.Idle()
        idle.dimAfter = idleDimAfter
        idle.dimLevel = idleDimLevel
        idle.blankAfter = idleBlankAfter
        return idle
    }
}

