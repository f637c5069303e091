import Foundation
import Glibc
import KioskControl
import KioskCore
import KioskDisplay
import KioskRender

/// `output.info`, `output.power` (also answered as `display.info` and `display.power`, their older names),
/// `output.verify` (also `display.verify`) and `screenshot`: the output as the control socket shows and drives it.
extension ControlWiring {
    func registerOutputCommands() {
        let commands = server.commands
        commands.register(.outputInfo, arguments: ["output"]) { [unowned self] args, _ in
            // The output named (else the first) at the top level; every output and every connector seen listed.
            let output = try drivenOutput(args)
            guard let display = output.engine.backend else { throw Self.notConnected(args.command, output: output) }
            var members = outputMembers(display, rotation: output.rotation)
            members["outputs"] = outputsListing()
            members["connectors"] = connectorsListing()
            return .object(members.merging(statusExtras()) { _, extra in extra })
        }

        commands.register(.outputPower, arguments: ["on", "output"]) { [unowned self] args, _ in
            let on = try args.bool("on")
            let (display, engine) = try outputTarget(args)
            do {
                try engine.setOutputPower(on)
            } catch {
                throw ControlError(code: "display_error", message: "\(args.command) \(on ? "on" : "off"): \(error)")
            }
            // The idle monitor follows the outputs' power: lighting one wakes it (and so every output); turning one
            // off blanks it once every output is off, and leaves the others lit and the idle state as it was before.
            if on || outputs.outputs.allSatisfy({ $0.engine.backend?.isPoweredOn != true }) { onOutputPower?(on) }
            return ["power": .string(display.isPoweredOn ? "on" : "off")]
        }

        // One frame read back through the output's writeback connector and compared with the composed frame of the
        // same present (`ScanoutVerifier`); the reply comes once both have arrived and been compared off the loop.
        // `corrupt_composed` is a test hook, refused unless kioskd was started with --verify-corrupt-composed.
        commands.registerDeferred(.outputVerify, arguments: ["output", "corrupt_composed"]) { [unowned self] args, _, reply in
            let output = try drivenOutput(args)
            guard let verifier = verifier(of: output) else {
                throw ControlError(code: "unavailable", message: "\(args.command): output \(output.name): scanout verification is unavailable")
            }
            let corrupt = args.has("corrupt_composed") ? try args.bool("corrupt_composed") : false
            verifier.verify(corruptComposed: corrupt) { result in
                switch result {
                case .success(let outcome): reply.complete(.success(ScanoutVerifier.value(outcome)))
                case .failure(let error): reply.fail(ControlError(code: error.code, message: "\(args.command): \(error.message)"))
                }
            }
        }

        commands.registerDeferred(.screenshot, arguments: ["path", "output", "group_time_ns"]) { [unowned self] args, _, reply in
            var path: String?
            if args.has("path") {
                let given = try args.string("path")
                guard given.hasPrefix("/") else { throw args.invalid("path", "must be an absolute path, got '\(given)'") }
                path = try screenshotDirectory.check(given)
            }
            let (display, engine) = try outputTarget(args)
            // The copy comes from the compositor's shadow buffer (cached RAM), at the flip that shows it; encoding
            // and writing happen off the loop.
            let size = display.info.mode.size, target = path, jobs = self.jobs
            if args.has("group_time_ns") {
                let output = try drivenOutput(args)
                let (instant, timeline) = try Self.localInstant(args, engine: engine, timeline: output.stage.timeline)
                engine.captureScreen(atVblankNearest: instant) { pixels, vblank in
                    guard let pixels else {
                        return reply.fail(ControlError(code: "no_frame", message: "screenshot: no frame is on the display"))
                    }
                    let shownAt = vblank.flatMap { timeline.groupTime(at: $0) }
                    jobs.run({ Self.encodeScreenshot(pixels, size: size, path: target, vblankGroupTime: shownAt) }, then: reply.complete)
                }
                return
            }
            let encode = { (pixels: [UInt8]?) in
                guard let pixels else {
                    return reply.fail(ControlError(code: "no_frame", message: "screenshot: no frame has been flipped onto the display yet"))
                }
                jobs.run({ Self.encodeScreenshot(pixels, size: size, path: target) }, then: reply.complete)
            }
            engine.captureScreen(then: encode)
        }
    }

    /// The longest `screenshot` waits for a group time.
    static let longestGroupWait: Duration = .seconds(60)

