import KioskCore
import Yams

/// How input calibration and the device map are written wherever a file may give them (the config file's and a
/// board file's `input:` section): `calibration: [a, b, c, d, e, f]` and `map: [{device: GLOB, output: CONNECTOR,
/// calibration: [...]}]`, checked where each value stands.
extension DocumentDecoder {
    public static let inputMapKeys = ["device", "output", "calibration"]

    /// `[a, b, c, d, e, f]`, six numbers as libinput's calibration matrix takes them.
    public func inputCalibration(_ node: Node, _ path: String) -> CalibrationMatrix? {
        guard let items = node.sequence.map(Array.init) else {
            error(node, path, "expected [a, b, c, d, e, f], six numbers as libinput's calibration matrix")
            return nil
        }
        let values = items.enumerated().compactMap { index, item in number(item, "\(path)[\(index)]") }
        guard values.count == items.count else { return nil }
        do { return try CalibrationMatrix(values: values) } catch {
            self.error(node, path, error.message)
            return nil
        }
    }

    /// A `map:` list: one rule per entry, in order.
    public func inputDeviceMap(_ node: Node, _ path: String) -> [InputDeviceRule] {
        guard let sequence = node.sequence else { error(node, path, "expected a list"); return [] }
        return sequence.enumerated().compactMap { index, item in inputDeviceRule(item, "\(path)[\(index)]") }
    }

    /// One `map:` entry: `{device: GLOB, output: CONNECTOR, calibration: [...]}`, with output or calibration.
    public func inputDeviceRule(_ node: Node, _ path: String) -> InputDeviceRule? {
        guard let f = fields(node, path, allowed: Self.inputMapKeys,
                             expected: "a mapping {device: NAME-GLOB, output: CONNECTOR, calibration: [a, b, c, d, e, f]}") else { return nil }
        guard let deviceEntry = f["device"] else {
            error(node, path, "an entry needs 'device', a glob on the device's name (\"*Touch*\")")
            return nil
        }
        func text(_ node: Node, _ path: String) -> String? {
            guard let s = string(node, path) else { return nil }
            guard !s.isEmpty else { error(node, path, "expected a non-empty string"); return nil }
            return s
        }
        guard let device = text(deviceEntry.value, "\(path).device") else { return nil }
        let output = f["output"].flatMap { text($0.value, "\(path).output") }
        let calibration = f["calibration"].flatMap { inputCalibration($0.value, "\(path).calibration") }
        if f["output"] == nil, f["calibration"] == nil {
            error(node, path, "an entry needs 'output' or 'calibration' (or both)")
            return nil
        }
        return InputDeviceRule(device: device, output: output, calibration: calibration)
    }
}
