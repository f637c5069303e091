import KioskScene

/// Where the files of images a scene names by URL come from (kioskd's asset cache). Main thread.
public protocol RemoteAssetSource: AnyObject {
    /// The file holding the copy of `url` to show, or nil while none is held.
    func file(for url: String) -> String?
}

extension SceneStage {
    /// Where images named by URL are read from (held weakly).
    public var builderRemoteAssets: RemoteAssetSource? {
        get { builder.remoteAssets }
        set { builder.remoteAssets = newValue }
    }

    /// A new copy of `url` is in the cache (or the first): the widgets that show it draw it. Their old picture stays
    /// on screen until the new one has rendered, so no frame shows the background in between.
    public func remoteAssetChanged(_ url: String) {
        for node in nodes + (incoming?.nodes ?? []) {
            if case .image(let image) = node.widget.content, image.path == url {
                node.body?.content = builder.content(for: node, scene: scene)
            }
        }
    }
}
