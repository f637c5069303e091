import KioskRemote
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
    /// `vnc.tls`'s certificate and key, read and checked before the loop starts (`vncCredentials`).
    public var vncTLS: TLSCredentials?
    public var problem: ConfigurationProblem?

    public init() {}

    /// `vnc.tls`'s files read and checked (GnuTLS parses the certificate and the key, and matches them); nil
    /// without `tls:`. Synchronous file I/O: call it before the loop starts.
    /// - Throws: the file that cannot be read or used, at the place the config file names it, with the reason
    ///   (`kioskd.yaml:4:16: vnc.tls.key: /etc/kioskd/vnc.key: this key is not the certificate's (...)`).
    public static func vncCredentials(_ settings: VNCSettings) throws(SceneValidationError) -> TLSCredentials? {
        guard let tls = settings.tls else { return nil }
        let files = try tls.contents()
        do throws(TLSCredentials.Fault) {
            return try TLSCredentials(certificate: files.certificate, key: files.key)
        } catch {
            switch error {
            case .certificate(let reason), .library(let reason): throw tls.failure(.certificate, reason)
            case .key(let reason): throw tls.failure(.key, reason)
            }
        }
    }
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
    public static func vncTLSFile(_ path: String) -> Self { Self(label: "VNC TLS file", path: path, hint: reloadHint) }
}

