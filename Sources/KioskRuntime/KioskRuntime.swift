/// The scene runtime: turns a validated `Scene` into a layer tree on a `LayerEngine` (layout, one layer per
/// widget, data binding, pages and transitions, animations, live reload) and lets the control socket drive it
/// through `SceneControlling`.
public enum KioskRuntime {
    public static let moduleName = "KioskRuntime"
}
