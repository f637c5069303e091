import Foundation
import KioskTestSupport
import XCTest

/// `kioskd bench --scenario video` with a small clip: every contestant's figures measured, the plane row on a
/// headless output with an overlay plane, where the engine puts the video layer on the plane.
final class VideoBenchTests: XCTestCase {
    func testVideoScenarioMeasuresThePlaneAndCompositedPathsAndANaiveCopy() throws {
        let clip = try TestClips.clip(.h264, width: 320, height: 240, frames: 90)
        let r = try KioskdProcess.run(["bench", "--scenario", "video", "--frames", "60", "--clip", clip, "--json"], timeout: 300)
        XCTAssertEqual(r.status, 0, r.stderr)
        let report = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.stdout)
        let video = try XCTUnwrap((report["scenarios"] as? [String: Any])?["video"] as? [String: Any], r.stdout)
        XCTAssertEqual(video["clip"] as? String, clip)
        for name in ["composited", "plane", "naive_copy"] {
            let f = try XCTUnwrap(video[name] as? [String: Any], name)
            XCTAssertGreaterThan(f["main_cpu_ms_per_shown_frame"] as? Double ?? 0, 0, name)
            XCTAssertGreaterThan(f["total_cpu_ms_per_shown_frame"] as? Double ?? 0, 0, name)
            XCTAssertGreaterThan(f["frames_decoded"] as? Int ?? 0, 0, name)
            let shown = try XCTUnwrap(f["frames_shown"] as? Int, name), dropped = try XCTUnwrap(f["frames_dropped"] as? Int, name)
            XCTAssertGreaterThan(shown, 0, name)
            XCTAssertGreaterThanOrEqual(shown + dropped, 60, name)
            XCTAssertNotNil(f["main_ms_p99"] as? Double, name)
        }
        for name in ["composited", "plane"] {
            let f = try XCTUnwrap(video[name] as? [String: Any])
            XCTAssertGreaterThan(f["other_widget_updates"] as? Int ?? 0, 5, "\(name): the other widget kept updating during two seconds of video")
        }
        let composited = try XCTUnwrap(video["composited"] as? [String: Any])
        XCTAssertEqual(composited["layer_path"] as? String, "composited")
        XCTAssertEqual(composited["layer_path_reason"] as? String, "no overlay planes")
        XCTAssertTrue(composited["plane_frames_copied"] is NSNull, "no plane, no plane copies")
        let plane = try XCTUnwrap(video["plane"] as? [String: Any])
        XCTAssertEqual(plane["layer_path"] as? String, "plane", "the engine took the plane path for the video layer: \(plane)")
        XCTAssertTrue(plane["layer_path_reason"] is NSNull)
        // Each frame a present carried was copied into the plane's buffers (and the first, the layer's backdrop).
        let copied = try XCTUnwrap(plane["plane_frames_copied"] as? Int)
        let shown = try XCTUnwrap(plane["frames_shown"] as? Int)
        XCTAssertGreaterThanOrEqual(copied, shown, "every shown frame went through the plane's buffers")
        XCTAssertLessThanOrEqual(copied, shown + 2)
        let text = try KioskdProcess.run(["bench", "--scenario", "video", "--frames", "30", "--clip", clip], timeout: 300)
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("plane run plane;"), text.stdout)
    }
}
