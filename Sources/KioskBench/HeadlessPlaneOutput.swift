import Glibc
import KioskCore
import KioskDisplay

/// Not product code: a headless output with overlay planes, for the `video` bench's plane row. It is a
/// `HeadlessBackend` (memory scanout buffers, a simulated vblank) that also offers the engine `OverlayPlanes`, and
/// does on the CPU what `DRMOverlayPlanes` does around an atomic page flip: each plane has two buffers of its
/// layer's size, page-aligned in memory as dumb buffers are mapped; at a present that changes what a plane shows,
/// the layer's pixels are copied (`LayerSurface.copyPixels`, the copy `DRMOverlayPlanes` makes) into the buffer
/// not on screen, which becomes the plane's front buffer once the present is accepted; a layer that only moves (the
/// same surface elsewhere) moves the plane and copies nothing, and one reaching past the screen's edge is shown
/// cut to it, as on DRM. So the engine takes the plane path for the layers it offers (they are left out of the
/// composition) and the main thread pays the same copies per frame as on DRM.
///
/// What it does not do: the TEST_ONLY commit that checks a layout on DRM (a quick ioctl; here every layout up to
/// the plane count is accepted), the atomic commit itself, and the kernel's scanout of the plane, whose cost is
/// the display controller's, not the CPU's. Its buffers are cached RAM, where a board's dumb buffers may be
/// write-combined, which makes the copy slower there.
///
/// Main thread, like the engine that drives it.
final class HeadlessPlaneOutput: DisplayBackend, OverlayPlanes {
    /// A plane's two buffers and which one is on screen.
    private final class Plane {
        var buffers: [UnsafeMutableRawPointer] = []
        var size = Size(width: 0, height: 0)
        var front: Int?

        func allocate(_ size: Size) {
            free()
            buffers = (0..<2).map { _ in
                let bytes = UnsafeMutableRawPointer.allocate(byteCount: size.width * 4 * size.height, alignment: 4096)
                bytes.initializeMemory(as: UInt8.self, repeating: 0, count: size.width * 4 * size.height)
                return bytes
            }
            self.size = size
            front = nil
        }

        func free() {
            for buffer in buffers { buffer.deallocate() }
            buffers = []
        }

        deinit { free() }
    }

    /// What a plane shows: a layer's surface at a scene rectangle.
    private struct Shown {
        let surface: LayerSurface
        let frame: Rect

        static func same(_ a: Shown?, _ b: Shown?) -> Bool {
            switch (a, b) {
            case (nil, nil): true
            case let (a?, b?): a.surface === b.surface && a.frame == b.frame
            default: false
            }
        }
    }

    private let headless: HeadlessBackend
    private let planes: [Plane]
    /// Per plane, what the next present should show, and what the last accepted present showed.
    private var wanted: [Shown?]
    private var committed: [Shown?]
    /// Layer frames copied into plane buffers, and their bytes.
    private(set) var framesCopied = 0
    private(set) var bytesCopied = 0

    init(mode: OutputMode, planeCount: Int = 1) throws {
        headless = try HeadlessBackend(mode: mode, bufferCount: 2, connector: "Headless-planes")
        planes = (0..<planeCount).map { _ in Plane() }
        wanted = Array(repeating: nil, count: planeCount)
        committed = wanted
    }

    // MARK: OverlayPlanes

    var cropsAtScreenEdge: Bool { true }

    func assign(_ candidates: [OverlayCandidate]) -> [String?] {
        var answers: [String?] = candidates.map { _ in "no free plane" }
        var layout: [Shown?] = planes.map { _ in nil }
        for (index, candidate) in candidates.prefix(planes.count).enumerated() {
            let plane = planes[index]
            if plane.size != candidate.surface.size {
                // As on DRM: a plane on screen keeps its buffers until it is off.
                guard plane.front == nil else {
                    answers[index] = "overlay plane \(index) is on screen at \(plane.size)"
                    continue
                }
                plane.allocate(candidate.surface.size)
            }
            layout[index] = Shown(surface: candidate.surface, frame: candidate.frame)
            answers[index] = nil
        }
        wanted = layout
        return answers
    }

    // MARK: DisplayBackend

    var info: OutputInfo { headless.info }
    var isFlipPending: Bool { headless.isFlipPending }
    var isPoweredOn: Bool { headless.isPoweredOn }
    var onDeviceLost: ((OutputError) -> Void)? {
        get { headless.onDeviceLost }
        set { headless.onDeviceLost = newValue }
    }

    func start(on loop: MainLoop, onFlip: @escaping (FlipEvent) -> Void) throws {
        try headless.start(on: loop, onFlip: onFlip)
    }

    func acquireBuffer() -> PixelBuffer? { headless.acquireBuffer() }
    func releaseBuffer(_ buffer: PixelBuffer) { headless.releaseBuffer(buffer) }

    /// The planes' part of the page flip, as `DRMOverlayPlanes.flipping` builds it: a plane whose layer shows
    /// something new gets the pixels copied into its back buffer; then the primary's buffer is presented.
    func present(_ buffer: PixelBuffer, damage: [Rect]?) throws {
        var build: [(shown: Shown?, buffer: Int?)] = []
        for (index, plane) in planes.enumerated() {
            let shown = wanted[index]
            if Shown.same(shown, committed[index]) {
                build.append((committed[index], plane.front))
                continue
            }
            guard let shown, !plane.buffers.isEmpty else {
                build.append((nil, nil))
                continue
            }
            if let front = plane.front, committed[index]?.surface === shown.surface {
                build.append((shown, front))
                continue
            }
            // One flip in flight: the buffer not in front is free to write.
            let back = 1 - (plane.front ?? 1)
            bytesCopied += shown.surface.copyPixels(into: plane.buffers[back], stride: plane.size.width * 4, size: plane.size)
            framesCopied += 1
            build.append((shown, back))
        }
        try headless.present(buffer, damage: damage)
        for (index, entry) in build.enumerated() {
            committed[index] = entry.shown
            planes[index].front = entry.buffer
        }
    }

    func reacquire() throws { try headless.reacquire() }
    func fallBack(after failure: PresentFailure) throws -> String { try headless.fallBack(after: failure) }
    func frontBufferSnapshot() -> [UInt8]? { headless.frontBufferSnapshot() }
    func setPower(_ on: Bool) throws { try headless.setPower(on) }

    func stop() {
        headless.stop()
        for (index, plane) in planes.enumerated() {
            plane.front = nil
            committed[index] = nil
        }
    }
}
