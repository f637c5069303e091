/// "Did you mean" hints: the closest known word within a small edit distance, for errors about a misspelt key or
/// name (scene files, control-socket arguments). Stateless; any thread.
public enum Suggestion {
    /// The candidate nearest to `word` (compared in lower case), or nil when none is within one edit for words of
    /// up to four characters, two edits for longer ones.
    public static func nearest(to word: String, in candidates: [String]) -> String? {
        let limit = word.count <= 4 ? 1 : 2
        let scored = candidates.map { ($0, distance(word.lowercased(), $0)) }.filter { $0.1 <= limit }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// Levenshtein distance, two rows at a time.
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
