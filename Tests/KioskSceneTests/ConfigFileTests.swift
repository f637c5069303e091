import Foundation
import KioskCore
import KioskScene
import XCTest

/// kioskd.yaml is read with the scene decoder's machinery: located errors, did-you-mean, every problem at once.
final class ConfigFileTests: XCTestCase {
    let file = "/etc/kioskd/kioskd.yaml"

    func parse(_ text: String) throws(SceneValidationError) -> (config: KioskConfig, warnings: [SceneDiagnostic]) {
        try ConfigLoader.parse(data: Data(text.utf8), file: file, baseDirectory: "/etc/kioskd")
    }

    func errors(_ text: String) -> [String] {
        do {
            _ = try parse(text)
            XCTFail("no error for:\n\(text)")
            return []
        } catch {
            return error.errors.map(\.description)
        }
    }

    func testEveryRunOptionIsAKey() throws {
        let (config, warnings) = try parse("""
            scene: scenes/lobby.yaml
            board: /usr/share/kioskd/board-configs/pi.yaml
            backend: headless
            fbdev: /dev/fb1
            device: auto
            connector: HDMI-A-1
            mode: 1280x720@50
            commit: legacy
            buffers: 3
            rotation: 90
            frames: 10
            stats_out: stats.json
            screenshot: /tmp/last.png
            capture: /tmp/capture.png
            watch: false
            keep_going: true
            render_strategy: priority
            fps_overlay: true
            repaint_window: 6
            log_level: debug
            control:
              socket: /run/kioskd/other.sock
              socket_group: kiosk
              allow_uid: [1000, 1001]
              allow_gid: 44
              screenshot_dir: shots
            """)
        XCTAssertEqual(warnings, [])
        XCTAssertEqual(config.scene, "/etc/kioskd/scenes/lobby.yaml", "relative to the config file's folder")
        XCTAssertEqual(config.board, "/usr/share/kioskd/board-configs/pi.yaml")
        XCTAssertEqual(config.backend, .headless)
        XCTAssertEqual(config.fbdev, "/dev/fb1")
        XCTAssertEqual(config.device, "auto")
        XCTAssertEqual(config.connector, "HDMI-A-1")
        XCTAssertEqual(config.mode, ModeRequest(width: 1280, height: 720, refreshHz: 50))
        XCTAssertEqual(config.commit, .legacy)
        XCTAssertEqual(config.buffers, 3)
        XCTAssertEqual(config.rotation, .degrees90)
        XCTAssertEqual(config.frames, 10)
        XCTAssertEqual(config.statsOut, "/etc/kioskd/stats.json")
        XCTAssertEqual(config.screenshot, "/tmp/last.png")
        XCTAssertEqual(config.capture, "/tmp/capture.png")
        XCTAssertEqual(config.watch, false)
        XCTAssertEqual(config.keepGoing, true)
        XCTAssertEqual(config.renderStrategy, .priority)
        XCTAssertEqual(config.fpsOverlay, true)
        XCTAssertEqual(config.repaintWindow, .lead(.milliseconds(6)))
        XCTAssertEqual(config.logLevel, .debug)
        XCTAssertEqual(config.control.socket, "/run/kioskd/other.sock")
        XCTAssertEqual(config.control.socketGroup, "kiosk")
        XCTAssertEqual(config.control.allowUIDs, [1000, 1001])
        XCTAssertEqual(config.control.allowGIDs, [44])
        XCTAssertEqual(config.control.screenshotDirectory, "/etc/kioskd/shots")
    }

    /// Files are relative to the config file's folder; a scene by URL is kept as it is, at the top and in `outputs:`.
    func testASceneByURLIsNotAPathUnderTheConfigsFolder() throws {
        let config = try parse("""
            scene: https://signage.example/lobby.yaml
            board: board.yaml
            outputs:
              - {connector: HDMI-A-1, scene: "http://signage.example:8080/side.yaml"}
              - {connector: HDMI-A-2, scene: side.yaml}
            """).config
        XCTAssertEqual(config.scene, "https://signage.example/lobby.yaml")
        XCTAssertEqual(config.board, "/etc/kioskd/board.yaml")
        XCTAssertEqual(config.outputs.map(\.scene), ["http://signage.example:8080/side.yaml", "/etc/kioskd/side.yaml"])
    }

    func testAnEmptyFileChangesNothing() throws {
        XCTAssertEqual(try parse("# nothing set\n").config, KioskConfig())
    }

