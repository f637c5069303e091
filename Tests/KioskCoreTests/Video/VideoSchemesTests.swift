import KioskCore
import XCTest

/// How a video source's scheme is read (a path is `file`, schemes compare in any case, RFC 3986's syntax), which
/// sources the default list allows, what a refusal says, which entries a configuration may list, and which sources
/// count as network items.
final class VideoSchemesTests: XCTestCase {
    func testASourceIsAPathOrAURIWithItsScheme() {
        XCTAssertEqual(VideoSchemes.parse("/srv/clips/a.mp4"), .path)
        XCTAssertEqual(VideoSchemes.parse("clips/a.mp4"), .path)
        XCTAssertEqual(VideoSchemes.parse("./a:b.mp4"), .path)
        XCTAssertEqual(VideoSchemes.parse("/media/cam:1/a.mp4"), .path)
        XCTAssertEqual(VideoSchemes.parse("file:///srv/a.mp4"), .uri(scheme: "file"))
        XCTAssertEqual(VideoSchemes.parse("FILE:///srv/a.mp4"), .uri(scheme: "file"))
        XCTAssertEqual(VideoSchemes.parse("HTTPS://example.com/a.webm"), .uri(scheme: "https"))
        XCTAssertEqual(VideoSchemes.parse("rtsp://camera.lan/stream"), .uri(scheme: "rtsp"))
        XCTAssertEqual(VideoSchemes.parse("data:video/mp4;base64,AAAA"), .uri(scheme: "data"))
        XCTAssertEqual(VideoSchemes.parse("v4l2:///dev/video0"), .uri(scheme: "v4l2"))
        XCTAssertEqual(VideoSchemes.parse("svn+ssh://host/x"), .uri(scheme: "svn+ssh"))
        XCTAssertEqual(VideoSchemes.parse("://nowhere"), .malformed("'://nowhere' is not a URI (no scheme before '://')"))
        XCTAssertEqual(VideoSchemes.parse("1http://x"),
                       .malformed("'1http://x' is not a URI ('1http' is no scheme: a letter, then letters, digits, '+', '-' or '.')"))
    }

    func testTheDefaultListAllowsFilesAndTheWebAndNamesWhatItRefuses() {
        let schemes = VideoSchemes()
        XCTAssertEqual(schemes.allowed, ["file", "https", "http"])
        for allowed in ["/srv/a.mp4", "a.mp4", "file:///srv/a.mp4", "File:///srv/a.mp4", "https://cdn/a.webm", "HTTP://10.0.0.2:8080/a.webm"] {
            XCTAssertNil(schemes.refusal(of: allowed), allowed)
        }
        XCTAssertEqual(schemes.refusal(of: "rtsp://camera/stream"), "scheme 'rtsp' is not allowed (video.allowed_schemes: file, https, http)")
        XCTAssertEqual(schemes.refusal(of: "RTSP://camera/stream"), "scheme 'rtsp' is not allowed (video.allowed_schemes: file, https, http)")
        XCTAssertEqual(schemes.refusal(of: "ftp://host/a.mp4"), "scheme 'ftp' is not allowed (video.allowed_schemes: file, https, http)")
        XCTAssertEqual(schemes.refusal(of: "data:video/mp4;base64,AAAA"), "scheme 'data' is not allowed (video.allowed_schemes: file, https, http)")
        XCTAssertEqual(schemes.refusal(of: "v4l2:///dev/video0"), "scheme 'v4l2' is not allowed (video.allowed_schemes: file, https, http)")
        XCTAssertEqual(schemes.refusal(of: "://x"), "'://x' is not a URI (no scheme before '://')")
    }

    func testAConfiguredListDecides() {
        let onlyFiles = VideoSchemes(["file"])
        XCTAssertEqual(onlyFiles.refusal(of: "https://cdn/a.webm"), "scheme 'https' is not allowed (video.allowed_schemes: file)")
        XCTAssertNil(onlyFiles.refusal(of: "/srv/a.mp4"))
        let noFiles = VideoSchemes(["https"])
        XCTAssertEqual(noFiles.refusal(of: "/srv/a.mp4"), "scheme 'file' is not allowed (video.allowed_schemes: https)", "a path is a file")
        XCTAssertNil(VideoSchemes(["rtsp"]).refusal(of: "RTSP://camera/stream"))
        XCTAssertEqual(VideoSchemes([]).refusal(of: "/srv/a.mp4"), "scheme 'file' is not allowed (video.allowed_schemes: empty: no video is allowed)")
    }

    func testConfigurationEntriesAreLowercaseSchemeNames() {
        for good in ["file", "https", "rtsp", "svn+ssh", "x-custom.v2"] {
            XCTAssertNil(VideoSchemes.problem(withEntry: good), good)
        }
        XCTAssertEqual(VideoSchemes.problem(withEntry: "HTTPS"), "'HTTPS': scheme names are written in lowercase: 'https'")
        XCTAssertEqual(VideoSchemes.problem(withEntry: "https://"), "'https://' is a scheme with its separator: write 'https'")
        XCTAssertEqual(VideoSchemes.problem(withEntry: "rtsp:"), "'rtsp:' is a scheme with its separator: write 'rtsp'")
        XCTAssertEqual(VideoSchemes.problem(withEntry: "2http"), "'2http' is not a URI scheme (RFC 3986: a letter, then letters, digits, '+', '-' or '.')")
        XCTAssertEqual(VideoSchemes.problem(withEntry: "my scheme"), "'my scheme' is not a URI scheme (RFC 3986: a letter, then letters, digits, '+', '-' or '.')")
        XCTAssertEqual(VideoSchemes.problem(withEntry: ""), "expected a scheme name such as 'https', got an empty string")
    }

    func testNetworkSourcesAndFilePaths() {
        XCTAssertTrue(VideoSchemes.isNetworkSource("http://127.0.0.1:8000/clip.webm"))
        XCTAssertTrue(VideoSchemes.isNetworkSource("HTTPS://cdn/a.webm"))
        XCTAssertFalse(VideoSchemes.isNetworkSource("/srv/a.mp4"))
        XCTAssertFalse(VideoSchemes.isNetworkSource("file:///srv/a.mp4"))
        XCTAssertEqual(VideoSchemes.filePath(of: "/srv/a.mp4"), "/srv/a.mp4")
        XCTAssertEqual(VideoSchemes.filePath(of: "FILE:///srv/a%20b.mp4"), "/srv/a b.mp4")
        XCTAssertNil(VideoSchemes.filePath(of: "https://cdn/a.webm"))
    }
}
