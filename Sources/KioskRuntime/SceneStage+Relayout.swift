import KioskCore
import KioskScene
import Logging

private let logger = Logger(label: "kioskd.scene")

/// Laying the scene out again when a display of another size is adopted (`LayerEngine.addSceneSizeListener`).
/// Main thread, like the stage.
extension SceneStage {
    /// Whether a scene (a load, or a layout for a new display) is waiting for its first complete render before it
    /// replaces the one shown.
    public var isReplacing: Bool { incoming != nil }

    /// The scene on screen, laid out again for `size` off the loop like a load (percent sizes follow the new
    /// screen; data values and the current page are kept), replaces the old layout whole once it has rendered.
    /// The old layout is hidden at once, so nothing laid out for the previous size is shown on the new display.
    /// A scene still loading (laid out for the previous size) is the one laid out again.
    func relayout(for size: Size) {
        root.isHidden = true
        let shown = incoming?.scene ?? scene, source = incoming?.source ?? self.source
        logger.info("scene \(source): laying out again for \(size.width)x\(size.height)")
        prepareOffLoop(source: source, adjusted: false, then: { result in
            if case .failure(let error) = result {
                logger.error("scene \(source): not laid out for \(size.width)x\(size.height): \(error.message)")
            }
        }, read: { .success(LoadedScene(scene: shown)) }, install: {})
    }
}