    func testErrorsAreLocatedWithTheNearestKey() {
        let lines = errors("""
            scene: a.yaml
            mod: 1920x1080
            buffers: 4
            rotation: 45
            backend: drn
            control:
              sockt: /tmp/x.sock
            watch: maybe
            """)
        XCTAssertEqual(lines, [
            "\(file):2:1: mod: unknown key 'mod'; did you mean 'mode'?",
            "\(file):3:10: buffers: 4 is out of range 2...3",
            "\(file):4:11: rotation: expected one of 0, 90, 180, 270 (degrees clockwise)",
            "\(file):5:10: backend: 'drn' is not one of auto, drm, fbdev, headless; did you mean 'drm'?",
            "\(file):7:3: control.sockt: unknown key 'sockt'; did you mean 'socket'?",
            "\(file):8:8: watch: expected true or false",
        ])
    }

    func testTheRepaintWindowIsAutoOffOrMilliseconds() throws {
        XCTAssertEqual(try parse("repaint_window: auto\n").config.repaintWindow, .auto)
        XCTAssertEqual(try parse("repaint_window: off\n").config.repaintWindow, .off)
        XCTAssertEqual(try parse("repaint_window: 0\n").config.repaintWindow, .off)
        XCTAssertEqual(try parse("repaint_window: 7.5\n").config.repaintWindow, .lead(.microseconds(7500)))
        XCTAssertNil(try parse("# nothing\n").config.repaintWindow, "unset: kioskd's default (off)")
        for bad in ["soon", "-3", "1000", "[4]"] {
            XCTAssertEqual(errors("repaint_window: \(bad)\n"), [
                "\(file):1:17: repaint_window: expected auto, off, or the lead before the vblank in milliseconds (0 to 999)",
            ], bad)
        }
    }

    func testModeAndYAMLErrorsAreLocated() {
        XCTAssertEqual(errors("mode: 1920by1080\n").count, 1)
        XCTAssertTrue(errors("mode: 1920by1080\n")[0].hasPrefix("\(file):1:7: mode: "), errors("mode: 1920by1080\n")[0])
        let syntax = errors("scene: [a\n")
        XCTAssertEqual(syntax.count, 1)
        XCTAssertTrue(syntax[0].hasPrefix("\(file):") && syntax[0].contains("YAML"), syntax[0])
        XCTAssertEqual(errors("- a\n- b\n"), ["\(file):1:1: expected a mapping of settings (scene, board, mode, control, ...)"])
    }

    /// The `outputs:` section: per connector a mode, rotation and scene, checked with located errors and no
    /// warning (connector names are known only at run time).
    func testTheOutputsSectionIsCheckedEntryByEntry() throws {
        let (config, warnings) = try parse("""
            outputs:
              - connector: HDMI-A-1
                mode: 1920x1080@60
                rotation: 90
                scene: default
              - connector: DSI-1
                scene: panel.yaml

            """)
        XCTAssertEqual(config.outputs, [
            KioskConfig.Output(connector: "HDMI-A-1", mode: ModeRequest(width: 1920, height: 1080, refreshHz: 60),
                               rotation: .degrees90, scene: "default"),
            KioskConfig.Output(connector: "DSI-1", scene: "/etc/kioskd/panel.yaml"),
        ])
        XCTAssertEqual(warnings.map(\.description), [])
        XCTAssertEqual(try parse("outputs:\n").config.outputs, [])
        XCTAssertEqual(errors("outputs: 3\n"), ["\(file):1:10: outputs: expected a list of outputs ({connector, mode, rotation, scene} each)"])
        XCTAssertEqual(errors("""
            outputs:
              - mode: 800x480
              - connector: HDMI-A-1
                rotaton: 90
              - connector: HDMI-A-1
              - connector: DSI-1
                mode: big
                rotation: 45
                scene: ""

            """), [
            "\(file):2:5: outputs[0]: missing 'connector' (the connector's name, as `kioskd devices` shows it)",
            "\(file):4:5: outputs[1].rotaton: unknown key 'rotaton'; did you mean 'rotation'?",
            "\(file):5:16: outputs[2].connector: 'HDMI-A-1' is named already by outputs[1]",
            "\(file):7:11: outputs[3].mode: \(modeError("big"))",
            "\(file):8:15: outputs[3].rotation: expected one of 0, 90, 180, 270 (degrees clockwise)",
            "\(file):9:12: outputs[3].scene: expected a non-empty string",
        ])
    }

