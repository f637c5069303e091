import Foundation
import KioskControl
import KioskCore
import KioskRemote
import KioskScene
import Logging

/// The `vnc:` section on a running kiosk: one `VNCServer` per output (output N on `port + N`), and, with
/// `input: true`, each client's left button as a touch on its output, through the output's `InputRouter` (the
/// hit-testing libinput's touches go through, so a click presses a button and makes its `press` event). Main thread.
final class VNCWiring {
    let servers: [VNCServer]
    /// A client's touch in progress: its slot is pressed.
    private var pressed: Set<Int> = []
    private let logger: Logger

    /// The first device slot of VNC clients' touches, far above a touchscreen's.
    static let firstSlot = 1000

    /// `password` is `vnc.password_file`'s, read before the loop started (`VNCSettings.password()`); `tls` is
    /// `vnc.tls`'s credentials, made then too (`ResolvedRun.vncCredentials`).
    /// - Throws: a port that cannot be listened on, naming the address and the errno.
    init(settings: VNCSettings, password: [UInt8]?, tls: TLSCredentials?, outputs: [DrivenOutput], input: InputWiring, control: ControlWiring?, loop: MainLoop,
         logger: Logger) throws {
        self.logger = logger
        if let password, password.count > 8 {
            logger.warning("vnc.password_file \(settings.passwordFile ?? ""): only the first 8 bytes of the password count (VNC authentication)")
        }
        // The config decoder refuses these already; a password never goes missing on the way.
        guard password != nil || settings.passwordFile == nil else {
            throw VNCError("vnc: \(settings.listenAddress) needs the password of vnc.password_file, which was not read")
        }
        guard tls != nil || settings.tls == nil else {
            throw VNCError("vnc: \(settings.listenAddress) needs the certificate of vnc.tls, which was not read")
        }
        guard password != nil || tls != nil || settings.isLoopback else {
            throw VNCError("vnc: \(settings.listenAddress) is beyond loopback and has neither TLS nor a password")
        }
        let security: RFBSession.Security = password.map(RFBSession.Security.password) ?? .none
        var servers: [VNCServer] = []
        for (index, output) in outputs.enumerated() {
            let options = VNCServer.Options(host: settings.host, port: settings.port + index, security: security, tls: tls,
                                            maxClients: settings.maxClients, input: settings.input, name: output.name)
            servers.append(try VNCServer(options: options, engine: output.engine, loop: loop, logger: logger))
        }
        self.servers = servers
        control?.vncStats = { [weak self] in .array((self?.servers ?? []).map(Self.stats)) }
        guard settings.input else { return }
        for (index, server) in servers.enumerated() {
            let router = input.routing.routers[index]
            let size = { outputs[index].engine.backend?.info.mode.size ?? outputs[index].engine.rootLayer.frame.size }
            server.onPointer = { [unowned self, unowned router] client, buttons, x, y in
                let panel = size()
                let position = DevicePosition(x: (Double(x) + 0.5) / Double(max(panel.width, 1)),
                                              y: (Double(y) + 0.5) / Double(max(panel.height, 1)), calibrated: true)
                let slot = Self.firstSlot + client
                let time = MonotonicInstant.now().nanoseconds / 1000
                let down = buttons & 1 != 0
                let kind: InputEvent.Kind?
                switch (down, pressed.contains(slot)) {
                case (true, false): pressed.insert(slot); kind = .touchDown(slot: slot, position: position)
                case (true, true): kind = .touchMotion(slot: slot, position: position)
                case (false, true): pressed.remove(slot); kind = .touchUp(slot: slot)
                case (false, false): kind = nil
                }
                if let kind { router.handle(InputEvent(timeMicroseconds: time, device: "vnc", kind: kind)) }
            }
        }
    }

    /// One server's entry in `stats`' `vnc` list.
    private static func stats(_ server: VNCServer) -> JSONValue {
        [
            "output": .string(server.outputName),
            "listen": .string(VNCServer.address(host: server.options.host, port: server.options.port)),
            "tls": .bool(server.options.tls != nil),
            "input": .bool(server.options.input),
            "clients": .int(Int64(server.clientCount)),
            "clients_accepted": .int(Int64(server.clientsAccepted)),
            "clients_refused": .int(Int64(server.clientsRefused)),
            "authentication_failures": .int(Int64(server.authenticationFailures)),
            "updates_sent": .int(Int64(server.updatesSent)),
            "bytes_sent": .int(Int64(server.bytesSent)),
            "queued_bytes": .int(Int64(server.queuedBytes)),
            "loop_cpu_us": .int(server.loopTime.nanosecondsClamped / 1000),
            "loop_cpu_longest_us": .int(server.longestLoopTime.nanosecondsClamped / 1000),
        ]
    }
}
