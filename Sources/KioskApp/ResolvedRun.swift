import KioskRuntime
import KioskScene

/// What `kioskd run` read before its loop started: the configuration, the config file's warnings and `mqtt:`
/// section with its password, and the configuration problem shown instead of the scene, if any. A plain value made on
/// the main thread.
public struct ResolvedRun {
    public var configuration = KioskConfiguration()
    public var warnings: [SceneDiagnostic] = []
    public var fleet: FleetWiring.Configuration?
    /// The password of `vnc.password_file`, read before the loop starts.
    public var vncPassword: [UInt8]?
    public var problem: ConfigurationProblem?

    public init() {}
}

/// A file of kioskd's configuration that could not be used, under keep-going: shown on the diagnostic page until
/// it is fixed and kioskd reloaded (SIGHUP starts kioskd over, `StartOver`). A plain value.
public struct ConfigurationProblem: Error, CustomStringConvertible {
    public var subject: DiagnosticPage.Subject
    public var error: any Error

    public init(subject: DiagnosticPage.Subject, error: any Error) {
        self.subject = subject
        self.error = error
    }

    public var description: String { "\(subject.label.lowercased()) \(subject.path) cannot be used" }
}

extension DiagnosticPage.Subject {
    private static let reloadHint = "Fix the file, then reload kioskd (systemctl reload kioskd, or SIGHUP): it starts over with the configuration read again."
    public static func configFile(_ path: String) -> Self { Self(label: "Config file", path: path, hint: reloadHint) }
    public static func boardFile(_ path: String) -> Self { Self(label: "Board file", path: path, hint: reloadHint) }
    public static func passwordFile(_ path: String) -> Self { Self(label: "MQTT password file", path: path, hint: reloadHint) }
    public static func vncPasswordFile(_ path: String) -> Self { Self(label: "VNC password file", path: path, hint: reloadHint) }
}