    private func modeError(_ text: String) -> String {
        do { _ = try ModeRequest(validating: text); return "" } catch { return "\(error)" }
    }

    func testAMissingFileIsNamed() {
        XCTAssertThrowsError(try ConfigLoader.load(path: "/nonexistent/kioskd.yaml")) { error in
            XCTAssertEqual("\(error)", "/nonexistent/kioskd.yaml:1:1: config file not found")
        }
    }

    func testTheMemorySectionSetsLimitsAndRefusesBadValuesAtTheirLocation() throws {
        let (config, _) = try parse("memory:\n  max_image_pixels: 4000000\n  preload_pages: 2\n  surface_budget_mb: 48\n")
        XCTAssertEqual(config.memory.maxImagePixels, 4_000_000)
        XCTAssertEqual(config.memory.preloadPages, 2)
        XCTAssertEqual(config.memory.surfaceBudgetMB, 48)
        XCTAssertEqual(config.sceneLimits.maximumImagePixels, 4_000_000)
        // Left out: the defaults.
        XCTAssertEqual(try parse("memory:\n").config.sceneLimits.maximumImagePixels, ImagePixelLimit.defaultMaximum)
        XCTAssertEqual(errors("memory:\n  max_image_pixels: 0\n  preload_pages: -1\n  surface_budget: 8\n"), [
            "\(file):2:21: memory.max_image_pixels: 0 is out of range 1...1099511627776",
            "\(file):3:18: memory.preload_pages: -1 is out of range 0...100",
            "\(file):4:3: memory.surface_budget: unknown key 'surface_budget'; known keys: max_image_pixels, preload_pages, surface_budget_mb",
        ])
    }

    func testTheVideoSectionListsTheAllowedSchemes() throws {
        XCTAssertEqual(try parse("scene: a.yaml\n").config.sceneLimits.videoSchemes.allowed, ["file", "https", "http"], "the default")
        XCTAssertEqual(try parse("video:\n").config.video, KioskConfig.Video(), "an empty section is no section")
        let (config, _) = try parse("video:\n  allowed_schemes: [file, rtsp]\n")
        XCTAssertEqual(config.video.allowedSchemes, ["file", "rtsp"])
        XCTAssertEqual(config.sceneLimits.videoSchemes, VideoSchemes(["file", "rtsp"]))
        XCTAssertEqual(try parse("video:\n  allowed_schemes: []\n").config.sceneLimits.videoSchemes.allowed, [], "no video at all")
    }

    func testBadSchemeEntriesAreNamedAtTheirLocation() {
        XCTAssertEqual(errors("video:\n  allowed_schemes: [file, HTTPS, \"rtsp://\", 2x, file, \"\"]\n"), [
            "\(file):2:27: video.allowed_schemes[1]: 'HTTPS': scheme names are written in lowercase: 'https'",
            "\(file):2:34: video.allowed_schemes[2]: 'rtsp://' is a scheme with its separator: write 'rtsp'",
            "\(file):2:45: video.allowed_schemes[3]: '2x' is not a URI scheme (RFC 3986: a letter, then letters, digits, '+', '-' or '.')",
            "\(file):2:49: video.allowed_schemes[4]: 'file' is listed twice",
            "\(file):2:55: video.allowed_schemes[5]: expected a scheme name such as 'https', got an empty string",
        ])
        XCTAssertEqual(errors("video:\n  allowed_schemes: https\n"),
                       ["\(file):2:20: video.allowed_schemes: expected a list of URI schemes, such as [file, https, http]"])
        XCTAssertEqual(errors("video:\n  allowed_scheme: [file]\n"),
                       ["\(file):2:3: video.allowed_scheme: unknown key 'allowed_scheme'; did you mean 'allowed_schemes'?"])
        XCTAssertEqual(errors("video: [file]\n"), ["\(file):1:8: video: expected a mapping (allowed_schemes)"])
    }

