import KioskCore

/// A small process-wide cache of images (PNG, JPEG, SVG) already decoded and fitted to a layer size, as finished
/// layer surfaces: the engine shows a cached surface as it is (`ImageContent.sharedSurface`), so every layer showing
/// the same file at the same size and fit shares one surface, and a layer that redraws at the same size (a page
/// shown again, a resize back) costs nothing. A cached surface is never written: it may be on screen. Any render worker may use
/// it: the state sits behind a pthread mutex (`Lock`), which ThreadSanitizer models.
///
/// A key names the file by path and by identity (size and modification time, from stat), so a file replaced on disk
/// is decoded again. Entries are evicted least recently used first, beyond `maxEntries` or `maxBytes`, and when an
/// engine's surface budget is exceeded, those no layer holds (`SharedSurfaceCache`).
final class DecodedImageCache: SharedSurfaceCache {
    struct Key: Hashable, Sendable {
        var path: String
        var fileSize: Int
        var modifiedSeconds: Int
        var modifiedNanoseconds: Int
        var layerSize: Size
        var fit: ImageContent.Fit
    }

    /// Premultiplied ARGB32, never written once cached.
    private struct Entry {
        var surface: LayerSurface
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

    /// The cached surface for `key`, counted as a hit or a miss. The caller only reads it.
    func surface(for key: Key) -> LayerSurface? {
        state.withLock { state in
            state.clock += 1
            guard var entry = state.entries[key] else {
                state.misses += 1
                return nil
            }
            state.hits += 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            return entry.surface
        }
    }

    /// Whether a surface of `bytes` is kept: one bigger than a quarter of the budget would push out everything else
    /// for a single layer.
    func admits(bytes: Int) -> Bool { bytes <= maxBytes / 4 }

    /// Keeps `surface`, which nobody writes from now on.
    func insert(_ surface: LayerSurface, for key: Key) {
        guard admits(bytes: surface.byteCount) else { return }
        state.withLock { state in
            state.clock += 1
            if let old = state.entries.updateValue(Entry(surface: surface, lastUse: state.clock), forKey: key) {
                state.bytes -= old.surface.byteCount
            }
            state.bytes += surface.byteCount
            while state.entries.count > maxEntries || state.bytes > maxBytes,
                  let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                state.entries[oldest.key] = nil
                state.bytes -= oldest.value.surface.byteCount
            }
        }
    }

    /// Whether nothing but the cache holds `key`'s surface. Under the lock: no one else can take a new reference
    /// meanwhile (one may be dropped, which only makes the answer late by a call).
    private static func isOnlyHere(_ key: Key, in state: inout State) -> Bool {
        isKnownUniquelyReferenced(&state.entries[key]!.surface)
    }

    func removeAll() {
        state.withLock { state in state = State() }
    }

    var unsharedBytes: Int {
        state.withLock { state in
            var bytes = 0
            for key in Array(state.entries.keys) where Self.isOnlyHere(key, in: &state) {
                bytes += state.entries[key]!.surface.byteCount
            }
            return bytes
        }
    }

    func evictUnshared(bytes wanted: Int) -> [LayerSurface] {
        state.withLock { state in
            let oldestFirst = state.entries.sorted { $0.value.lastUse < $1.value.lastUse }.map(\.key)
            var dropped: [LayerSurface] = []
            var freed = 0
            for key in oldestFirst where freed < wanted && Self.isOnlyHere(key, in: &state) {
                let entry = state.entries.removeValue(forKey: key)!
                state.bytes -= entry.surface.byteCount
                freed += entry.surface.byteCount
                dropped.append(entry.surface)
            }
            return dropped
        }
    }

    var statistics: ImageContent.CacheStatistics {
        state.withLock { state in
            ImageContent.CacheStatistics(entries: state.entries.count, bytes: state.bytes, hits: state.hits,
                                         misses: state.misses)
        }
    }
}
