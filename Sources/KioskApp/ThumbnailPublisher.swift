import KioskCore
import KioskFleet
import KioskRender
import KioskScene
import Logging

/// `<prefix>/thumbnail`: a JPEG of the first output's screen, `mqtt.thumbnail_width` pixels wide, retained, every
/// `mqtt.thumbnail_every` seconds, at each (re)connection, and at once when an output reports a fault (a black or
/// frozen screen, a flip that timed out), so a fleet dashboard shows every screen as it is and a problem as it
/// starts. A fault's thumbnail comes at most once in `faultSpacing`; one capture and encoding at a time (a tick
/// that finds one under way is skipped). The frame is captured as `screenshot` captures it; the reduction and the
/// encoding run off the loop. Main thread.
final class ThumbnailPublisher {
    static let faultSpacing = Duration.seconds(10)
    static let quality = 75

    private let fleet: FleetClient
    private let output: DrivenOutput
    private let width: Int
    private let jobs: BackgroundJobs
    private let loop: MainLoop
    private let logger: Logger
    private var timer: TimerHandle?
    private var listeners: [ListenerToken] = []
    private var inFlight = false
    private var lastFaultThumbnail: MonotonicInstant?
    /// Thumbnails published, and those not made (no frame yet, an encoding error), for logs and tests.
    private(set) var published = 0
    private(set) var failed = 0

    init(settings: MQTTSettings, every seconds: Int, fleet: FleetClient, outputs: [DrivenOutput], loop: MainLoop, logger: Logger) throws {
        self.fleet = fleet
        output = outputs[0]
        width = settings.thumbnailWidth
        self.loop = loop
        self.logger = logger
        jobs = try BackgroundJobs(loop: loop, label: "kioskd.thumbnails")
        listeners = [fleet.addConnectedListener { [unowned self] in publish(reason: "connected") }]
        listeners += outputs.map { output in
            output.engine.addFaultListener { [unowned self] fault in
                let now = loop.now
                guard lastFaultThumbnail.map({ now - $0 >= Self.faultSpacing }) ?? true else { return }
                lastFaultThumbnail = now
                publish(reason: fault.code.rawValue)
            }
        }
        timer = loop.addTimer(after: .seconds(seconds), repeating: .seconds(seconds)) { [unowned self] in publish(reason: "interval") }
    }

    deinit { timer?.cancel() }

    private func publish(reason: String) {
        guard !inFlight, fleet.connection.isConnected, let backend = output.engine.backend else { return }
        inFlight = true
        let size = backend.info.mode.size, width = self.width
        output.engine.captureScreen { [weak self] pixels in
            guard let self else { return }
            guard let pixels else {
                inFlight = false
                failed += 1
                logger.debug("thumbnail (\(reason)): no frame on \(output.name) yet")
                return
            }
            jobs.run({ () -> Result<[UInt8], RenderError> in
                do { return .success(try encodeJPEGThumbnail(xrgb8888: pixels, size: size, stride: size.width * 4, maxWidth: width, quality: Self.quality).jpeg) } catch let error as RenderError {
                    return .failure(error)
                } catch {
                    return .failure(RenderError("\(error)"))
                }
            }, then: { [weak self] result in
                guard let self else { return }
                inFlight = false
                switch result {
                case .success(let jpeg):
                    if fleet.publishThumbnail(jpeg) { published += 1 }
                case .failure(let error):
                    failed += 1
                    logger.error("\(error)")
                }
            })
        }
    }
}
