import Yams

extension ConfigDecoder {
    /// The `vnc:` section (`VNCSettings`): `listen` (`HOST:PORT`, an IPv4 address or `localhost`), `password_file`,
    /// `input`, `max_clients`. Listening beyond loopback without a password is an error that says why; `tls` is
    /// refused with the reason (this kioskd offers VNC authentication only). An empty `vnc:` is the defaults.
    func vnc(_ node: Node) -> VNCSettings? {
        var vnc = VNCSettings()
        if node.scalar != nil, scene.resolves(node, to: .null) { return vnc }
        guard let f = scene.fields(node, "vnc", allowed: VNCSettings.keys,
                                   expected: "a mapping (\(VNCSettings.keys.joined(separator: ", ")))") else {
            return nil
        }
        var valid = true
        if let entry = f["listen"] {
            if let (host, port) = listen(entry.value, "vnc.listen") {
                vnc.host = host
                vnc.port = port
            } else {
                valid = false
            }
        }
        if let entry = f["password_file"] {
            if let file = nonEmpty(entry.value, "vnc.password_file") {
                vnc.passwordFile = path(file)
                vnc.passwordFileLocation = scene.location(entry.value)
            } else {
                valid = false
            }
        }
        if let entry = f["tls"] {
            scene.error(entry.key, "vnc.tls", "TLS (VeNCrypt) is not supported: remote viewers authenticate with the password of "
                        + "password_file (VNC authentication); to encrypt the view, reach a loopback listener through an SSH tunnel")
            valid = false
        }
        if let entry = f["input"] {
            if let input = scene.bool(entry.value, "vnc.input") { vnc.input = input } else { valid = false }
        }
        if let entry = f["max_clients"] {
            if let count = scene.integer(entry.value, "vnc.max_clients", in: VNCSettings.maxClientsRange) { vnc.maxClients = count } else { valid = false }
        }
        if valid, !vnc.isLoopback, vnc.passwordFile == nil {
            scene.error(f["listen"]?.value ?? node, "vnc.listen",
                        "listening on \(vnc.host), beyond loopback, needs a password: set vnc.password_file (or listen on 127.0.0.1)")
            valid = false
        }
        return valid ? vnc : nil
    }

    /// `HOST:PORT` or `PORT`; the host an IPv4 address or `localhost`.
    private func listen(_ node: Node, _ at: String) -> (String, Int)? {
        let example = "expected HOST:PORT, such as 127.0.0.1:5900 (an IPv4 address or localhost, a port 1-65535)"
        guard let text = node.scalar?.string, !text.isEmpty else {
            scene.error(node, at, example)
            return nil
        }
        var host = VNCSettings.defaultHost
        var portText = Substring(text)
        if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
        }
        guard let port = Int(portText), (1...65535).contains(port) else {
            scene.error(node, at, "'\(portText)' is not a port: \(example)")
            return nil
        }
        guard host == "localhost" || Self.isIPv4(host) else {
            scene.error(node, at, "'\(host)' is not an IPv4 address: \(example)")
            return nil
        }
        return (host, port)
    }

    static func isIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && Int(part).map { (0...255).contains($0) } == true
        }
    }
}
