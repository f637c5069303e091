import KioskCore
import KioskRender
import Logging

private let logger = Logger(label: "kioskd.input")

/// The pointer's cursor: shown when a pointer device moves or clicks, hidden `hideAfter` seconds after the last of
/// those and at once on any touch (a touchscreen never shows a cursor). One timer at a time, re-armed only when it
/// fires, so a stream of motion costs no timer work. Lives on the main thread with the engine.
///
/// Two paths, chosen when it is made:
/// - **plane**: the output has a cursor plane (`CursorPlane`, a KMS cursor plane): the arrow is drawn once on a
///   background queue, turned as the output turns the scene, and placed on the plane; a move only asks the engine
///   for a present (`LayerEngine.setNeedsPresent`) that carries the plane's new position. Nothing is composited.
/// - **composited**: an arrow layer above the scene on the engine's root, left out of hit-testing so it never covers
///   the widget under it, staying across scene loads. Also used until the plane's image is drawn, and for good once
///   the plane stops being usable (the output fell back to legacy commits).
public final class PointerCursor {
    public static let defaultHideAfter = 3.0

    public enum Path: String, Sendable { case plane, composited }

    public let hideAfter: Double
    public let layer: Layer
    /// The plane the cursor is shown on; nil: composited.
    public private(set) var plane: CursorPlane?
    private let engine: LayerEngine
    private let loop: MainLoop
    private let rotation: OutputRotation
    private var lastMotion: MonotonicInstant
    private var timer: TimerHandle?
    /// The arrow in panel orientation, once drawn for the plane.
    private var planeImage: CursorImage?
    private var jobs: BackgroundJobs?
    private var shownOnPlane = false
    private var lastPoint: (x: Double, y: Double)?

    /// `plane`: the output's cursor plane, if it has one; `rotation`: how the output turns the scene.
    public init(engine: LayerEngine, hideAfter: Double = PointerCursor.defaultHideAfter, plane: CursorPlane? = nil,
                rotation: OutputRotation = .degrees0) {
        self.hideAfter = hideAfter
        self.engine = engine
        self.rotation = rotation
        loop = engine.loop
        lastMotion = engine.loop.now
        layer = Layer(frame: Rect(size: CursorContent.size), content: CursorContent(), name: "cursor")
        layer.zPosition = .greatestFiniteMagnitude
        layer.isHitTestable = false
        layer.isHidden = true
        engine.rootLayer.addChild(layer)
        if let plane, plane.isUsable, let jobs = try? BackgroundJobs(loop: engine.loop, label: "kioskd.cursor") {
            self.plane = plane
            self.jobs = jobs
            jobs.run({ () -> Result<CursorImage, OutputError> in
                do { return .success(try CursorContent.image(rotation: rotation)) } catch { return .failure(OutputError("\(error)")) }
            }, then: { [weak self] result in self?.imageDrawn(result) })
        }
    }

    deinit {
        timer?.cancel()
        layer.removeFromParent()
        if shownOnPlane { plane?.place(at: nil); engine.setNeedsPresent() }
    }

    /// Which way the cursor is shown.
    public var path: Path { plane == nil ? .composited : .plane }

    /// Whether the cursor is shown now (on the plane, or drawn in the frame).
    public var isShown: Bool { shownOnPlane || !layer.isHidden }

    /// The pointer moved (or clicked) at the point, in the engine root's coordinates: show the cursor there.
    public func show(at point: (x: Double, y: Double)) {
        lastMotion = loop.now
        lastPoint = point
        if timer == nil { arm() }
        place(at: point)
    }

    private func place(at point: (x: Double, y: Double)) {
        if let plane, !plane.isUsable { self.plane = nil; shownOnPlane = false }
        if let plane, let planeImage {
            let panel = rotation.sceneToPanel(sceneSize: engine.rootLayer.frame.size).apply(x: point.x, y: point.y)
            plane.place(at: planeImage.origin(forPointerAt: panel))
            shownOnPlane = true
            engine.setNeedsPresent()
            return
        }
        let frame = Rect(x: Int(point.x.rounded(.down)), y: Int(point.y.rounded(.down)),
                         width: CursorContent.size.width, height: CursorContent.size.height)
        if layer.frame != frame { layer.frame = frame }
        layer.isHidden = false
    }

    /// A touch: no cursor.
    public func hide() {
        conceal()
        timer?.cancel()
        timer = nil
    }

    private func conceal() {
        layer.isHidden = true
        if shownOnPlane {
            shownOnPlane = false
            plane?.place(at: nil)
            engine.setNeedsPresent()
        }
    }

    /// The plane's image is drawn: from now on the plane shows the cursor, and a composited one moves onto it.
    private func imageDrawn(_ result: Result<CursorImage, OutputError>) {
        guard let plane else { return }
        let image: CursorImage
        do {
            image = try result.get()
            try plane.setImage(image)
        } catch {
            logger.error("cursor: \(error); composited instead")
            self.plane = nil
            return
        }
        planeImage = image
        if !layer.isHidden, let lastPoint {
            layer.isHidden = true
            place(at: lastPoint)
        }
    }

    private func arm() {
        timer = loop.addTimer(at: lastMotion + .nanoseconds(Int64(hideAfter * 1e9))) { [weak self] in self?.fired() }
    }

    private func fired() {
        timer = nil
        if loop.now - lastMotion >= .nanoseconds(Int64(hideAfter * 1e9)) {
            conceal()
        } else {
            arm()
        }
    }
}
