import Yams

extension ConfigDecoder {
    /// The `mqtt:` section, decoded by `MQTTSettings.decode(node:file:)` with its problems reported among the
    /// file's other diagnostics. Relative file paths (password, CA, certificate, key) are resolved against the
    /// config file's folder like every other path in it. An empty `mqtt:` is no section at all.
    func mqtt(_ node: Node) -> MQTTSettings? {
        if node.scalar != nil, scene.resolves(node, to: .null) { return nil }
        do {
            var settings = try MQTTSettings.decode(node: node, file: scene.file)
            settings.passwordFile = settings.passwordFile.map(path)
            settings.caFile = settings.caFile.map(path)
            settings.certFile = settings.certFile.map(path)
            settings.keyFile = settings.keyFile.map(path)
            return settings
        } catch let error as SceneValidationError {
            for diagnostic in error.diagnostics {
                scene.report(diagnostic.severity, diagnostic.location, diagnostic.path, diagnostic.message)
            }
            return nil
        } catch {
            scene.error(node, "mqtt", "\(error)")
            return nil
        }
    }
}
