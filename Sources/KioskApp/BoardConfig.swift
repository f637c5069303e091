import Foundation
import KioskCore
import KioskDisplay
import KioskScene
import Yams

/// A board file (`board-configs/*.yaml`): which card (by driver name or path), connector, mode, commit API,
/// buffer count and output rotation a board or panel uses, the backlight idle dimming uses, and how its touch
/// panel is calibrated (`input:`). Command-line options and the config file override it. A plain value.
public struct BoardConfig: Sendable, Equatable {
    /// The board's name (`board:`), for the log.
    public var name: String?
    /// The backlight idle dimming uses: a device name under /sys/class/backlight (`rpi_backlight`).
    public var backlight: String?
    /// The settings the board gives, in the config file's own type, as a source beside the command line and the
    /// config file (`KioskConfiguration.resolve`): the card (`device` or `driver`), connector, mode, commit,
    /// buffers, rotation, and `input: {calibration: [a, b, c, d, e, f], map: [{device: GLOB, output: CONNECTOR,
    /// calibration: [...]}]}`, the panel's touch calibration for every device or per device name.
    public var layer = KioskConfig()

    public init() {}

    public static let keys = ["board", "device", "driver", "connector", "mode", "commit", "buffers", "rotation", "backlight", "input"]
    public static let inputKeys = ["calibration", "map"]
    /// Board files are a few lines; anything larger is not one.
    public static let maximumBytes = 64 * 1024

    /// Reads and validates a board file. Errors name the file, the line and column, and the key.
    public static func load(path: String) throws -> BoardConfig {
        // A regular file only, and never more than the bound read: /dev/zero or a FIFO given by mistake is refused
        // unread.
        let bytes: [UInt8]
        do throws(RegularFileError) {
            bytes = try RegularFile(opening: path).contents(maximumBytes: maximumBytes)
        } catch {
            throw OutputError("board file \(path): cannot read it (\(error.problem))")
        }
        guard bytes.count <= maximumBytes else {
            throw OutputError("board file \(path): more than the \(maximumBytes) bytes a board file may have")
        }
        let data = Data(bytes)
        guard let text = String(data: data, encoding: .utf8) else {
            throw OutputError("board file \(path): not UTF-8 text")
        }
        return try parse(text, file: path)
    }

    /// Validates a board file's text with the scene files' machinery (`DocumentDecoder`): every problem is one
    /// line, `FILE:LINE:COL: KEY: message`, and an unknown key names the nearest known one.
    public static func parse(_ text: String, file: String) throws -> BoardConfig {
        do throws(SceneValidationError) {
            return try decode(Data(text.utf8), file: file)
        } catch {
            throw OutputError(error.description)
        }
    }

    private static func decode(_ data: Data, file: String) throws(SceneValidationError) -> BoardConfig {
        let root = try DocumentDecoder.compose(data, file: file, maximumBytes: maximumBytes, maximumFlowDepth: 8,
                                               emptyMessage: "the board file is empty; it needs some of \(keys.joined(separator: ", "))")
        let decoder = DocumentDecoder(file: file)
        var config = BoardConfig()
        let fields = decoder.fields(root, "", allowed: keys, expected: "a mapping of keys (\(keys.joined(separator: ", ")))") ?? [:]
        func nonEmptyString(_ key: String) -> String? {
            guard let node = fields[key]?.value, let s = decoder.string(node, key) else { return nil }
            if s.isEmpty { decoder.error(node, key, "expected a non-empty string") }
            return s.isEmpty ? nil : s
        }
        config.name = nonEmptyString("board")
        config.layer.device = nonEmptyString("device")
        config.layer.driver = nonEmptyString("driver")
        config.layer.connector = nonEmptyString("connector")
        config.backlight = nonEmptyString("backlight")
        if let node = fields["mode"]?.value, let s = decoder.string(node, "mode") {
            do { config.layer.mode = try ModeRequest(validating: s) } catch let error as ModeRequestError {
                decoder.error(node, "mode", error.message)
            } catch {
                decoder.error(node, "mode", "\(error)")
            }
        }
        if let node = fields["commit"]?.value { config.layer.commit = decoder.choice(node, "commit", CommitChoice.self) }
        if let node = fields["buffers"]?.value { config.layer.buffers = decoder.integer(node, "buffers", in: 2...3) }
        if let node = fields["rotation"]?.value {
            let s = node.scalar?.string ?? ""
            config.layer.rotation = OutputRotation(parsing: s)
            if config.layer.rotation == nil {
                decoder.error(node, "rotation", "'\(s)' is not one of \(OutputRotation.allowedValues) (degrees clockwise)")
            }
        }
        if let node = fields["input"]?.value,
           let input = decoder.fields(node, "input", allowed: inputKeys,
                                      expected: "a mapping (calibration: [a, b, c, d, e, f], map: [{device: GLOB, calibration: [...]}])") {
            config.layer.input.calibration = input["calibration"].flatMap { decoder.inputCalibration($0.value, "input.calibration") }
            config.layer.input.map = input["map"].map { decoder.inputDeviceMap($0.value, "input.map") } ?? []
        }
        if let device = fields["device"], fields["driver"] != nil, config.layer.device != "auto" {
            decoder.error(device.key, "device", "give device or driver, not both")
        }
        _ = try decoder.finish()
        return config
    }
}
