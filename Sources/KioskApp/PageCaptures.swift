import Foundation
import Glibc
import KioskCore
import KioskDisplay
import KioskRender
import KioskRuntime
import Logging

/// `kioskd run --capture-pages DIR`, for one output (every output has its own): at every page change of its scene,
/// once the new page is shown alone and whole (its transition has ended, `SceneStage.addPageSettledListener`), the
/// frame the CRTC produces for the next present is read back through the writeback connector and saved as
/// `DIR/OUTPUT/NNNN-PAGE.png` (OUTPUT is the output's name, its connector; NNNN counts the output's page changes from
/// 1; the page's name with anything but letters, digits, `.`, `_` and `-` made `_`). The first page shown at start
/// is not a change. A file appears whole (written under a temporary name, then renamed).
///
/// The present is asked for at once (`LayerEngine.setNeedsPresent`), so a still page is captured too. Where the
/// writeback connector cannot share the CRTC, the capture frame is the writeback connector's alone (see
/// `WritebackCapturer`), and one more present, asked for once the capture is complete, puts the display back. The
/// out-fence is watched on the main loop;
/// the pixels are copied once it has signalled, and encoded and written off the loop. Changes closer together
/// than a frame share one capture, named after the newest page.
///
/// Lives on the main thread.
final class PageCaptures {
    /// The output's capturer; replaced when another display is adopted, nil while there is none.
    var capturer: WritebackCapturer? {
        didSet {
            oldValue?.onCapture = nil
            capturer?.onCapture = { [weak self] capture in self?.captured(capture) }
        }
    }

    private let directory: String
    private unowned let output: DrivenOutput
    private var engine: LayerEngine { output.engine }
    private let jobs: BackgroundJobs
    private let logger: Logger
    private var changes = 0
    /// The page change waiting for the next present to be captured.
    private var requested: (number: Int, page: String)?
    /// Captures made, until their out-fence signals (or gives up).
    private var waiting: [Int: (capture: WritebackCapture, source: SourceHandle, timeout: TimerHandle)] = [:]
    /// Files written so far.
    private(set) var written = 0
    /// The stage's settled pages, heard while the captures last.
    private var pageSettledListener: ListenerToken?

    /// How long a capture's out-fence may take before the capture is given up.
    static let fenceTimeout: Duration = .seconds(2)

    /// Creates `directory` when it does not exist; the output's own folder in it is made at its first capture.
    /// - Throws: `OutputError` naming the directory when it cannot be made.
    init(directory: String, output: DrivenOutput, logger: Logger) throws {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw OutputError("--capture-pages \(directory): cannot create the directory: \(error.localizedDescription)")
        }
        self.directory = directory
        self.output = output
        self.logger = logger
        jobs = try BackgroundJobs(loop: output.engine.loop, label: "kioskd.capture-pages")
        pageSettledListener = output.stage.addPageSettledListener { [weak self] page in self?.pageSettled(page) }
    }

    deinit {
        for entry in waiting.values {
            entry.source.cancel()
            entry.timeout.cancel()
        }
    }

    /// The file a page change's capture goes to.
    static func fileName(number: Int, page: String) -> String {
        String(format: "%04d-", number) + fileName(output: page) + ".png"
    }

    /// `name` as a file name: anything but ASCII letters, digits, `.`, `_` and `-` made `_`.
    static func fileName(output name: String) -> String {
        String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
    }

    private func pageSettled(_ page: String) {
        changes += 1
        guard let capturer else {
            logger.warning("--capture-pages: \(output.name): page change \(changes) (\(page)) not captured: no display")
            return
        }
        do {
            try capturer.captureNextPresent()
        } catch {
            logger.error("--capture-pages: \(output.name): page change \(changes) (\(page)) not captured: \(error)")
            return
        }
        if let skipped = requested {
            logger.warning("--capture-pages: \(output.name): page change \(skipped.number) (\(skipped.page)) was followed by another before a frame was presented; one capture for both")
        }
        requested = (changes, page)
        engine.setNeedsPresent()
    }

    private func captured(_ capture: WritebackCapture) {
        // A capture asked for by someone else (`--capture`'s last frame) is not a page's.
        guard let (number, page) = requested else { return }
        requested = nil
        guard let fd = capture.fenceFD else {
            logger.error("--capture-pages: \(output.name): page change \(number) (\(page)): the capture has no out-fence")
            return
        }
        do {
            let source = try engine.loop.addSource(fd: fd, events: .readable) { [weak self] _ in self?.fenceSignalled(number, page: page) }
            let timeout = engine.loop.addTimer(after: Self.fenceTimeout) { [weak self] in self?.gaveUp(number, page: page) }
            waiting[number] = (capture, source, timeout)
        } catch {
            logger.error("--capture-pages: \(output.name): page change \(number) (\(page)): cannot watch the out-fence: \(error)")
        }
    }

    private func fenceSignalled(_ number: Int, page: String) {
        guard let entry = waiting.removeValue(forKey: number) else { return }
        entry.source.cancel()
        entry.timeout.cancel()
        // Now that the frame has been written, a present may put the display connector back on the CRTC where the
        // capture frame took it off: a modeset before then could drop or spoil the capture.
        engine.setNeedsPresent()
        let pixels = entry.capture.buffer.readPixels(), size = entry.capture.buffer.size
        let folder = (directory as NSString).appendingPathComponent(Self.fileName(output: output.name))
        let path = (folder as NSString).appendingPathComponent(Self.fileName(number: number, page: page))
        jobs.run({ () -> String? in
            // Whole or not at all (a temporary file renamed into place).
            do {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                try writePNG(xrgb8888: pixels, size: size, stride: size.width * 4, to: path)
            } catch {
                return "\(error)"
            }
            return nil
        }, then: { [weak self] problem in
            guard let self else { return }
            if let problem {
                logger.error("--capture-pages: \(output.name): page change \(number) (\(page)): \(problem)")
            } else {
                written += 1
                logger.debug("--capture-pages: \(output.name): page change \(number) (\(page)) saved to \(path)")
            }
        })
    }

    private func gaveUp(_ number: Int, page: String) {
        guard let entry = waiting.removeValue(forKey: number) else { return }
        entry.source.cancel()
        engine.setNeedsPresent()
        logger.error("--capture-pages: \(output.name): page change \(number) (\(page)): writeback fence not signalled within \(Self.fenceTimeout)")
    }
}
