import CEvdev

/// Key names as the kernel's headers spell them, without `KEY_` and in lower case (`tab`, `enter`, `leftshift`):
/// what `key` input events carry. Looked up in libevdev's table. Stateless; any thread.
enum KeyNames {
    static func name(of code: UInt32) -> String {
        guard let cName = libevdev_event_code_get_name(UInt32(EV_KEY), code) else { return "code_\(code)" }
        var name = String(cString: cName)
        for prefix in ["KEY_", "BTN_"] where name.hasPrefix(prefix) {
            name = prefix == "BTN_" ? "btn_" + name.dropFirst(4) : String(name.dropFirst(4))
        }
        return name.lowercased()
    }
}
