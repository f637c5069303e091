/// Reads back what an output's CRTC produced for one present: a writeback connector on DRM
/// (`WritebackReadback`), a fake in tests. The frame read is the one the engine's next present carries, so it can
/// be compared with the composed frame of the same present (`LayerEngine.captureNextPresent`). Lives on the main
/// thread with its output; waiting for the frame to be written and copying it out happen off the loop.
public protocol ScanoutReadback: AnyObject {
    /// Arms the next present to be read back. `completion` runs once on the main thread: with the frame
    /// (XRGB8888 rows of the mode's size, stride = width * 4), or with the reason there is none (the present was
    /// refused, the frame was not written within `timeout`, the output went away).
    /// - Throws: `OutputError` when no present can be read back now (the output fell back to legacy commits, or is gone).
    func readBackNextPresent(timeout: Duration, _ completion: @escaping (Result<[UInt8], OutputError>) -> Void) throws
}
