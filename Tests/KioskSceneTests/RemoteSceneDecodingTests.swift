import Foundation
import KioskScene
import XCTest

/// A scene fetched by URL, as `SceneLoader` decodes it: relative names resolve against the scene's URL (images,
/// the background, clips, fonts), absolute paths stay files on the board, a video's placeholder must be one, and
/// diagnostics name the URL.
final class RemoteSceneDecodingTests: XCTestCase {
    private let url = "https://cdn.example/screens/lobby.yaml"

    private func parse(_ yaml: String) throws(SceneValidationError) -> Scene {
        try SceneLoader.parse(data: Data(yaml.utf8), file: url, baseDirectory: url).scene
    }

    func testRelativeNamesResolveAgainstTheScenesURL() throws {
        let board = FileManager.default.temporaryDirectory.appendingPathComponent("remote-decoding-\(UUID().uuidString).webm")
        try Data("clip".utf8).write(to: board)
        defer { try? FileManager.default.removeItem(at: board) }
        let scene = try parse("""
            background: {image: ../art/bg.jpg}
            fonts: [fonts/Brand Bold.ttf]
            widgets:
              - {type: image, path: logo.png}
              - {type: video, playlist: [clips/a.webm, "\(board.path)", "https://other.example/b.webm"]}
            """)
        XCTAssertEqual(scene.backgroundImage?.path, "https://cdn.example/art/bg.jpg")
        XCTAssertEqual(scene.fonts, ["https://cdn.example/screens/fonts/Brand%20Bold.ttf"])
        guard case .image(let image) = scene.allWidgets[0].content, case .video(let video) = scene.allWidgets[1].content else {
            return XCTFail("\(scene.allWidgets)")
        }
        XCTAssertEqual(image.path, "https://cdn.example/screens/logo.png")
        XCTAssertEqual(video.sources, ["https://cdn.example/screens/clips/a.webm", board.path, "https://other.example/b.webm"])
        XCTAssertEqual(Set(scene.remoteAssets.keys), ["https://cdn.example/art/bg.jpg", "https://cdn.example/screens/fonts/Brand%20Bold.ttf",
                                                      "https://cdn.example/screens/logo.png", "https://cdn.example/screens/clips/a.webm",
                                                      "https://other.example/b.webm"])
    }

    func testAPlaceholderMustBeAFileOnTheBoardAndErrorsNameTheURL() {
        XCTAssertThrowsError(try parse("""
            widgets:
              - {type: video, source: a.webm, placeholder: wait.png}
            """)) { error in
            let lines = (error as? SceneValidationError)?.diagnostics.map(\.description) ?? []
            XCTAssertEqual(lines, ["\(url):2:48: widgets[0].placeholder: in a scene fetched by URL, 'wait.png' would name "
                                   + "https://cdn.example/screens/wait.png; this must be a file on the board: give its absolute path"])
        }
    }
}
