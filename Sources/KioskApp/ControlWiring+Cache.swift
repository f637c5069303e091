import KioskControl
import KioskCore

/// `cache.clear` and `cache.refresh`, answered from the kiosk's remote assets (`RemoteAssetWiring`, which sets
/// `remoteAssets`). Registered with the other commands, so `mqtt.allow` may list them. Main thread.
extension ControlWiring {
    func registerCacheCommands() {
        let commands = server.commands, jobs = self.jobs
        // The files are removed on the control's job queue: removing many is no work for the loop.
        commands.registerDeferred(.cacheClear) { [weak self] _, _, reply in
            guard let assets = self?.remoteAssets else {
                throw ControlError(code: "unavailable", message: "cache.clear: this kiosk has no asset cache")
            }
            let started = assets.clear(on: jobs) { bytes, entries, kept in
                reply.succeed(["bytes_freed": .int(Int64(bytes)), "entries_freed": .int(Int64(entries)), "kept": .int(Int64(kept))])
            }
            guard started else {
                throw ControlError(code: "unavailable", message: "cache.clear: the asset cache \(assets.directory) cannot be opened (see the log)")
            }
        }
        commands.register(.cacheRefresh, arguments: ["url"]) { [weak self] args, _ in
            guard let assets = self?.remoteAssets else {
                throw ControlError(code: "unavailable", message: "cache.refresh: this kiosk has no asset cache")
            }
            if args.has("url") {
                let url = try args.string("url")
                let limit = RemoteAssetWiring.maximumURLBytes
                guard url.utf8.count <= limit else {
                    throw args.invalid("url", "is \(url.utf8.count) bytes long; no asset URL is longer than \(limit)")
                }
                guard assets.refreshNow(url) else {
                    let named = assets.refresh.keys.sorted()
                    throw args.invalid("url", "'\(url)' is not an asset of the scenes shown; they name \(named.isEmpty ? "none" : named.joined(separator: ", "))")
                }
                return ["refreshing": .array([.string(url)])]
            }
            let urls = assets.refresh.keys.sorted()
            for url in urls { assets.refreshNow(url) }
            return ["refreshing": .array(urls.map(JSONValue.string))]
        }
    }
}
