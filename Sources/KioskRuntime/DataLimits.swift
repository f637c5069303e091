import KioskScene

/// How much data a scene's key store takes, from any source (`data.set` on the socket or over MQTT, data-source
/// messages, press actions): keys are set all or none, and a request over a bound is refused whole, naming the
/// bound, while the keys already there keep working. An immutable value; any thread.
public struct DataLimits: Sendable, Equatable {
    /// Distinct keys in the store.
    public var maximumKeys = 1_024
    /// Bytes of one key (UTF-8).
    public var maximumKeyBytes = 256
    /// Bytes of one value (UTF-8): a paragraph of a feed, not a file.
    public var maximumValueBytes = 64 * 1024

    public init() {}

    /// Why `values` may not be set on a store holding `existing`, or nil when they may.
    public func problem(_ values: [String: String], existing: [String: String]) -> StageError? {
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            if key.utf8.count > maximumKeyBytes {
                return StageError(.invalidArgument, "key '\(key.prefix(32))…' is \(key.utf8.count) bytes, more than \(maximumKeyBytes), the limit")
            }
            if value.utf8.count > maximumValueBytes {
                return StageError(.invalidArgument, "the value of '\(key)' is \(value.utf8.count) bytes, more than \(maximumValueBytes), the limit")
            }
        }
        let added = values.keys.reduce(0) { $0 + (existing[$1] == nil ? 1 : 0) }
        if existing.count + added > maximumKeys {
            return StageError(.invalidArgument, "\(added) new key(s) would make \(existing.count + added), more than \(maximumKeys), the limit; the \(existing.count) keys set can still be changed")
        }
        return nil
    }
}
