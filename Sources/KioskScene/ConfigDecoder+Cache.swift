import Foundation
import KioskCore
import Yams

extension ConfigDecoder {
    static let cacheKeys = ["max_mb", "max_asset_mb", "proxy", "dir"]

    /// The `cache:` section: the remote-asset cache's limits (`max_mb`, `max_asset_mb`, whole MiB, the second no
    /// larger than the first), the proxy asset downloads go through (`proxy`, an http, https, socks5 or socks5h
    /// URL with a host) and the folder (`dir`). An empty `cache:` is no section.
    func cache(_ node: Node) -> KioskConfig.Cache {
        var cache = KioskConfig.Cache()
        if node.scalar != nil, scene.resolves(node, to: .null) { return cache }
        guard let f = scene.fields(node, "cache", allowed: Self.cacheKeys,
                                   expected: "a mapping (\(Self.cacheKeys.joined(separator: ", ")))") else {
            return cache
        }
        let range = KioskConfig.Cache.megabyteRange
        cache.maxMB = f["max_mb"].flatMap { scene.integer($0.value, "cache.max_mb", in: range) }
        cache.maxAssetMB = f["max_asset_mb"].flatMap { scene.integer($0.value, "cache.max_asset_mb", in: range) }
        if let asset = cache.maxAssetMB, let node = f["max_asset_mb"]?.value {
            let total = cache.maxMB ?? KioskConfig.Cache.defaultMaxMB
            if asset > total {
                scene.error(node, "cache.max_asset_mb", "\(asset) MiB is more than the whole cache may hold (cache.max_mb, \(total) MiB)")
                cache.maxAssetMB = nil
            }
        }
        if let entry = f["proxy"], let text = nonEmpty(entry.value, "cache.proxy") {
            if let problem = KioskConfig.Cache.proxyProblem(text) {
                scene.error(entry.value, "cache.proxy", problem)
            } else {
                cache.proxy = text
            }
        }
        cache.directory = f["dir"].flatMap { nonEmpty($0.value, "cache.dir") }.map(path)
        return cache
    }
}
