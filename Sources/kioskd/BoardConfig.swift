import Foundation
import KioskCore
import KioskDisplay
import Yams

/// A board file (`board-configs/*.yaml`): which card (by driver name or path), connector, mode, commit API,
/// buffer count and output rotation a board or panel uses. Command-line options override it. A plain value.
struct BoardConfig: Equatable {
    var name: String?
    var device: String?
    var driver: String?
    var connector: String?
    var mode: ModeRequest?
    var commit: CommitChoice?
    var buffers: Int?
    var rotation: OutputRotation?
    /// The backlight idle dimming uses: a device name under /sys/class/backlight (`rpi_backlight`).
    var backlight: String?

    static let keys = ["board", "device", "driver", "connector", "mode", "commit", "buffers", "rotation", "backlight"]
    /// Board files are a few lines; anything larger is not one.
    static let maximumBytes = 64 * 1024

    /// Reads and validates a board file. Errors name the file, the line and column, and the key.
    static func load(path: String) throws -> BoardConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DisplayError("board file \(path): cannot read it (\(errnoDescription(errno)))")
        }
        guard data.count <= maximumBytes else {
            throw DisplayError("board file \(path): \(data.count) bytes, more than the \(maximumBytes) a board file may have")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw DisplayError("board file \(path): not UTF-8 text")
        }
        return try parse(text, file: path)
    }

    static func parse(_ text: String, file: String) throws -> BoardConfig {
        let root: Node?
        do { root = try Yams.compose(yaml: text) } catch {
            throw DisplayError("board file \(file): \("\(error)".replacingOccurrences(of: "\n", with: " "))")
        }
        guard let root else { throw DisplayError("board file \(file): empty") }
        guard let mapping = root.mapping else {
            throw DisplayError("\(file):\(where_(root)): expected a mapping of keys (\(keys.joined(separator: ", ")))")
        }
        var config = BoardConfig()
        for (keyNode, value) in mapping {
            guard let key = keyNode.string else { throw DisplayError("\(file):\(where_(keyNode)): keys must be strings") }
            func string() throws -> String {
                guard let s = value.scalar?.string, !s.isEmpty else {
                    throw DisplayError("\(file):\(where_(value)): \(key): expected a string")
                }
                return s
            }
            switch key {
            case "board": config.name = try string()
            case "device": config.device = try string()
            case "driver": config.driver = try string()
            case "connector": config.connector = try string()
            case "backlight": config.backlight = try string()
            case "mode":
                let s = try string()
                do { config.mode = try ModeRequest(validating: s) } catch let error as ModeRequestError {
                    throw DisplayError("\(file):\(where_(value)): \(error.message)")
                }
            case "commit":
                let s = try string()
                guard let c = CommitChoice(rawValue: s) else {
                    throw DisplayError("\(file):\(where_(value)): commit: '\(s)' is not one of atomic, legacy, auto")
                }
                config.commit = c
            case "buffers":
                guard let n = value.int, (2...3).contains(n) else {
                    throw DisplayError("\(file):\(where_(value)): buffers: expected 2 or 3")
                }
                config.buffers = n
            case "rotation":
                let s = value.scalar?.string ?? ""
                guard let r = OutputRotation(parsing: s) else {
                    throw DisplayError("\(file):\(where_(value)): rotation: '\(s)' is not one of \(OutputRotation.allowedValues) (degrees clockwise)")
                }
                config.rotation = r
            default:
                throw DisplayError("\(file):\(where_(keyNode)): unknown key '\(key)'; known keys: \(keys.joined(separator: ", "))")
            }
        }
        if config.device != nil && config.driver != nil && config.device != "auto" {
            throw DisplayError("board file \(file): give device or driver, not both")
        }
        return config
    }

    private static func where_(_ node: Node) -> String {
        node.mark.map { "\($0.line):\($0.column)" } ?? "?"
    }
}
