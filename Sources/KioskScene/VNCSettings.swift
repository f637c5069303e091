import KioskCore

/// The `vnc:` section: a remote view of each output's composed frame over VNC (RFB 3.8), off unless the file has
/// one. Output N (0-based, in `outputs:` order) listens on `port + N`. A plain value; any thread.
public struct VNCSettings: Sendable, Equatable {
    public static let keys = ["listen", "password_file", "tls", "input", "max_clients"]
    public static let tlsKeys = ["cert", "key"]
    /// The most bytes read of a certificate or key file.
    public static let maxTLSFileBytes = 256 * 1024
    public static let defaultHost = "127.0.0.1"
    public static let defaultPort = 5900
    public static let defaultMaxClients = 4
    public static let maxClientsRange = 1...64

    /// The address to listen on: an IPv4 address (`0.0.0.0` for every interface), an IPv6 address without its
    /// brackets (`::` for every interface, IPv4 too; `::1`), or `localhost`.
    public var host = Self.defaultHost
    public var port = Self.defaultPort
    /// A file whose first line is the password of VNC authentication (only its first 8 bytes count, as RFB
    /// defines); nil offers no authentication, which is allowed on loopback only.
    public var passwordFile: String?
    /// Where the config file names `passwordFile`, for the error when it cannot be read.
    public var passwordFileLocation: SourceLocation?
    /// Whether a client's pointer drives the output (a button press is a touch); false is view-only.
    public var input = false
    public var maxClients = Self.defaultMaxClients
    /// `tls:`: VeNCrypt with this certificate and key; nil for plain RFB.
    public var tls: TLS?

    /// `vnc.tls`: PEM files of the server's certificate (chain) and its unencrypted private key, with where the
    /// config file names them (for the error when one cannot be used).
    public struct TLS: Sendable, Equatable {
        public var certificateFile: String
        public var keyFile: String
        public var certificateLocation: SourceLocation?
        public var keyLocation: SourceLocation?

        public init(certificateFile: String, keyFile: String, certificateLocation: SourceLocation? = nil, keyLocation: SourceLocation? = nil) {
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.certificateLocation = certificateLocation
            self.keyLocation = keyLocation
        }

        /// An error at the place the config file names the certificate (`.certificate`) or the key.
        public func failure(_ file: File, _ message: String) -> SceneValidationError {
            let (path, location, at) = file == .certificate ? (certificateFile, certificateLocation, "vnc.tls.cert") : (keyFile, keyLocation, "vnc.tls.key")
            return SceneValidationError(diagnostics: [SceneDiagnostic(severity: .error, location: location ?? SourceLocation(file: path, line: 1, column: 1),
                                                                      path: at, message: "\(path): \(message)")])
        }

        public enum File: Sendable { case certificate, key }

        /// Both files' bytes. Synchronous file I/O: call it before the loop starts.
        /// - Throws: the file that cannot be read (with the errno), is not a regular file, or is empty, at the place
        ///   the config file names it.
        public func contents() throws(SceneValidationError) -> (certificate: [UInt8], key: [UInt8]) {
            func read(_ file: File) throws(SceneValidationError) -> [UInt8] {
                let path = file == .certificate ? certificateFile : keyFile
                let bytes: [UInt8]
                do throws(RegularFileError) {
                    bytes = try RegularFile(opening: path).contents(maximumBytes: VNCSettings.maxTLSFileBytes)
                } catch {
                    switch error.reason {
                    case .notFound(let code), .system(_, let code): throw failure(file, "cannot read it: \(errnoDescription(code))")
                    case .notRegular: throw failure(file, error.problem)
                    }
                }
                guard !bytes.isEmpty else { throw failure(file, "the file is empty") }
                return bytes
            }
            return (try read(.certificate), try read(.key))
        }
    }

    public init() {}

    /// Whether `host` is reachable only from this machine.
    public var isLoopback: Bool { Self.isLoopback(host) }

    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host.hasPrefix("127.") || host == "::1"
    }

    /// `HOST:PORT` as the config file writes it, an IPv6 host in brackets.
    public var listenAddress: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The password of VNC authentication: the first line of `passwordFile` (RFB uses its first 8 bytes), nil
    /// without one. Synchronous file I/O: call it before the loop starts.
    /// - Throws: the file that cannot be read, or an empty first line, at the place the config file names it, with
    ///   the errno (`kioskd.yaml:3:18: vnc.password_file: /etc/kioskd/vnc.password: cannot read it: ENOENT`).
    public func password() throws(SceneValidationError) -> [UInt8]? {
        guard let passwordFile else { return nil }
        let location = passwordFileLocation ?? SourceLocation(file: passwordFile, line: 1, column: 1)
        func failure(_ message: String) -> SceneValidationError {
            SceneValidationError(diagnostics: [SceneDiagnostic(severity: .error, location: location, path: "vnc.password_file", message: message)])
        }
        let bytes: [UInt8]
        do throws(RegularFileError) {
            // A regular file only: a FIFO given by mistake is refused, not waited on; never more than the bound.
            bytes = try RegularFile(opening: passwordFile).contents(maximumBytes: 64 * 1024)
        } catch {
            switch error.reason {
            case .notFound(let code), .system(_, let code): throw failure("\(passwordFile): cannot read it: \(errnoDescription(code))")
            case .notRegular: throw failure("\(passwordFile) \(error.problem)")
            }
        }
        let line = Array(bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).first ?? [])
        guard !line.isEmpty else { throw failure("\(passwordFile): the first line is empty; it must hold the password") }
        return line
    }
}