    /// Where on this kiosk's clock `screenshot`'s `group_time_ns` falls: `not_in_sync_group` without a sync group,
    /// `unavailable` while the group's time is not known, `too_late` for a time more than a refresh period past,
    /// `invalid_argument` for one more than `longestGroupWait` ahead.
    static func localInstant(_ args: ControlArguments, engine: LayerEngine, timeline: GroupTimeline?) throws(ControlError) -> (MonotonicInstant, GroupTimeline) {
        let wanted = try args.integer("group_time_ns")
        guard let timeline else {
            throw ControlError(code: "not_in_sync_group", message: "screenshot: 'group_time_ns' needs a sync group (the config's 'sync:' section), and this kiosk is in none")
        }
        let now = engine.loop.now
        guard let groupNow = timeline.groupTime(at: now) else {
            throw ControlError(code: "unavailable", message: "screenshot: the sync group's time is not known yet (the kiosk is joining its group)")
        }
        let ahead = wanted &- groupNow
        let period = engine.displayLink.frameDuration.nanosecondsClamped
        guard ahead >= -period else {
            throw ControlError(code: "too_late", message: String(format: "screenshot: group time %lld ns passed %.1f ms ago, more than a refresh period (%.1f ms)",
                                                                  wanted, Double(-ahead) / 1e6, Double(period) / 1e6))
        }
        guard ahead <= longestGroupWait.nanosecondsClamped else {
            throw args.invalid("group_time_ns", String(format: "is %.1f s ahead of the group's time %lld ns; at most %lld s", Double(ahead) / 1e9,
                                                       groupNow, longestGroupWait.components.seconds))
        }
        return (now + .nanoseconds(ahead), timeline)
    }

    /// The display and engine a display command acts on: those of the output `args` names (the first without
    /// `output`); `no_display` while it has none.
    func outputTarget(_ args: ControlArguments) throws -> (display: any DisplayBackend, engine: LayerEngine) {
        let output = try drivenOutput(args)
        guard let display = output.engine.backend else { throw Self.notConnected(args.command, output: output) }
        return (display, output.engine)
    }

    /// Tells `display` subscribers that an output changed: `connected`, `disconnected` or `mode`, with the output's name.
    func outputChanged(_ event: OutputEvent, on output: DrivenOutput) {
        let data: [String: JSONValue]
        switch event {
        case .connected(let info): data = ["state": "connected", "connector": .string(info.connector), "mode": Self.modeValue(info.mode)]
        case .disconnected(let connector): data = ["state": "disconnected", "connector": .string(connector)]
        case .modeChanged(let info): data = ["state": "mode", "connector": .string(info.connector), "mode": Self.modeValue(info.mode)]
        }
        server.broadcast(event: "display", data: .object(data.merging(["output": .string(output.name)]) { ours, _ in ours }))
    }

    /// What `output.info` says of one output's display.
    func outputMembers(_ display: any DisplayBackend, rotation: OutputRotation) -> [String: JSONValue] {
        let info = display.info
        // The connector's own list where the backend has one; a headless output has just the mode it was given.
        let modes = (display as? DRMBackend)?.plan.connector.modes.map(\.mode) ?? [info.mode]
        var seen = Set<String>()
        let listed = modes.filter { seen.insert("\($0.name) \($0.description) \($0.isPreferred)").inserted }
        let members: [String: JSONValue] = [
            "device": .string(info.device),
            "driver": .string(info.driver),
            "connector": .string(info.connector),
            "mode": Self.modeValue(info.mode),
            "modes": .array(listed.map(Self.modeValue)),
            "commit_api": .string(info.commitAPI.rawValue),
            "flip_pacing": .string(display.flipPacing.isTimer ? "timer" : "vblank"),
            "buffers": .int(Int64(info.bufferCount)),
            "rotation": .int(Int64(rotation.rawValue)),
            "power": .string(display.isPoweredOn ? "on" : "off"),
        ]
        return members
    }

    static func modeValue(_ mode: OutputMode) -> JSONValue {
        [
            "name": .string(mode.description),
            "width": .int(Int64(mode.width)),
            "height": .int(Int64(mode.height)),
            "refresh_mhz": .int(Int64(mode.refreshMilliHz)),
            "preferred": .bool(mode.isPreferred),
        ]
    }

    /// The PNG of `pixels`, written to `path` (`{path, width, height}`) or returned as base64
    /// (`{png_base64, width, height}`). The file is written whole or not at all (`AtomicFile`, mode 0640). Runs on
    /// the jobs queue.
    private static func encodeScreenshot(_ pixels: [UInt8], size: Size, path: String?, vblankGroupTime: Int64?? = nil) -> Result<JSONValue, ControlError> {
        let png: [UInt8]
        do {
            png = try encodePNG(xrgb8888: pixels, size: size, stride: size.width * 4)
        } catch {
            return .failure(.internalError("screenshot: \(error)"))
        }
        var dimensions: [String: JSONValue] = ["width": .int(Int64(size.width)), "height": .int(Int64(size.height))]
        // A capture at a group time: the group time of the flip that put its frame on screen (null when none came
        // from three refresh periods before the time).
        if let vblankGroupTime { dimensions["vblank_group_time_ns"] = vblankGroupTime.map(JSONValue.int) ?? .null }
        guard let path else {
            return .success(.object(dimensions.merging(["png_base64": .string(Data(png).base64EncodedString())]) { $1 }))
        }
        do {
            try AtomicFile().write(png, to: path)
        } catch {
            return .failure(ControlError(code: "io_error", message: "screenshot \(error)"))
        }
        return .success(.object(dimensions.merging(["path": .string(path)]) { $1 }))
    }
}
