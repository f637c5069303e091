import Foundation
import KioskScene
import KioskTestSupport
import XCTest

/// A scene file, an image or a clip whose path is a FIFO, a folder, a socket, a device node or a link to a FIFO is
/// refused at once, naming the path and what it is: nothing is read from it and nothing waits on it.
final class SpecialFileSceneTests: XCTestCase {
    private var special: SpecialFiles!

    override func setUpWithError() throws {
        special = try SpecialFiles("scene")
    }

    override func tearDown() {
        special = nil
    }

    func testASceneFileThatIsNotARegularFileIsOneErrorLine() {
        for (path, kind) in special.all {
            let lines = returnsPromptly { SceneFixtures.lines(path) }
            XCTAssertEqual(lines, ["\(path):1:1: the scene path is \(kind), not a regular file"], "within 5 s")
        }
    }

    func testAnImageThatIsNotARegularFileIsNamedWithItsKind() {
        for (path, kind) in special.all {
            let problem = returnsPromptly { ImageFileCheck.problem(at: path, named: path) }
            XCTAssertEqual(problem, .some("image '\(path)' is \(kind), not a regular file"), "within 5 s")
        }
    }

    func testASceneImageOrClipThatIsAFIFOIsAValidationError() throws {
        let dir = try SceneFixtures.directory("special-files")
        XCTAssertEqual(mkfifo(dir.appendingPathComponent("pipe.png").path, 0o644), 0)
        XCTAssertEqual(mkfifo(dir.appendingPathComponent("pipe.mp4").path, 0o644), 0)
        let text = SceneFixtures.onePage(["- {id: i, type: image, path: pipe.png}", "- {id: v, type: video, source: pipe.mp4}"])
        let result = returnsPromptly { try? SceneFixtures.check(text, in: dir) }
        let (path, lines) = try XCTUnwrap(result ?? nil, "validated within 5 s")
        XCTAssertEqual(lines, [
            "\(path):4:36: pages[0].widgets[0].path: image 'pipe.png' is a FIFO, not a regular file (\(dir.path)/pipe.png)",
            "\(path):5:38: pages[0].widgets[1].source: video 'pipe.mp4' is a FIFO, not a regular file (\(dir.path)/pipe.mp4)",
        ])
    }
}
