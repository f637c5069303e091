import Yams

extension ConfigDecoder {
    /// The `sync:` section: `group` (required: letters, digits, `-`, `_` and `.`, at most 64) and `role` (`auto`,
    /// `leader` or `follower`). Whether `mqtt:` is there too is checked with the whole file (`config(_:)`).
    func sync(_ node: Node) -> SyncSettings? {
        let keys = SyncSettings.keys
        guard let f = scene.fields(node, "sync", allowed: keys, expected: "a mapping (\(keys.joined(separator: ", ")))") else { return nil }
        guard let groupNode = f["group"]?.value else {
            scene.error(node, "sync", "missing 'group': the name the kiosks that move in step share")
            return nil
        }
        guard let group = nonEmpty(groupNode, "sync.group") else { return nil }
        guard group.utf8.count <= 64, group.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) }) else {
            scene.error(groupNode, "sync.group", "'\(group)' must be at most 64 letters, digits, '-', '_' or '.' (it is an MQTT topic level)")
            return nil
        }
        var sync = SyncSettings(group: group)
        if let entry = f["role"] {
            guard let role = scene.choice(entry.value, "sync.role", SyncSettings.Role.self) else { return nil }
            sync.role = role
        }
        return sync
    }
}
