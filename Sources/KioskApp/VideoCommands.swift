import Foundation
import KioskControl
import KioskCore
import KioskRuntime

/// The video commands (`video.play`, `video.pause`, `video.seek`, `video.state`, `video.load`), the `video` event
/// and the video counters in `stats`, through the scene runtime's video widgets. `id` names the widget; without
/// it, the scene's only video widget is meant.
extension ControlWiring {
    func registerVideoCommands() {
        let commands = server.commands
        commands.register(.videoPlay, arguments: ["id"]) { [unowned self] args, _ in
            let videos = try videoRuntime(args)
            let id = try videoID(args)
            try stageCall(args) { () throws(StageError) in try videos.playVideo(id: id) }
            return try videoState(videos, id: id, args)
        }
        commands.register(.videoPause, arguments: ["id"]) { [unowned self] args, _ in
            let videos = try videoRuntime(args)
            let id = try videoID(args)
            try stageCall(args) { () throws(StageError) in try videos.pauseVideo(id: id) }
            return try videoState(videos, id: id, args)
        }
        commands.register(.videoSeek, arguments: ["id", "position"]) { [unowned self] args, _ in
            let videos = try videoRuntime(args)
            let id = try videoID(args)
            let seconds = try args.number("position")
            guard seconds.isFinite, seconds >= 0 else { throw args.invalid("position", "must be seconds from the start (0 or more), got \(seconds)") }
            try stageCall(args) { () throws(StageError) in try videos.seekVideo(id: id, to: .milliseconds(Int64(seconds * 1000))) }
            return try videoState(videos, id: id, args)
        }
        commands.register(.videoState, arguments: ["id"]) { [unowned self] args, _ in
            let videos = try videoRuntime(args)
            return try videoState(videos, id: try videoID(args), args)
        }
        // The source's scheme (a path is `file`) must be one of `video.allowed_schemes`: over MQTT as over the socket,
        // this is the one way a video comes from outside the scene. A file (a path or a file:// URI) is then checked
        // off the loop to be a readable regular file before GStreamer opens it: its file source would block on a
        // FIFO. The answer comes once the clip is loaded.
        commands.registerDeferred(.videoLoad, arguments: ["id", "source"]) { [unowned self] args, _, reply in
            let videos = try videoRuntime(args)
            let id = try videoID(args)
            let source = try args.string("source")
            try stageCall(args) { () throws(StageError) in try videos.checkVideoSource(source) }
            guard let file = VideoSchemes.filePath(of: source) else {
                try stageCall(args) { () throws(StageError) in try videos.loadVideo(id: id, source: source) }
                return reply.succeed(try videoState(videos, id: id, args))
            }
            guard file.hasPrefix("/") else { throw args.invalid("source", "must be an absolute path or a URI, got '\(source)'") }
            jobs.run({ () -> RegularFileError? in
                do throws(RegularFileError) { _ = try RegularFile(opening: file) } catch { return error }
                return nil
            }, then: { [weak self] problem in
                guard let self else { return }
                if let problem {
                    return reply.fail(args.invalid("source", "\(problem)"))
                }
                reply.complete(Result { () throws(ControlError) in
                    try self.stageCall(args) { () throws(StageError) in try videos.loadVideo(id: id, source: source) }
                    return try self.videoState(videos, id: id, args)
                })
            })
        }
    }

    /// `video_frames_decoded`, `video_frames_shown`, `video_frames_dropped` over every video widget, for `stats`.
    func videoStats() -> [String: JSONValue] {
        guard let videos = scene as? VideoControlling else { return [:] }
        let totals = videos.videoFrameTotals
        return ["video_frames_decoded": .int(Int64(totals.decoded)), "video_frames_shown": .int(Int64(totals.shown)),
                "video_frames_dropped": .int(Int64(totals.dropped))]
    }

    /// The `video` event's data: `{id, kind, source}` and, for `error`, GStreamer's `message`.
    static func videoEventData(_ report: VideoEventReport) -> JSONValue {
        var data: [String: JSONValue] = ["kind": .string(report.kind.rawValue), "source": .string(report.source),
                                         "id": report.id.map(JSONValue.string) ?? .null]
        if let message = report.message { data["message"] = .string(message) }
        return .object(data)
    }

    private func videoRuntime(_ args: ControlArguments) throws(ControlError) -> any VideoControlling {
        guard let videos = scene as? VideoControlling else { throw ControlError(code: "not_found", message: "\(args.command): the scene has no video widgets") }
        return videos
    }

    private func videoID(_ args: ControlArguments) throws(ControlError) -> String? {
        args.has("id") ? try args.string("id") : nil
    }

    private func videoState(_ videos: any VideoControlling, id: String?, _ args: ControlArguments) throws(ControlError) -> JSONValue {
        var state: [String: PropertyValue] = [:]
        try stageCall(args) { () throws(StageError) in state = try videos.videoState(id: id) }
        return .object(state.mapValues(Self.json))
    }
}
