import KioskCore
import Yams

extension ConfigDecoder {
    static let healthKeys = ["restart_on", "frozen_after", "black_after", "verify_every"]

    /// The `health:` section: which screen problems make the health signal unhealthy (`restart_on`, a list of
    /// `black` and `frozen`, each bad or repeated entry an error at its own line), how many expected changes a
    /// frozen screen misses (`frozen_after`) and how long a black one lasts (`black_after`, seconds) before they
    /// count, and how often the scanned-out frame is verified (`verify_every`, seconds, or `0`/`off` for never). An
    /// empty `health:` is no section.
    func health(_ node: Node) -> KioskConfig.Health {
        var health = KioskConfig.Health()
        if node.scalar != nil, scene.resolves(node, to: .null) { return health }
        guard let f = scene.fields(node, "health", allowed: Self.healthKeys,
                                   expected: "a mapping (\(Self.healthKeys.joined(separator: ", ")))") else {
            return health
        }
        if let entry = f["restart_on"] { health.restartOn = restartOn(entry.value, "health.restart_on") }
        let frozen = ScreenHealthSettings.frozenAfterRange
        health.frozenAfter = f["frozen_after"].flatMap { scene.integer($0.value, "health.frozen_after", in: frozen) }
        health.blackAfter = f["black_after"].flatMap { scene.number($0.value, "health.black_after", in: ScreenHealthSettings.blackAfterRange) }
        health.verifyEvery = f["verify_every"].flatMap { verifyEvery($0.value, "health.verify_every") }
        return health
    }

    /// `verify_every`: seconds in `ScreenHealthSettings.verifyEveryRange`, or `0` or `off` (quoted or not) for never,
    /// which is 0 here.
    private func verifyEvery(_ node: Node, _ path: String) -> Double? {
        if let scalar = node.scalar, scalar.string.lowercased() == "off" { return 0 }
        let range = ScreenHealthSettings.verifyEveryRange
        guard scene.isNumber(node), let seconds = YAMLTree.double(node), seconds.isFinite else {
            scene.error(node, path, "expected seconds (\(scene.format(range.lowerBound))...\(scene.format(range.upperBound))), or 0 or off to verify only on request")
            return nil
        }
        if seconds == 0 { return 0 }
        return scene.number(node, path, in: range)
    }

    /// The list, or nil (the default, nothing restarts) when any entry is wrong: a partial list would restart on
    /// less than was meant.
    private func restartOn(_ node: Node, _ path: String) -> Set<ScreenHealthSettings.Problem>? {
        let names = ScreenHealthSettings.Problem.allCases.map(\.rawValue).joined(separator: ", ")
        guard let items = node.sequence else {
            scene.error(node, path, "expected a list of screen problems (\(names)), such as [frozen]")
            return nil
        }
        var problems: Set<ScreenHealthSettings.Problem> = []
        var valid = true
        for (index, item) in items.enumerated() {
            let at = "\(path)[\(index)]"
            guard let name = scene.string(item, at) else { valid = false; continue }
            guard let problem = ScreenHealthSettings.Problem(rawValue: name) else {
                scene.error(item, at, "'\(name)' is not a screen problem: expected one of \(names)")
                valid = false
                continue
            }
            if problems.contains(problem) {
                scene.error(item, at, "'\(name)' is listed twice")
                valid = false
            }
            problems.insert(problem)
        }
        return valid ? problems : nil
    }
}
