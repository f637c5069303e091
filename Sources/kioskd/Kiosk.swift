import KioskCore
import KioskDisplay
import KioskRender
import KioskRuntime
import KioskScene
import Logging

/// `kioskd run` with an `outputs:` section: the same run as with one output (control socket, signals, service,
/// fleet, input, `--frames`, `--stats-out`, `--screenshot`, `--capture`), on several output slots. What speaks of
/// one output (the run's `--frames`, `--screenshot`, `--capture` and `--stats-out`, the top-level `stats` and
/// `display.info` fields, the service's readiness) speaks of the first entry's. Main thread.
extension RunCommand {
    func runOutputs(_ config: [KioskConfig.Output], loop: MainLoop, signals: SignalRouting, settings: Settings,
                    service: ServiceWiring, backendKind: BackendKind, fleet: FleetWiring.Configuration?,
                    memory: KioskConfig.Memory, video: KioskConfig.Video, logger: Logger) throws {
        if settings.connector != nil {
            logger.warning("connector \(settings.connector!): ignored, the outputs: section names the connectors")
        }
        let entries = MultiOutputWiring.entries(config, settings: settings)
        let pool = RenderQueuePool(strategy: (renderStrategy ?? .roundRobin).poolStrategy)
        let socket = ControlWiring.socketDescription(options: control, inheritedListenFD: service.controlSocketFD)
        let drm = backendKind == .drm || backendKind == .auto
        guard drm || backendKind == .headless else {
            throw DisplayError("outputs: several outputs need --backend drm or headless; fbdev drives one framebuffer")
        }
        let wiring = try MultiOutputWiring(entries: entries, loop: loop, pool: pool, hotplug: drm, source: { entry in
            if drm {
                return DRMOutputSource(options: DRMOptions(
                    device: settings.device == "auto" ? nil : settings.device, driver: settings.driver, connector: entry.connector,
                    mode: entry.mode, commit: settings.commit, bufferCount: settings.buffers))
            }
            let m = entry.mode ?? ModeRequest(width: 1024, height: 768, refreshHz: 60)
            return HeadlessOutputSource(connector: entry.connector,
                                        mode: DisplayMode(width: m.width, height: m.height, refreshMilliHz: m.refreshMilliHz ?? 60_000),
                                        bufferCount: settings.buffers)
        }, runner: { engine, path in
            engine.repaintWindowMode = repaintWindowMode
            return try SceneRunner(engine: engine, path: path, watch: watch ?? true, fpsOverlay: fpsOverlay ?? false, memory: memory, video: video,
                            substitute: diagnosticPage(socket: socket), logger: logger)
        }, logger: logger)
        let first = wiring.first
        let controlSocket = try ControlWiring.start(options: control, inheritedListenFD: service.controlSocketFD, loop: loop,
                                                    scene: first.stage, logger: logger)
        defer { controlSocket?.stop() }
        controlSocket?.rotation = first.rotation
        controlSocket?.attach(wiring)
        let session = RunSession(engine: first.engine, frameLimit: frames, controlSocket: controlSocket)
        first.flips = { [unowned session] in session.flips }
        session.stopOnSignals(signals)
        // Each output's runner reloads its own scene on SIGHUP and hands its own engine over.
        for output in wiring.outputs { output.runner.follow(signals, logger: logger) }
        let fatal = FatalFrameExit(engines: wiring.outputs.map(\.engine), loop: loop)
        // The last frame of --frames N on the first output is captured, on whichever display it adopts.
        var capturer: WritebackCapturer?
        if capture != nil, let frames {
            first.manager.prepareOutput = { backend in
                guard let drm = backend as? DRMBackend else { return }
                capturer = try WritebackCapturer(backend: drm)
                try capturer?.capturePresent(number: frames)
            }
        }
        let fleetWiring = try FleetWiring.start(fleet, loop: loop, control: controlSocket, stage: first.stage, logger: logger)
        defer { fleetWiring?.stop() }
        fleetWiring?.client.onData = { [stages = wiring.stages] values in try stages.setData(values) }
        let inputWiring = InputWiring(settings: input.settings(backend: backendKind, backlight: settings.backlight, board: settings.boardInput),
                                      outputs: wiring.outputs, control: controlSocket, logger: logger)
        inputWiring.fleet = fleetWiring?.client
        wiring.onDetached = { [weak inputWiring] output in inputWiring?.outputDetached(output.connector) }
        wiring.onEvent = { [weak controlSocket, weak service, weak inputWiring] output, event in
            controlSocket?.outputChanged(event)
            service?.outputChanged()
            switch event {
            case .connected(let info), .modeChanged(let info):
                inputWiring?.follow(info, display: output.engine.backend)
                PlaneWiring.follow(output.engine, rotation: output.rotation, logger: logger)
            case .disconnected: break
            }
        }
        wiring.start(logger: logger)
        service.attach(runner: first.runner, session: session, signals: signals)
        inputWiring.start()
        try session.run(startingEngine: false)

        let shown = first.engine.backend
        var problems = writePictures(display: shown, captured: capturer?.lastCapture)
        if let failure = fatal.failure { problems.insert(failure, at: 0) }
        let pacing = shown?.flipPacing ?? .vblank
        wiring.stopOthers()
        first.engine.stop()
        let report = RunStatsReport(flips: session.flips, info: shown?.info, loop: loop, rotation: first.rotation,
                                    poweredOn: shown?.isPoweredOn ?? false, firstFrameMs: session.firstCompleteFrameMs, pacing: pacing)
        for output in wiring.outputs {
            let flips = output.flips()
            logger.info("\(flips.framesFlipped) frames flipped on \(output.connector), missed vblanks \(flips.missedVblanks)")
        }
        if let statsOut {
            do { try report.write(to: statsOut, engine: first.engine.stats, extra: RunStatsReport.videoFigures(first.stage)) } catch { problems.append("\(error)") }
        }
        for output in wiring.outputs { output.engine.detachOutput() }
        withExtendedLifetime((pool, wiring, session, service, inputWiring, fatal)) {}
        if !problems.isEmpty { throw DisplayError(problems.joined(separator: "; ")) }
    }
}
