import KioskCore

/// A small process-wide cache of images (PNG, JPEG, SVG) already decoded and fitted to a layer size, so a layer that
/// redraws at the same size (a page shown again, a resize back) costs a memcpy instead of a decode. Any render worker may use
/// it: the state sits behind a pthread mutex (`Lock`), which ThreadSanitizer models.
///
/// A key names the file by path and by identity (size and modification time, from stat), so a file replaced on disk
/// is decoded again. Entries are evicted least recently used first, beyond `maxEntries` or `maxBytes`.
final class DecodedImageCache: Sendable {
    struct Key: Hashable, Sendable {
        var path: String
        var fileSize: Int
        var modifiedSeconds: Int
        var modifiedNanoseconds: Int
        var layerSize: Size
        var fit: ImageContent.Fit
    }

    /// Premultiplied ARGB32 rows of `layerSize.width * 4` bytes.
    private struct Entry {
        var pixels: [UInt8]
        var lastUse: UInt64
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
        var hits = 0
        var misses = 0
    }

    static let shared = DecodedImageCache(maxEntries: 32, maxBytes: 48 << 20)

    let maxEntries: Int
    let maxBytes: Int
    private let state = Lock(State())

    init(maxEntries: Int, maxBytes: Int) {
        self.maxEntries = maxEntries
        self.maxBytes = maxBytes
    }

    /// The cached pixels for `key`, counted as a hit or a miss. The array is shared copy-on-write, so handing it out
    /// copies nothing.
    func pixels(for key: Key) -> [UInt8]? {
        state.withLock { state in
            state.clock += 1
            guard var entry = state.entries[key] else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.pixels
        }
    }

    func insert(_ pixels: [UInt8], for key: Key) {
        // One image bigger than a quarter of the budget would push out everything else for a single layer.
        guard pixels.count <= maxBytes / 4 else { return }
        state.withLock { state in
            state.clock += 1
            if let old = state.entries.updateValue(Entry(pixels: pixels, lastUse: state.clock), forKey: key) {
                state.bytes -= old.pixels.count
            }
            state.bytes += pixels.count
            while state.entries.count > maxEntries || state.bytes > maxBytes,
                  let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                state.entries[oldest.key] = nil
                state.bytes -= oldest.value.pixels.count
            }
        }
    }

    func removeAll() {
        state.withLock { state in state = State() }
    }

    var statistics: ImageContent.CacheStatistics {
        state.withLock { state in
            ImageContent.CacheStatistics(entries: state.entries.count, bytes: state.bytes, hits: state.hits,
                                         misses: state.misses)
        }
    }
}
