#if canImport(Glibc)
import Glibc
#endif
import Yams

extension ConfigDecoder {
    /// The `vnc:` section (`VNCSettings`): `listen` (`HOST:PORT`, an IPv4 address, an IPv6 address in brackets, or
    /// `localhost`), `password_file`, `tls` (`cert`, `key`), `input`, `max_clients`. Listening beyond loopback with
    /// neither TLS nor a password is an error that says why. An empty `vnc:` is the defaults.
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
            if let tls = tls(entry.value) { vnc.tls = tls } else { valid = false }
        }
        if let entry = f["input"] {
            if let input = scene.bool(entry.value, "vnc.input") { vnc.input = input } else { valid = false }
        }
        if let entry = f["max_clients"] {
            if let count = scene.integer(entry.value, "vnc.max_clients", in: VNCSettings.maxClientsRange) { vnc.maxClients = count } else { valid = false }
        }
        if valid, !vnc.isLoopback, vnc.passwordFile == nil, vnc.tls == nil {
            scene.error(f["listen"]?.value ?? node, "vnc.listen",
                        "listening on \(vnc.host), beyond loopback, needs TLS or a password: set vnc.tls (cert, key) or vnc.password_file "
                        + "(or listen on 127.0.0.1)")
            valid = false
        }
        return valid ? vnc : nil
    }

    /// `tls: {cert: FILE, key: FILE}`, both required, paths relative to the config file.
    private func tls(_ node: Node) -> VNCSettings.TLS? {
        guard let f = scene.fields(node, "vnc.tls", allowed: VNCSettings.tlsKeys,
                                   expected: "a mapping (cert: the certificate's PEM file, key: its private key's)") else {
            return nil
        }
        var files: [String: (String, SourceLocation)] = [:]
        var valid = true
        for key in VNCSettings.tlsKeys {
            guard let entry = f[key] else {
                scene.error(node, "vnc.tls", "\(key) is missing: TLS needs both the certificate (cert) and its private key (key), as PEM files")
                valid = false
                continue
            }
            if let file = nonEmpty(entry.value, "vnc.tls.\(key)") { files[key] = (path(file), scene.location(entry.value)) } else { valid = false }
        }
        guard valid, let cert = files["cert"], let key = files["key"] else { return nil }
        return VNCSettings.TLS(certificateFile: cert.0, keyFile: key.0, certificateLocation: cert.1, keyLocation: key.1)
    }

    /// `HOST:PORT` or `PORT`; the host an IPv4 address, `localhost`, or an IPv6 address in brackets (`[::1]:5900`).
    private func listen(_ node: Node, _ at: String) -> (String, Int)? {
        let example = "expected HOST:PORT, such as 127.0.0.1:5900 or [::1]:5900 (an IPv4 address, localhost, or an IPv6 address in "
            + "brackets; a port 1-65535)"
        guard let text = node.scalar?.string, !text.isEmpty else {
            scene.error(node, at, example)
            return nil
        }
        var host = VNCSettings.defaultHost
        var portText = Substring(text)
        var bracketed = false
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                scene.error(node, at, "'\(text)': the IPv6 address has no closing ']': \(example)")
                return nil
            }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else {
                scene.error(node, at, "'\(text)': a port must follow the IPv6 address, as [\(host)]:5900: \(example)")
                return nil
            }
            portText = rest.dropFirst()
            bracketed = true
        } else if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
            guard !host.contains(":") else {
                scene.error(node, at, "'\(text)': an IPv6 address goes in brackets, as [\(host)]:\(portText): \(example)")
                return nil
            }
        }
        guard let port = Int(portText), (1...65535).contains(port) else {
            scene.error(node, at, "'\(portText)' is not a port: \(example)")
            return nil
        }
        if bracketed {
            guard Self.isIPv6(host) else {
                scene.error(node, at, "'\(host)' is not an IPv6 address: \(example)")
                return nil
            }
        } else {
            guard host == "localhost" || Self.isIPv4(host) else {
                scene.error(node, at, "'\(host)' is not an IPv4 address: \(example)")
                return nil
            }
        }
        return (host, port)
    }

    /// An IPv6 address as inet_pton(3) reads it (no zone, no brackets).
    static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return !text.isEmpty && inet_pton(AF_INET6, text, &address) == 1
    }

    static func isIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && Int(part).map { (0...255).contains($0) } == true
        }
    }
}
