import KioskApp
import KioskCore
import KioskDisplay
import KioskScene
import XCTest

/// `KioskConfiguration.resolve`: the command line over the config file over the board file over the defaults, with
/// the few settings taken whole or added up; and the settings that cannot work together.
final class KioskConfigurationTests: XCTestCase {
    private func board(_ text: String) throws -> BoardConfig { try BoardConfig.parse(text, file: "board.yaml") }

    func testTheCommandLineWinsOverTheConfigFileWhichWinsOverTheBoardFile() throws {
        var commandLine = KioskConfig(), configFile = KioskConfig()
        commandLine.mode = ModeRequest(width: 800, height: 480, refreshHz: 60)
        configFile.mode = ModeRequest(width: 1024, height: 768, refreshHz: 60)
        configFile.rotation = .degrees90
        configFile.buffers = 3
        let boardFile = try board("connector: DSI-1\nmode: 1280x720\nrotation: 180\nbuffers: 2\ncommit: legacy\nbacklight: rpi_backlight\n")
        let resolved = KioskConfiguration.resolve(commandLine: commandLine, configFile: configFile, boardFile: boardFile)
        XCTAssertEqual(resolved.settings.mode, ModeRequest(width: 800, height: 480, refreshHz: 60), "the command line's")
        XCTAssertEqual(resolved.rotation, .degrees90, "the config file's, over the board file's")
        XCTAssertEqual(resolved.buffers, 3)
        XCTAssertEqual(resolved.settings.connector, "DSI-1", "the board file's, as nothing else gives one")
        XCTAssertEqual(resolved.commit, .legacy)
        XCTAssertEqual(resolved.backlight, "rpi_backlight")
    }

    func testDefaultsFillWhatNoSourceGives() {
        let resolved = KioskConfiguration.resolve(commandLine: KioskConfig())
        XCTAssertEqual(resolved.commit, .auto)
        XCTAssertEqual(resolved.buffers, 2)
        XCTAssertEqual(resolved.rotation, .degrees0)
        XCTAssertEqual(resolved.renderStrategy, .roundRobin)
        XCTAssertTrue(resolved.watch)
        XCTAssertFalse(resolved.fpsOverlay)
        XCTAssertEqual(resolved.repaintWindow, .off, "the repaint window is off unless asked for (bench-log: issue 28 item 9)")
        XCTAssertNil(resolved.device)
        XCTAssertFalse(resolved.drmRequested)
    }

    func testTheCardIsChosenWholeByTheFirstSourceThatNamesOne() throws {
        var commandLine = KioskConfig(), configFile = KioskConfig()
        configFile.device = "/dev/dri/card1"
        let vc4 = try board("driver: vc4\n")
        var resolved = KioskConfiguration.resolve(commandLine: commandLine, configFile: configFile, boardFile: vc4)
        XCTAssertEqual(resolved.device, "/dev/dri/card1")
        XCTAssertNil(resolved.settings.driver, "a device in the config file replaces the board's driver")
        XCTAssertTrue(resolved.drmRequested)

        commandLine.driver = "vkms"
        resolved = KioskConfiguration.resolve(commandLine: commandLine, configFile: configFile, boardFile: vc4)
        XCTAssertNil(resolved.device, "a driver on the command line replaces the config file's device")
        XCTAssertEqual(resolved.settings.driver, "vkms")

        resolved = KioskConfiguration.resolve(commandLine: KioskConfig(), boardFile: try board("device: auto\n"))
        XCTAssertNil(resolved.device, "auto is any card")
        XCTAssertFalse(resolved.drmRequested)
    }

