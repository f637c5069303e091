/// The `vnc:` section: a remote view of each output's composed frame over VNC (RFB 3.8), off unless the file has
/// one. Output N (0-based, in `outputs:` order) listens on `port + N`. A plain value; any thread.
public struct VNCSettings: Sendable, Equatable {
    public static let keys = ["listen", "password_file", "tls", "input", "max_clients"]
    public static let defaultHost = "127.0.0.1"
    public static let defaultPort = 5900
    public static let defaultMaxClients = 4
    public static let maxClientsRange = 1...64

    /// The address to listen on: an IPv4 address (`0.0.0.0` for every interface) or `localhost`.
    public var host = Self.defaultHost
    public var port = Self.defaultPort
    /// A file whose first line is the password of VNC authentication (only its first 8 bytes count, as RFB
    /// defines); nil offers no authentication, which is allowed on loopback only.
    public var passwordFile: String?
    /// Whether a client's pointer drives the output (a button press is a touch); false is view-only.
    public var input = false
    public var maxClients = Self.defaultMaxClients

    public init() {}

    /// Whether `host` is reachable only from this machine.
    public var isLoopback: Bool { Self.isLoopback(host) }

    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host.hasPrefix("127.")
    }
}
