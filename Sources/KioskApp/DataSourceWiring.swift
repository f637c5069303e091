import Foundation
import KioskControl
import KioskCore
import KioskFetch
import KioskRuntime
import KioskScene
import Logging

/// Runs the first output's scene's `http:` and `rss:` data sources (`HTTPSources`) into every output's data, as
/// the socket's `data.set` and MQTT's data sources set it, and follows scene loads. The fetcher and its worker
/// thread are made when a scene first has such a source, so a kiosk without one never starts them. A failure is
/// logged and sent as an `error` event (code `data_source`); `stats` gives each source under `data_sources`.
/// Main thread.
final class DataSourceWiring {
    private let loop: MainLoop
    private let outputs: KioskOutputs
    private weak var control: ControlWiring?
    private let logger: Logger
    private var fetcher: Fetcher?
    private var sources: HTTPSources?
    private var listener: ListenerToken?

    init(loop: MainLoop, outputs: KioskOutputs, control: ControlWiring?, logger: Logger) {
        self.loop = loop
        self.outputs = outputs
        self.control = control
        self.logger = logger
        listener = outputs.first.stage.addEventListener { [weak self, unowned stage = outputs.first.stage] event in
            if case .sceneLoaded = event { self?.follow(stage.scene.httpDataSources) }
        }
        follow(outputs.first.stage.scene.httpDataSources)
        control?.dataSourceStats = { [weak self] in self?.stats ?? .array([]) }
    }

    func stop() {
        sources?.stopAll()
    }

    private func follow(_ scene: [HTTPDataSource]) {
        if sources == nil {
            guard !scene.isEmpty else { return }
            do {
                let fetcher = try Fetcher(loop: loop)
                self.fetcher = fetcher
                sources = HTTPSources(fetcher: fetcher, loop: loop, setData: { [stages = outputs.stages] values in try stages.setData(values) },
                                      onError: { [weak self] source, words in self?.failed(source, words) })
            } catch {
                logger.error("data sources: cannot start the fetcher: \(error)")
                return
            }
        }
        sources?.setSources(scene)
    }

    private func failed(_ source: HTTPDataSource, _ words: String) {
        logger.warning("data source '\(source.key)' (\(source.location.file):\(source.location.line)): \(words)")
        control?.server.broadcast(event: "error", data: ["code": "data_source", "message": .string("data source '\(source.key)': \(words)")])
    }

    /// `stats`' `data_sources`: one object per source.
    var stats: JSONValue {
        .array((sources?.statuses ?? []).map { status in
            var failures: [String: JSONValue] = [:]
            for (reason, count) in status.failures { failures[reason] = .int(Int64(count)) }
            return .object([
                "key": .string(status.key),
                "url": .string(status.url),
                "fetches": .int(Int64(status.fetches)),
                "not_modified": .int(Int64(status.notModified)),
                "last_success": status.lastSuccess.map { .double($0) } ?? .null,
                "stale_since": status.staleSince.map { .double($0) } ?? .null,
                "last_error": status.lastError.map { .string($0) } ?? .null,
                "failures": .object(failures),
            ])
        })
    }
}