    func testInputDevicesAreTakenWholeAndTheDeviceMapsAddUp() throws {
        var commandLine = KioskConfig(), configFile = KioskConfig()
        configFile.input.devices = ["/dev/input/event3"]
        configFile.input.map = [InputDeviceRule(device: "ft5x06*", output: "DSI-1")]
        commandLine.input.seat = "seat1"
        let boardFile = try board("input:\n  calibration: [0, 1, 0, -1, 0, 1]\n  map:\n    - {device: 'goodix*', output: HDMI-A-1}\n")
        let resolved = KioskConfiguration.resolve(commandLine: commandLine, configFile: configFile, boardFile: boardFile)
        XCTAssertEqual(resolved.settings.input.seat, "seat1")
        XCTAssertEqual(resolved.settings.input.devices, [], "a seat on the command line replaces the file's devices")
        XCTAssertEqual(resolved.settings.input.map.map(\.device), ["ft5x06*", "goodix*"], "the config file's entries first")
        XCTAssertEqual(resolved.settings.input.calibration, boardFile.layer.input.calibration, "the board's, as nothing else gives one")
    }

    func testAllowedPeersAddUpAndOutputsComeWholeFromOneSource() {
        var commandLine = KioskConfig(), configFile = KioskConfig()
        commandLine.control.allowUIDs = [1000]
        configFile.control.allowUIDs = [2000]
        configFile.outputs = [KioskConfig.Output(connector: "HDMI-A-1"), KioskConfig.Output(connector: "HDMI-A-2")]
        let resolved = KioskConfiguration.resolve(commandLine: commandLine, configFile: configFile)
        XCTAssertEqual(resolved.settings.control.allowUIDs, [1000, 2000])
        XCTAssertEqual(resolved.settings.outputs.map(\.connector), ["HDMI-A-1", "HDMI-A-2"])
    }

    func testSettingsThatCannotWorkTogetherAreRefusedNamingTheOptions() throws {
        func problem(_ change: (inout KioskConfiguration) -> Void) -> String? {
            var configuration = KioskConfiguration()
            change(&configuration)
            do { try configuration.validate() } catch { return error.description }
            return nil
        }
        XCTAssertNil(problem { _ in })
        XCTAssertEqual(problem { $0.settings.buffers = 4 }, "--buffers 4: must be 2 or 3")
        XCTAssertEqual(problem { $0.settings.frames = 0 }, "--frames 0: must be at least 1")
        XCTAssertEqual(problem { $0.capturePages = "/tmp/pages"; $0.settings.backend = .headless },
                       "--capture-pages needs --backend drm (writeback is a DRM feature)")
        XCTAssertEqual(problem { $0.settings.capture = "/tmp/last.png"; $0.settings.frames = 5; $0.settings.commit = .legacy },
                       "--capture needs atomic commits, but the commit API is legacy (--commit, or commit: in the config or board file)")
        XCTAssertEqual(problem { $0.settings.capture = "/tmp/last.png" }, "--capture captures the last of --frames N; give --frames")
        // A legacy commit API from the board file refuses a capture too: it is the resolved setting that counts.
        let legacyBoard = KioskConfiguration.resolve(commandLine: KioskConfig(), boardFile: try board("commit: legacy\n"))
        var withPages = legacyBoard
        withPages.capturePages = "/tmp/pages"
        XCTAssertThrowsError(try withPages.validate()) {
            XCTAssertEqual("\($0)", "--capture-pages needs atomic commits, but the commit API is legacy (--commit, or commit: in the config or board file)")
        }
    }

    func testAutoPicksADRMCardWheneverThereIsOneElseAFramebuffer() {
        XCTAssertEqual(KioskConfig.Backend.choose(cards: ["/dev/dri/card0"], framebufferExists: true), .drm)
        XCTAssertEqual(KioskConfig.Backend.choose(cards: ["/dev/dri/card0"], framebufferExists: false), .drm)
        XCTAssertEqual(KioskConfig.Backend.choose(cards: [], framebufferExists: true), .fbdev)
        XCTAssertEqual(KioskConfig.Backend.choose(cards: [], framebufferExists: false), .drm,
                       "with neither, drm, whose error then says what is missing")
    }
}
