import Foundation
import KioskTestSupport
import XCTest

/// Two headless kioskd in one sync group on a real mosquitto, playing the same looping clip (or playlist), the second
/// started once the first plays: captures taken at the same group times show the same frame of the clip on both.
final class SyncGroupVideoTests: XCTestCase {
    func testTwoHeadlessKiosksShowTheSameVideoFrameAtTheSameGroupTime() throws {
        let members = ["video-a", "video-b"].map {
            GroupVideoCaptures.Member(id: $0, output: ["--backend", "headless", "--mode", "320x240@60"])
        }
        let (captures, states) = try GroupVideoCaptures.run(members, count: 5)
        GroupVideoCaptures.check(captures, states: states, members: members, label: "sync group video, headless")
    }

    /// A playlist of two clips, timed by the group as one clip of their summed length: at the same group times both
    /// members show the same frame of the same item, the one the group's position calls for.
    func testAPlaylistOfTwoClipsShowsTheSameItemAndFrameAtTheSameGroupTime() throws {
        let members = ["playlist-a", "playlist-b"].map {
            GroupVideoCaptures.Member(id: $0, output: ["--backend", "headless", "--mode", "320x240@60"])
        }
        let (captures, states) = try GroupVideoCaptures.run(members, clip: .playlist, count: 6)
        GroupVideoCaptures.check(captures, states: states, members: members, clip: .playlist, label: "sync group playlist, headless")
    }
}
