/// One event from an input device, as a plain value: what KioskInput turns libinput's events into, and what a
/// test's fake event source makes. An immutable value; any thread.
public struct InputEvent: Sendable, Equatable {
    /// Kernel time of the event, microseconds on CLOCK_MONOTONIC.
    public var timeMicroseconds: UInt64
    /// The device's name as the kernel reports it (`ft5406_ts`, `Logitech USB Keyboard`).
    public var device: String
    public var kind: Kind

    public init(timeMicroseconds: UInt64, device: String, kind: Kind) {
        self.timeMicroseconds = timeMicroseconds
        self.device = device
        self.kind = kind
    }

    public enum Kind: Sendable, Equatable {
        /// A finger touches down in multitouch `slot`.
        case touchDown(slot: Int, position: DevicePosition)
        case touchMotion(slot: Int, position: DevicePosition)
        case touchUp(slot: Int)
        /// The kernel withdrew the touch (palm, device gone): whatever it started is cancelled.
        case touchCancel(slot: Int)
        /// A relative pointer (mouse) moved by `dx`, `dy` (libinput's normalized units, about one pixel each).
        case pointerMotion(dx: Double, dy: Double)
        /// An absolute pointer (a touchscreen driven as a mouse, a VM's tablet) moved to `position`.
        case pointerMotionAbsolute(position: DevicePosition)
        /// A pointer button; `code` is the evdev code (BTN_LEFT is 0x110).
        case pointerButton(code: UInt32, pressed: Bool)
        /// A key; `name` is the evdev name without the `KEY_` prefix, lower case (`tab`, `enter`, `space`, `a`).
        case key(name: String, code: UInt32, pressed: Bool)
        case deviceAdded(InputDeviceInfo)
        case deviceRemoved(InputDeviceInfo)
    }

    /// Whether this is something a person did (a touch, a click, a key), as opposed to a device coming or going.
    public var isUserActivity: Bool {
        switch kind {
        case .deviceAdded, .deviceRemoved: false
        default: true
        }
    }
}

/// An absolute position on a device: 0...1 across its range in each axis, as libinput transforms it to a
/// one-by-one output. `calibrated` says whether the device's calibration matrix was applied already (libinput
/// does so for touchscreens); where it was not, `InputMapping` applies the configured one. An immutable value.
public struct DevicePosition: Sendable, Equatable {
    public var x: Double
    public var y: Double
    public var calibrated: Bool

    public init(x: Double, y: Double, calibrated: Bool) {
        self.x = x
        self.y = y
        self.calibrated = calibrated
    }
}

/// What a device is, for logs and `input` device events. An immutable value; any thread.
public struct InputDeviceInfo: Sendable, Equatable {
    public var name: String
    /// The event node (`/dev/input/event3`), when known.
    public var node: String?
    public var isTouch: Bool
    public var isPointer: Bool
    public var isKeyboard: Bool

    public init(name: String, node: String?, isTouch: Bool, isPointer: Bool, isKeyboard: Bool) {
        self.name = name
        self.node = node
        self.isTouch = isTouch
        self.isPointer = isPointer
        self.isKeyboard = isKeyboard
    }

    /// `touch, pointer` and so on, for logs.
    public var capabilities: String {
        [isTouch ? "touch" : nil, isPointer ? "pointer" : nil, isKeyboard ? "keyboard" : nil].compactMap { $0 }.joined(separator: ", ")
    }
}
