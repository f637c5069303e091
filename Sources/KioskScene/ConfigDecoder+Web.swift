import KioskCore
import Yams

extension ConfigDecoder {
    static let webKeys = ["memory_limit_mb", "allow_eval", "data_dir"]

    /// The `web:` section: the web process's memory limit, whether `web.eval` may run, where pages' data persists. An
    /// empty `web:` is no section.
    func web(_ node: Node) -> KioskConfig.Web {
        var web = KioskConfig.Web()
        if node.scalar != nil, scene.resolves(node, to: .null) { return web }
        guard let f = scene.fields(node, "web", allowed: Self.webKeys, expected: "a mapping (memory_limit_mb, allow_eval, data_dir)") else {
            return web
        }
        if let entry = f["memory_limit_mb"] {
            web.memoryLimitMB = scene.integer(entry.value, "web.memory_limit_mb", in: KioskConfig.Web.memoryLimitRange)
        }
        if let entry = f["allow_eval"] { web.allowEval = scene.bool(entry.value, "web.allow_eval") }
        if let entry = f["data_dir"], let path = scene.string(entry.value, "web.data_dir") {
            if path.hasPrefix("/") {
                web.dataDirectory = path
            } else {
                scene.error(entry.value, "web.data_dir", "'\(path)' must be an absolute path (such as /var/lib/kioskd/web)")
            }
        }
        return web
    }
}