    func testTheHealthSectionSaysWhatRestarts() throws {
        let defaults = try parse("scene: a.yaml\n").config.health
        XCTAssertEqual(defaults, KioskConfig.Health())
        XCTAssertEqual(defaults.settings, ScreenHealthSettings(), "nothing restarts, frozen after 5, black after 2 s")
        XCTAssertEqual(defaults.settings.restartOn, [])
        XCTAssertEqual(try parse("health:\n").config.health, KioskConfig.Health(), "an empty section is no section")
        let (config, _) = try parse("health:\n  restart_on: [frozen]\n  frozen_after: 10\n  black_after: 0.5\n")
        XCTAssertEqual(config.health.settings, ScreenHealthSettings(restartOn: [.frozen], frozenAfter: 10, blackAfter: .milliseconds(500)))
        XCTAssertEqual(try parse("health:\n  restart_on: [black, frozen]\n").config.health.settings.restartOn, [.black, .frozen])
        XCTAssertEqual(try parse("health:\n  restart_on: []\n").config.health.restartOn, [], "nothing restarts")
        XCTAssertEqual(try parse("health:\n  restart_on: [scanout_mismatch]\n").config.health.settings.restartOn, [.scanoutMismatch])
    }

    /// `health.verify_every`: seconds between scanout verifications, 10 minutes by default; `0` and `off` (quoted
    /// or not) verify only on request.
    func testVerifyEveryIsSecondsOrOff() throws {
        XCTAssertEqual(try parse("scene: a.yaml\n").config.health.settings.verifyEvery, .seconds(600))
        XCTAssertEqual(try parse("health:\n  verify_every: 90\n").config.health.settings.verifyEvery, .seconds(90))
        XCTAssertEqual(try parse("health:\n  verify_every: 1.5\n").config.health.settings.verifyEvery, .milliseconds(1500))
        for off in ["0", "off", "\"off\"", "OFF"] {
            XCTAssertNil(try parse("health:\n  verify_every: \(off)\n").config.health.settings.verifyEvery, off)
        }
    }

    func testBadVerifyEveryValuesAreNamedAtTheirLocation() {
        XCTAssertEqual(errors("health:\n  verify_every: 0.5\n"),
                       ["\(file):2:17: health.verify_every: 0.5 is out of range 1...604800"])
        XCTAssertEqual(errors("health:\n  verify_every: -10\n"),
                       ["\(file):2:17: health.verify_every: -10 is out of range 1...604800"])
        XCTAssertEqual(errors("health:\n  verify_every: never\n"),
                       ["\(file):2:17: health.verify_every: expected seconds (1...604800), or 0 or off to verify only on request"])
        XCTAssertEqual(errors("health:\n  verify_every: [600]\n"),
                       ["\(file):2:17: health.verify_every: expected seconds (1...604800), or 0 or off to verify only on request"])
    }

    func testBadHealthValuesAreNamedAtTheirLocation() {
        XCTAssertEqual(errors("health:\n  restart_on: [frozen, stuck, frozen, 3]\n"), [
            "\(file):2:24: health.restart_on[1]: 'stuck' is not a screen problem: expected one of black, frozen, scanout_mismatch",
            "\(file):2:31: health.restart_on[2]: 'frozen' is listed twice",
            "\(file):2:39: health.restart_on[3]: '3' is not a screen problem: expected one of black, frozen, scanout_mismatch",
        ])
        XCTAssertEqual(errors("health:\n  restart_on: frozen\n"),
                       ["\(file):2:15: health.restart_on: expected a list of screen problems (black, frozen, scanout_mismatch), such as [frozen]"])
        XCTAssertEqual(errors("health:\n  frozen_after: 0\n  black_after: -1\n"), [
            "\(file):2:17: health.frozen_after: 0 is out of range 1...1000",
            "\(file):3:16: health.black_after: -1 is out of range 0.1...3600",
        ])
        XCTAssertEqual(errors("health:\n  restart: [frozen]\n"),
                       ["\(file):2:3: health.restart: unknown key 'restart'; known keys: restart_on, frozen_after, black_after, verify_every"])
        XCTAssertEqual(errors("health: [frozen]\n"), ["\(file):1:9: health: expected a mapping (restart_on, frozen_after, black_after, verify_every)"])
    }

