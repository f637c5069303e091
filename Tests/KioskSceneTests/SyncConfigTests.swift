import KioskScene
import XCTest

/// The `sync:` section: a group met on the fleet's broker, and the part a member may play.
extension ConfigFileTests {
    func testTheSyncSectionNamesTheGroupAndTheRole() throws {
        let (config, warnings) = try parse("mqtt: {url: mqtt://broker}\nsync: {group: shop-window.1, role: follower}\n")
        XCTAssertEqual(warnings.map(\.description), [])
        XCTAssertEqual(config.sync, SyncSettings(group: "shop-window.1", role: .follower))
        XCTAssertEqual(try parse("mqtt: {url: mqtt://broker}\nsync: {group: g}\n").config.sync?.role, .auto)
        XCTAssertNil(try parse("mqtt: {url: mqtt://broker}\n").config.sync)
    }

    func testBadSyncValuesAreNamedAtTheirLocation() {
        XCTAssertEqual(errors("sync: {group: g}\n"), ["\(file):1:1: sync: a sync group meets on the fleet's MQTT broker: add an mqtt: section"])
        XCTAssertEqual(errors("mqtt: {url: mqtt://b}\nsync: {role: leader}\n"),
                       ["\(file):2:7: sync: missing 'group': the name the kiosks that move in step share"])
        XCTAssertEqual(errors("mqtt: {url: mqtt://b}\nsync: {group: a/b}\n"),
                       ["\(file):2:15: sync.group: 'a/b' must be at most 64 letters, digits, '-', '_' or '.' (it is an MQTT topic level)"])
        XCTAssertEqual(errors("mqtt: {url: mqtt://b}\nsync: {group: g, role: boss}\n"),
                       ["\(file):2:24: sync.role: 'boss' is not one of auto, leader, follower"])
        XCTAssertEqual(errors("mqtt: {url: mqtt://b}\nsync: 5\n"), ["\(file):2:7: sync: expected a mapping (group, role)"])
    }
}
