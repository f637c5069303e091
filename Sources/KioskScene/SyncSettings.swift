/// The `sync:` section: the sync group this kiosk belongs to, met on the fleet's MQTT broker (`mqtt:` is needed),
/// and the part it may play. A plain value.
public struct SyncSettings: Sendable, Equatable {
    public static let keys = ["group", "role"]
    public enum Role: String, CaseIterable, Sendable { case auto, leader, follower }

    /// The group's name: one MQTT topic level.
    public var group: String
    public var role: Role = .auto

    public init(group: String, role: Role = .auto) {
        self.group = group
        self.role = role
    }
}
