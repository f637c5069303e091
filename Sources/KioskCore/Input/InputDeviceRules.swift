import Glibc

/// One `input.map` entry: devices whose name matches the glob `device` (`ft5406*`, `*Touch*`) belong to `output`
/// and get `calibration`. A plain value.
public struct InputDeviceRule: Sendable, Equatable {
    /// A shell glob on the device's name as the kernel reports it (`*`, `?`, `[...]`).
    public var device: String
    public var output: String?
    public var calibration: CalibrationMatrix?

    public init(device: String, output: String? = nil, calibration: CalibrationMatrix? = nil) {
        self.device = device
        self.output = output
        self.calibration = calibration
    }

    public func matches(_ name: String) -> Bool { fnmatch(device, name, 0) == 0 }
}

/// What each input device gets: the first rule whose glob matches its name decides its output and calibration;
/// a device no rule calibrates gets `calibration` (`input.calibration`, `--calibration`), or none, which leaves
/// libinput's own (`LIBINPUT_CALIBRATION_MATRIX`). A plain value; any thread.
public struct InputDeviceRules: Sendable, Equatable {
    public var rules: [InputDeviceRule]
    /// The matrix for every device no rule calibrates.
    public var calibration: CalibrationMatrix?

    public init(rules: [InputDeviceRule] = [], calibration: CalibrationMatrix? = nil) {
        self.rules = rules
        self.calibration = calibration
    }

    /// The calibration for the device named so: the first matching rule that has one, else the default.
    public func calibration(forDevice name: String) -> CalibrationMatrix? {
        rules.first { $0.calibration != nil && $0.matches(name) }?.calibration ?? calibration
    }

    /// The connector the device named so belongs to, when a rule names one.
    public func output(forDevice name: String) -> String? {
        rules.first { $0.output != nil && $0.matches(name) }?.output
    }

    /// Whether any device gets a matrix from here.
    public var calibratesAny: Bool { calibration != nil || rules.contains { $0.calibration != nil } }
}
