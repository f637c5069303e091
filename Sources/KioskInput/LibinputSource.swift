import CInput
import CUdev
import Glibc
import KioskCore
import Logging

private let logger = Logger(label: "kioskd.input")

/// Where libinput finds its devices.
public enum InputBackend: Sendable, Equatable, CustomStringConvertible {
    /// Every input device udev assigns to the seat (`seat0`), added and removed as they come and go.
    case seat(String)
    /// These event nodes only (`/dev/input/event3`), through libinput's path backend.
    case paths([String])

    public var description: String {
        switch self {
        case .seat(let name): "udev seat \(name)"
        case .paths(let paths): "devices \(paths.joined(separator: ", "))"
        }
    }
}

/// Why the input devices could not be opened, naming the object and the errno. An immutable value.
public struct InputError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// libinput on the main loop: its descriptor is a loop source, and whenever it is readable libinput dispatches and
/// every queued event leaves as an `InputEvent` value through `onEvent`, in the same loop iteration, before the
/// observers run. The libinput and udev contexts are owned here and freed in `deinit`; nothing of C leaves.
///
/// Calibration: libinput applies a touchscreen's `LIBINPUT_CALIBRATION_MATRIX` udev property by itself; a matrix
/// the rules give a device (its `input.map` entry's, else `input.calibration`) replaces it, through libinput's
/// calibration API, as the device is added, on every device that supports calibration. Absolute positions leave normalized to 0...1 (`DevicePosition`).
///
/// Lives on the main thread with its loop.
public final class LibinputSource {
    public let backend: InputBackend
    public let rules: InputDeviceRules
    /// Every event, in order. Set it before `start()`.
    public var onEvent: ((InputEvent) -> Void)?
    /// The devices present now, by event node name (`event3`).
    public private(set) var devices: [String: InputDeviceInfo] = [:]

    private let context: OpaquePointer
    private let udev: OpaquePointer?
    private let loop: MainLoop
    private var source: SourceHandle?

