import KioskCore

extension KioskConfig {
    /// The `input:` section: where the devices come from and what each gets. A plain value.
    public struct Input: Sendable, Equatable {
        /// The udev seat (`seat0`), or `none`.
        public var seat: String?
        /// Event nodes to use through libinput's path backend instead of a seat.
        public var devices: [String] = []
        /// The calibration for every device no `map` entry calibrates.
        public var calibration: CalibrationMatrix?
        /// Per device, by name glob: its output and calibration.
        public var map: [InputDeviceRule] = []
        public init() {}
    }

    /// The `idle:` section: dimming and blanking after idle time, and the timetable. A plain value.
    public struct Idle: Sendable, Equatable {
        public var dimAfter: Double?
        public var dimLevel: Double?
        public var blankAfter: Double?
        public var schedule: [ScreenScheduleEntry] = []
        public init() {}
    }
}
