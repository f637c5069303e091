import Foundation
@testable import KioskApp
import KioskCore
import KioskDisplay
import KioskRuntime
import KioskScene
import KioskTestSupport
import Logging
import XCTest

/// A video wall as a kiosk runs it: the config's `outputs:` section with four headless outputs, each with its place
/// in a 2x2 wall, and a fifth output as large as the wall's canvas showing the scene whole. Each panel's screen is
/// the canvas's, cropped to its viewport, pixel for pixel.
final class VideoWallOutputsTests: XCTestCase {
    static let scene = """
        size: display
        background: {gradient: ["#102030", "#f0a040"], angle: 60}
        pages:
          - name: main
            widgets:
              - {type: text, text: "<b>One picture</b>", markup: true, align: center, x: 0, y: 30%, width: 100%, height: 25%, foreground: white, font: {size: 28}}
              - {type: rect, x: 45%, y: 40%, width: 10%, height: 30%, background: "#c0ff0000"}
        """

    func testFourOutputsOfAWallShowTheirPartsOfTheCanvas() throws {
        let directory = try KioskdProcess.scratchDirectory("video-wall-outputs")
        let scenePath = directory.appendingPathComponent("wall.yaml").path
        try Self.scene.write(toFile: scenePath, atomically: true, encoding: .utf8)
        let config = try ConfigLoader.parse(data: Data("""
            outputs:
              - {connector: HEADLESS-1, wall: {columns: 2, rows: 2, column: 0, row: 0, bezel: {x: 8, y: 4}}}
              - {connector: HEADLESS-2, wall: {columns: 2, rows: 2, column: 1, row: 0, bezel: {x: 8, y: 4}}}
              - {connector: HEADLESS-3, wall: {columns: 2, rows: 2, column: 0, row: 1, bezel: {x: 8, y: 4}}}
              - {connector: HEADLESS-4, wall: {columns: 2, rows: 2, column: 1, row: 1, bezel: {x: 8, y: 4}}}
              - {connector: CANVAS, mode: 328x244}

            """.utf8), file: directory.appendingPathComponent("kioskd.yaml").path, baseDirectory: directory.path).config
        let entries = KioskOutputs.entries(config.outputs, connector: nil, mode: ModeRequest(width: 160, height: 120, refreshHz: 60),
                                           rotation: .degrees0, scenePath: scenePath, wall: config.wall)
        XCTAssertEqual(entries.map { $0.wall?.column }, [0, 1, 0, 1, nil])
        let (loop, _) = MainLoop.manual()
        let pool = RenderQueuePool(strategy: .manual)
        let logger = Logger(label: "test")
        let outputs = try KioskOutputs(entries: entries, loop: loop, pool: pool, hotplug: false, source: { entry in
            let m = try XCTUnwrap(entry.mode)
            let source = HeadlessOutputSource(connector: try XCTUnwrap(entry.connector),
                                              mode: OutputMode(width: m.width, height: m.height, refreshMilliHz: 60_000))
            return (source, try source.probe())
        }, runner: { engine, entry in
            try SceneRunner(engine: engine, path: entry.scenePath, wall: entry.wall, watch: false, fpsOverlay: false, logger: logger)
        }, logger: logger)
        defer { outputs.stop() }
        outputs.start()
        var shots: [[UInt8]] = []
        try Poll.until("every output to show its whole scene", timeout: 20, interval: 0) {
            // A frame of the manual clock at a time, so that flips complete.
            _ = loop.advanceTime(by: .milliseconds(17))
            loop.runOnce(timeout: .zero)
            _ = pool.runQueued()
            guard outputs.outputs.allSatisfy({ !$0.engine.isRendering($0.engine.rootLayer) && $0.engine.rendersInFlight == 0 && !$0.engine.hasPendingWork }) else {
                return false
            }
            shots = outputs.outputs.compactMap { $0.engine.screenshot() }
            return shots.count == 5
        }
        let canvas = shots[4]
        for (index, output) in outputs.outputs.prefix(4).enumerated() {
            let wall = try XCTUnwrap(output.stage.wall).placement(panel: Size(width: 160, height: 120))
            let viewport = wall.viewport(panel: Size(width: 160, height: 120))
            XCTAssertEqual(wall.canvas(panel: Size(width: 160, height: 120)), Size(width: 328, height: 244))
            let expected = ScreenImages.crop(canvas, width: 328, to: viewport)
            XCTAssertEqual(ScreenImages.differing(shots[index], expected), 0, "\(output.name) at \(viewport)")
        }
    }
}
