import KioskCore
import KioskRender
import KioskScene

/// Where the files of images and video clips a scene names by URL come from (kioskd's asset cache). Main thread.
public protocol RemoteAssetSource: AnyObject {
    /// The file holding the copy of `url` to show, or nil while none is held.
    func file(for url: String) -> String?
    /// The URLs a stage wants changed other than by a scene load (`video.load` of a clip by URL).
    func stageAssetsChanged()
}

extension SceneStage {
    /// Where images named by URL are read from (held weakly).
    public var builderRemoteAssets: RemoteAssetSource? {
        get { builder.remoteAssets }
        set {
            builder.remoteAssets = newValue
            videos.cachedFile = { [weak newValue] url in newValue?.file(for: url) }
        }
    }

    /// The URLs the stage shows from the asset cache, each with its `refresh` seconds: the scene's, and clips loaded
    /// by URL with `video.load`.
    public var remoteAssets: [String: Int] {
        var urls = scene.remoteAssets
        for slot in videos.slots {
            for source in slot.properties.sources where RemoteAsset.isFetched(source) && urls[source] == nil {
                urls[source] = slot.properties.refreshSeconds
            }
        }
        return urls
    }

    /// A new copy of `url` is in the cache (or the first): the widgets (and the scene background) that show it
    /// draw it, and video widgets waiting for it play it. Their old picture stays
    /// on screen until the new one has rendered, so no frame shows the background in between.
    public func remoteAssetChanged(_ url: String) {
        for node in nodes + (incoming?.nodes ?? []) {
            if case .image(let image) = node.widget.content, image.path == url {
                node.body?.content = builder.content(for: node, scene: scene)
            }
        }
        if let incoming, incoming.scene.backgroundImage?.path == url {
            incoming.backgroundLayer?.content = builder.backgroundContent(incoming.scene)
        }
        if scene.backgroundImage?.path == url { backgroundLayer?.content = builder.backgroundContent(scene) }
        if scene.fonts.contains(url) || incoming?.scene.fonts.contains(url) == true { fontArrived(url) }
        videos.assetArrived(url)
    }

    /// The copy of a font named by URL is whole: registered (`PangoFontMaps.addFontFiles`), and the text of the
    /// scene drawn again with it; until then its family fell back as an unknown one does. A copy that is no font is
    /// reported (`error` event) and the fallback stays.
    private func fontArrived(_ url: String) {
        guard let file = builder.remoteAssets?.file(for: url) else { return }
        let queue: BackgroundJobs
        do {
            queue = try loadQueue ?? BackgroundJobs(loop: engine.loop, label: "kioskd.scene.load")
            loadQueue = queue
        } catch {
            eventListeners.emit(.error(code: "remote_asset", message: "font \(url): no queue to register it on: \(error)"))
            return
        }
        // Off the loop: fontconfig reads the system's font folders again (about 10 to 60 ms).
        queue.run({ () -> Result<Bool, StageError> in
            if let problem = FontFileCheck.problem(at: file, named: url) { return .failure(StageError(.invalidArgument, problem)) }
            do { return .success(try PangoFontMaps.addFontFiles([file])) } catch {
                return .failure(StageError(.ioError, "\(error)"))
            }
        }, then: { [weak self] result in
            switch result {
            case .success(true): self?.redrawText()
            case .success(false): break
            case .failure(let error):
                self?.eventListeners.emit(.error(code: "remote_asset", message: "font \(url): \(error.message); text in its family falls back to other fonts"))
            }
        })
    }

    /// Draws the scene's text again (fonts were added).
    private func redrawText() {
        let textTypes: Set<WidgetType> = [.text, .clock, .ticker, .button, .fps]
        for node in nodes where textTypes.contains(node.widget.type) { builder.configure(node, scene: scene) }
        if let incoming {
            for node in incoming.nodes where textTypes.contains(node.widget.type) { builder.configure(node, scene: incoming.scene) }
        }
    }
}