    /// Opens the backend's devices. Device additions already queued are reported by `start()`.
    ///
    /// - Throws: `InputError` when libinput cannot start: no udev, the seat cannot be assigned, a path given
    ///   cannot be opened (naming it and the errno).
    public init(loop: MainLoop, backend: InputBackend, rules: InputDeviceRules = InputDeviceRules()) throws(InputError) {
        self.loop = loop
        self.backend = backend
        self.rules = rules
        switch backend {
        case .seat(let seat):
            guard let udev = udev_new() else { throw InputError("udev: cannot create a context: \(errnoDescription(errno))") }
            guard let context = libinput_udev_create_context(&Self.interface, nil, udev) else {
                udev_unref(udev)
                throw InputError("libinput: cannot create a udev context")
            }
            Self.routeLogs(of: context)
            guard libinput_udev_assign_seat(context, seat) == 0 else {
                libinput_unref(context)
                udev_unref(udev)
                throw InputError("libinput: cannot assign seat \(seat) (is udev's database there, /run/udev?)")
            }
            self.udev = udev
            self.context = context
        case .paths(let paths):
            guard let context = libinput_path_create_context(&Self.interface, nil) else {
                throw InputError("libinput: cannot create a path context")
            }
            Self.routeLogs(of: context)
            for path in paths {
                // libinput logs the reason itself; the errno of its open is gone by now, so open once more to name it.
                guard libinput_path_add_device(context, path) != nil else {
                    let fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK)
                    let reason = fd < 0 ? errnoDescription(errno) : "not an input device libinput can use"
                    if fd >= 0 { close(fd) }
                    libinput_unref(context)
                    throw InputError("input device \(path): \(reason)")
                }
            }
            self.udev = nil
            self.context = context
        }
    }

    deinit {
        source?.cancel()
        libinput_unref(context)
        if let udev { udev_unref(udev) }
    }

    /// Watches libinput's descriptor and reports the events already queued (the devices found at start).
    public func start() throws(InputError) {
        guard source == nil else { return }
        let fd = libinput_get_fd(context)
        do {
            source = try loop.addSource(fd: fd, events: .readable) { [weak self] _ in self?.dispatch() }
        } catch {
            throw InputError("libinput fd \(fd): cannot watch it: \(error)")
        }
        dispatch()
    }

    /// Reads the devices and hands on every event queued.
    private func dispatch() {
        let status = libinput_dispatch(context)
        if status < 0 { logger.error("libinput: dispatch failed: \(errnoDescription(-status))") }
        while let event = libinput_get_event(context) {
            defer { libinput_event_destroy(event) }
            if let converted = convert(event) { onEvent?(converted) }
        }
    }

    private func convert(_ event: OpaquePointer) -> InputEvent? {
        let device = libinput_event_get_device(event)!
        let name = String(cString: libinput_device_get_name(device))
        let type = libinput_event_get_type(event)
        func made(_ time: UInt64, _ kind: InputEvent.Kind) -> InputEvent { InputEvent(timeMicroseconds: time, device: name, kind: kind) }
        switch type {
        case LIBINPUT_EVENT_DEVICE_ADDED:
            let info = describe(device)
            devices[String(cString: libinput_device_get_sysname(device))] = info
            configure(device, info)
            logger.info("input device added: \(info.name) (\(info.node ?? "?"): \(info.capabilities.isEmpty ? "no capability kioskd uses" : info.capabilities))")
            return made(Self.nowMicroseconds(), .deviceAdded(info))
        case LIBINPUT_EVENT_DEVICE_REMOVED:
            let info = devices.removeValue(forKey: String(cString: libinput_device_get_sysname(device))) ?? describe(device)
            logger.info("input device removed: \(info.name) (\(info.node ?? "?"))")
            return made(Self.nowMicroseconds(), .deviceRemoved(info))
        case LIBINPUT_EVENT_TOUCH_DOWN, LIBINPUT_EVENT_TOUCH_MOTION, LIBINPUT_EVENT_TOUCH_UP, LIBINPUT_EVENT_TOUCH_CANCEL:
            let touch = libinput_event_get_touch_event(event)!
            let time = libinput_event_touch_get_time_usec(touch)
            let slot = Int(libinput_event_touch_get_seat_slot(touch))
            func position() -> DevicePosition {
                DevicePosition(x: libinput_event_touch_get_x_transformed(touch, 1), y: libinput_event_touch_get_y_transformed(touch, 1),
                               calibrated: true)
            }
            switch type {
            case LIBINPUT_EVENT_TOUCH_DOWN: return made(time, .touchDown(slot: slot, position: position()))
            case LIBINPUT_EVENT_TOUCH_MOTION: return made(time, .touchMotion(slot: slot, position: position()))
            case LIBINPUT_EVENT_TOUCH_UP: return made(time, .touchUp(slot: slot))
            default: return made(time, .touchCancel(slot: slot))
            }
        case LIBINPUT_EVENT_POINTER_MOTION:
            let pointer = libinput_event_get_pointer_event(event)!
            return made(libinput_event_pointer_get_time_usec(pointer),
                        .pointerMotion(dx: libinput_event_pointer_get_dx(pointer), dy: libinput_event_pointer_get_dy(pointer)))
        case LIBINPUT_EVENT_POINTER_MOTION_ABSOLUTE:
            let pointer = libinput_event_get_pointer_event(event)!
            // libinput calibrates touchscreens only; an absolute pointer's matrix is applied by InputMapping.
            let position = DevicePosition(x: libinput_event_pointer_get_absolute_x_transformed(pointer, 1),
                                          y: libinput_event_pointer_get_absolute_y_transformed(pointer, 1),
                                          calibrated: libinput_device_config_calibration_has_matrix(device) != 0)
            return made(libinput_event_pointer_get_time_usec(pointer), .pointerMotionAbsolute(position: position))
        case LIBINPUT_EVENT_POINTER_BUTTON:
            let pointer = libinput_event_get_pointer_event(event)!
            return made(libinput_event_pointer_get_time_usec(pointer),
                        .pointerButton(code: libinput_event_pointer_get_button(pointer),
                                       pressed: libinput_event_pointer_get_button_state(pointer) == LIBINPUT_BUTTON_STATE_PRESSED))
        case LIBINPUT_EVENT_KEYBOARD_KEY:
            let keyboard = libinput_event_get_keyboard_event(event)!
            let code = libinput_event_keyboard_get_key(keyboard)
            return made(libinput_event_keyboard_get_time_usec(keyboard),
                        .key(name: KeyNames.name(of: code), code: code,
                             pressed: libinput_event_keyboard_get_key_state(keyboard) == LIBINPUT_KEY_STATE_PRESSED))
        default:
            return nil
        }
    }

    private func describe(_ device: OpaquePointer) -> InputDeviceInfo {
        InputDeviceInfo(name: String(cString: libinput_device_get_name(device)),
                        node: "/dev/input/" + String(cString: libinput_device_get_sysname(device)),
                        isTouch: libinput_device_has_capability(device, LIBINPUT_DEVICE_CAP_TOUCH) != 0,
                        isPointer: libinput_device_has_capability(device, LIBINPUT_DEVICE_CAP_POINTER) != 0,
                        isKeyboard: libinput_device_has_capability(device, LIBINPUT_DEVICE_CAP_KEYBOARD) != 0)
    }

    /// Applies the configured calibration where libinput supports it for the device.
    private func configure(_ device: OpaquePointer, _ info: InputDeviceInfo) {
        guard let calibration = rules.calibration(forDevice: info.name),
              libinput_device_config_calibration_has_matrix(device) != 0 else { return }
        let matrix = calibration.values.map(Float.init)
        let status = matrix.withUnsafeBufferPointer { libinput_device_config_calibration_set_matrix(device, $0.baseAddress) }
        if status == LIBINPUT_CONFIG_STATUS_SUCCESS {
            logger.info("input device \(info.name): calibration \(calibration)")
        } else {
            logger.error("input device \(info.name): calibration \(calibration) refused: \(String(cString: libinput_config_status_to_str(status)))")
        }
    }

    /// libinput's own messages (a device it cannot use, a kernel bug it works around) go to kioskd's log.
    private static func routeLogs(of context: OpaquePointer) {
        libinput_log_set_priority(context, LIBINPUT_LOG_PRIORITY_INFO)
        libinput_log_set_handler(context) { _, priority, format, arguments in
            guard let format, let arguments else { return }
            var buffer = [CChar](repeating: 0, count: 512)
            _ = vsnprintf(&buffer, buffer.count, format, arguments)
            var message = String(cString: buffer)
            while message.last?.isNewline == true { message.removeLast() }
            switch priority {
            case LIBINPUT_LOG_PRIORITY_ERROR: logger.error("libinput: \(message)")
            case LIBINPUT_LOG_PRIORITY_INFO: logger.info("libinput: \(message)")
            default: logger.debug("libinput: \(message)")
            }
        }
    }

    private static func nowMicroseconds() -> UInt64 { MonotonicInstant.now().nanoseconds / 1000 }

    /// How libinput opens and closes device nodes: plainly, since kioskd runs with access to /dev/input (the
    /// `input` group, or root); a seat manager is not needed on a kiosk.
    nonisolated(unsafe) private static var interface = libinput_interface(
        open_restricted: { path, flags, _ in
            let fd = open(path!, flags | O_CLOEXEC)
            return fd < 0 ? -errno : fd
        },
        close_restricted: { fd, _ in _ = close(fd) })
}
