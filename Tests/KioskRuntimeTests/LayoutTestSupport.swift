import Foundation
import KioskCore
import KioskRuntime
import KioskScene
import XCTest

/// Scenes for layout tests, decoded the way `SceneLoader` decodes files, so the tests see the model (defaults
/// included) exactly as the runtime will.
enum LayoutFixtures {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The widgets of a one-page scene whose `widgets:` list is `yaml` (a YAML sequence, block or flow).
    static func widgets(_ yaml: String, file: StaticString = #filePath, line: UInt = #line) throws -> [Widget] {
        let indented = yaml.split(separator: "\n", omittingEmptySubsequences: false).map { "      " + $0 }.joined(separator: "\n")
        let text = "pages:\n  - name: main\n    widgets:\n" + indented + "\n"
        do {
            return try SceneLoader.parse(data: Data(text.utf8), file: "layout-test.yaml", baseDirectory: "/").scene.pages[0].widgets
        } catch {
            XCTFail("scene did not validate: \(error.diagnostics.map(\.description))\n\(text)", file: file, line: line)
            throw error
        }
    }

    /// A measure that knows natural sizes by widget id; other widgets have none. A widget listed in `wrapping`
    /// breaks its natural width into lines no wider than the `maxWidth` it is given, each as tall as its natural
    /// height; the others ignore `maxWidth`.
    final class Measure {
        var sizes: [String: Size]
        var wrapping: Set<String>
        private(set) var calls: [(id: String?, maxWidth: Double?)] = []

        init(_ sizes: [String: Size], wrapping: Set<String> = []) {
            self.sizes = sizes
            self.wrapping = wrapping
        }

        func callAsFunction(_ widget: Widget, _ maxWidth: Double?) -> Size? {
            calls.append((widget.id, maxWidth))
            guard let id = widget.id, let size = sizes[id] else { return nil }
            guard wrapping.contains(id), let maxWidth, maxWidth > 0, Double(size.width) > maxWidth else { return size }
            let lines = (Double(size.width) / maxWidth).rounded(.up)
            return Size(width: Int(maxWidth), height: size.height * Int(lines))
        }
    }

    static func layout(_ widgets: [Widget], width: Int, height: Int, measure: Measure = Measure([:])) -> [LaidOutWidget] {
        SceneLayout.layout(widgets, in: Size(width: width, height: height)) { measure($0, $1) }
    }
}

extension Array where Element == LaidOutWidget {
    /// Frames by widget id, each in its parent's coordinates as laid out.
    var framesByID: [String: Rect] {
        var result: [String: Rect] = [:]
        func visit(_ node: LaidOutWidget) {
            if let id = node.widget.id { result[id] = node.frame }
            node.children.forEach(visit)
        }
        forEach(visit)
        return result
    }

    /// Frames by widget id in page coordinates.
    var pageFramesByID: [String: Rect] {
        var result: [String: Rect] = [:]
        for entry in flatMap({ $0.flattened() }) {
            if let id = entry.widget.id { result[id] = entry.frame }
        }
        return result
    }
}

func rect(_ x: Int, _ y: Int, _ width: Int, _ height: Int) -> Rect { Rect(x: x, y: y, width: width, height: height) }