    func testTheVNCSectionIsOffUnlessPresent() throws {
        XCTAssertNil(try parse("scene: a.yaml\n").config.vnc, "no vnc: is no VNC")
        XCTAssertEqual(try parse("vnc:\n").config.vnc, VNCSettings(), "an empty section is loopback port 5900, view only")
        let config = try parse("vnc:\n  listen: \"0.0.0.0:5901\"\n  password_file: vnc.pass\n  input: true\n  max_clients: 2\n").config
        let vnc = try XCTUnwrap(config.vnc)
        XCTAssertEqual(vnc.host, "0.0.0.0")
        XCTAssertEqual(vnc.port, 5901)
        XCTAssertEqual(vnc.passwordFile?.hasSuffix("/vnc.pass"), true, "relative to the config file")
        XCTAssertTrue(vnc.input)
        XCTAssertEqual(vnc.maxClients, 2)
        XCTAssertEqual(try parse("vnc: {listen: \"localhost:5999\"}\n").config.vnc?.port, 5999)
        XCTAssertTrue(KioskConfig.allKeys.contains("vnc.password_file"))
        // IPv6 in brackets; [::1] is loopback, [::] is every address and needs TLS or a password.
        let ipv6 = try XCTUnwrap(try parse("vnc: {listen: \"[::1]:5902\"}\n").config.vnc)
        XCTAssertEqual(ipv6.host, "::1")
        XCTAssertEqual(ipv6.port, 5902)
        XCTAssertTrue(ipv6.isLoopback)
        XCTAssertEqual(ipv6.listenAddress, "[::1]:5902")
        // TLS alone allows listening beyond loopback; the files are relative to the config file.
        let tls = try XCTUnwrap(try parse("vnc:\n  listen: \"[::]:5900\"\n  tls: {cert: vnc.pem, key: vnc.key}\n").config.vnc)
        XCTAssertEqual(tls.host, "::")
        XCTAssertFalse(tls.isLoopback)
        XCTAssertNil(tls.passwordFile)
        XCTAssertEqual(tls.tls?.certificateFile.hasSuffix("/vnc.pem"), true)
        XCTAssertEqual(tls.tls?.keyFile.hasSuffix("/vnc.key"), true)
        XCTAssertEqual(tls.tls?.keyLocation?.line, 3)
    }

    func testBadVNCValuesAreNamedAtTheirLocation() {
        XCTAssertEqual(errors("vnc:\n  listen: \"0.0.0.0:5900\"\n"), [
            "\(file):2:11: vnc.listen: listening on 0.0.0.0, beyond loopback, needs TLS or a password: set vnc.tls (cert, key) or "
                + "vnc.password_file (or listen on 127.0.0.1)",
        ])
        XCTAssertEqual(errors("vnc:\n  listen: \"[::]:5900\"\n"), [
            "\(file):2:11: vnc.listen: listening on ::, beyond loopback, needs TLS or a password: set vnc.tls (cert, key) or "
                + "vnc.password_file (or listen on 127.0.0.1)",
        ])
        let expected = "expected HOST:PORT, such as 127.0.0.1:5900 or [::1]:5900 (an IPv4 address, localhost, or an IPv6 address in brackets; "
            + "a port 1-65535)"
        XCTAssertEqual(errors("vnc:\n  listen: \"[::1:5900\"\n"), ["\(file):2:11: vnc.listen: '[::1:5900': the IPv6 address has no closing ']': \(expected)"])
        XCTAssertEqual(errors("vnc:\n  listen: \"[::1]\"\n"), ["\(file):2:11: vnc.listen: '[::1]': a port must follow the IPv6 address, as [::1]:5900: \(expected)"])
        XCTAssertEqual(errors("vnc:\n  listen: \"::1:5900\"\n"), ["\(file):2:11: vnc.listen: '::1:5900': an IPv6 address goes in brackets, as [::1]:5900: \(expected)"])
        XCTAssertEqual(errors("vnc:\n  listen: \"[fe80::zz]:5900\"\n"), ["\(file):2:11: vnc.listen: 'fe80::zz' is not an IPv6 address: \(expected)"])
        XCTAssertEqual(errors("vnc:\n  listen: \"[127.0.0.1]:5900\"\n"), ["\(file):2:11: vnc.listen: '127.0.0.1' is not an IPv6 address: \(expected)"])
        XCTAssertEqual(errors("vnc:\n  listen: \"127.0.0.1:99999\"\n  max_clients: 0\n  input: maybe\n"), [
            "\(file):2:11: vnc.listen: '99999' is not a port: \(expected)",
            "\(file):3:16: vnc.max_clients: 0 is out of range 1...64",
            "\(file):4:10: vnc.input: expected true or false",
        ])
        XCTAssertEqual(errors("vnc:\n  listen: \"kiosk.example:5900\"\n"), [
            "\(file):2:11: vnc.listen: 'kiosk.example' is not an IPv4 address: \(expected)",
        ])
        XCTAssertEqual(errors("vnc:\n  tls: {cert: a.pem}\n"), [
            "\(file):2:8: vnc.tls: key is missing: TLS needs both the certificate (cert) and its private key (key), as PEM files",
        ])
        XCTAssertEqual(errors("vnc:\n  tls: {cert: a.pem, key: a.key, ca: c.pem}\n"), ["\(file):2:34: vnc.tls.ca: unknown key 'ca'; known keys: cert, key"])
        XCTAssertEqual(errors("vnc:\n  tls: a.pem\n"), [
            "\(file):2:8: vnc.tls: expected a mapping (cert: the certificate's PEM file, key: its private key's)",
        ])
        XCTAssertEqual(errors("vnc:\n  pasword_file: x\n"), ["\(file):2:3: vnc.pasword_file: unknown key 'pasword_file'; did you mean 'password_file'?"])
        XCTAssertEqual(errors("vnc: 5900\n"), ["\(file):1:6: vnc: expected a mapping (listen, password_file, tls, input, max_clients)"])
    }

