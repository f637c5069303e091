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
        videos.assetArrived(url)
    }
}
