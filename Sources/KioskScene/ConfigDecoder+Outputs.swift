import KioskCore
import Yams

/// The `outputs:` section: one entry per connector, each with the mode, rotation and scene it asks for. Checked
/// here with located errors (`kioskd check-config`); used once, by one thread, inside `ConfigLoader`.
extension ConfigDecoder {
    static let outputKeys = ["connector", "mode", "rotation", "scene", "wall"]

    /// A list of `{connector, mode, rotation, scene}`; connectors named once each. An empty list (or `outputs:`
    /// with nothing) is no entries.
    func outputs(_ node: Node) -> [KioskConfig.Output] {
        if node.scalar != nil, scene.resolves(node, to: .null) { return [] }
        guard let items = node.sequence else {
            scene.error(node, "outputs", "expected a list of outputs ({connector, mode, rotation, scene} each)")
            return []
        }
        var outputs: [KioskConfig.Output] = []
        var seen: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            let at = "outputs[\(index)]"
            guard let f = scene.fields(item, at, allowed: Self.outputKeys, expected: "a mapping (connector, mode, rotation, scene)") else {
                continue
            }
            guard let connectorNode = f["connector"]?.value else {
                scene.error(item, at, "missing 'connector' (the connector's name, as `kioskd devices` shows it)")
                continue
            }
            guard let connector = nonEmpty(connectorNode, at + ".connector") else { continue }
            if let first = seen[connector] {
                scene.error(connectorNode, at + ".connector", "'\(connector)' is named already by outputs[\(first)]")
                continue
            }
            seen[connector] = index
            var output = KioskConfig.Output(connector: connector)
            output.mode = f["mode"].flatMap { modeRequest($0.value, at + ".mode") }
            output.rotation = f["rotation"].flatMap { rotation($0.value, at + ".rotation") }
            if let node = f["scene"]?.value, let text = nonEmpty(node, at + ".scene") {
                output.scene = text == "default" ? text : path(text)
            }
            if let node = f["wall"]?.value { output.wall = wall(node, at + ".wall") }
            outputs.append(output)
        }
        return outputs
    }
}