    func testTheCacheSectionSetsLimitsProxyAndFolder() throws {
        let defaults = try parse("scene: a.yaml\n").config.cache
        XCTAssertEqual(defaults, KioskConfig.Cache())
        XCTAssertEqual(defaults.totalBytes, 1024 << 20)
        XCTAssertEqual(defaults.assetBytes, 256 << 20)
        XCTAssertEqual(try parse("cache:\n").config.cache, KioskConfig.Cache(), "an empty section is no section")
        let cache = try parse("cache:\n  max_mb: 200\n  max_asset_mb: 50\n  proxy: http://proxy.lan:3128\n  dir: assets\n").config.cache
        XCTAssertEqual(cache.totalBytes, 200 << 20)
        XCTAssertEqual(cache.assetBytes, 50 << 20)
        XCTAssertEqual(cache.proxy, "http://proxy.lan:3128")
        XCTAssertEqual(cache.directory, "/etc/kioskd/assets", "relative to the config file's folder")
        XCTAssertEqual(try parse("cache:\n  max_mb: 100\n").config.cache.assetBytes, 100 << 20, "one asset never more than the whole")
        XCTAssertEqual(try parse("cache: {proxy: \"socks5h://user:pw@[::1]:1080\"}\n").config.cache.proxy, "socks5h://user:pw@[::1]:1080")
    }

    func testBadCacheValuesAreNamedAtTheirLocation() {
        XCTAssertEqual(errors("cache:\n  max_mb: 0\n  max_asset_mb: many\n"), [
            "\(file):2:11: cache.max_mb: 0 is out of range 1...1048576",
            "\(file):3:17: cache.max_asset_mb: expected a whole number",
        ])
        XCTAssertEqual(errors("cache:\n  max_mb: 100\n  max_asset_mb: 200\n"),
                       ["\(file):3:17: cache.max_asset_mb: 200 MiB is more than the whole cache may hold (cache.max_mb, 100 MiB)"])
        XCTAssertEqual(errors("cache:\n  maxmb: 100\n"),
                       ["\(file):2:3: cache.maxmb: unknown key 'maxmb'; did you mean 'max_mb'?"])
        XCTAssertEqual(errors("cache:\n  proxy: ftp://proxy.lan\n"),
                       ["\(file):2:10: cache.proxy: scheme 'ftp' is not a proxy scheme; expected one of http, https, socks5, socks5h"])
        XCTAssertEqual(errors("cache:\n  proxy: proxy.lan:3128\n"),
                       ["\(file):2:10: cache.proxy: 'proxy.lan:3128' is not a URL: expected http://, https://, socks5://, socks5h:// then host[:port], such as http://proxy.lan:3128"])
        XCTAssertEqual(errors("cache:\n  proxy: http://:3128\n"), ["\(file):2:10: cache.proxy: 'http://:3128': the URL names no host"])
        XCTAssertEqual(errors("cache:\n  proxy: http://proxy.lan:99999\n"),
                       ["\(file):2:10: cache.proxy: 'http://proxy.lan:99999': the port must be a number from 1 to 65535"])
        XCTAssertEqual(errors("cache:\n  dir: \"\"\n"), ["\(file):2:8: cache.dir: expected a non-empty string"])
        XCTAssertEqual(errors("cache: 100\n"), ["\(file):1:8: cache: expected a mapping (max_mb, max_asset_mb, proxy, dir)"])
    }
}
