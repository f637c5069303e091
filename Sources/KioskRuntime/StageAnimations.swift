import Foundation
import KioskCore
import KioskScene

/// The control socket's `animate`: a widget property moved by the stage's pop-style `Animator` (basic, spring or
/// decay), stepped by vblank timestamps. A new animation of the same widget and property takes over from the
/// current value and velocity. Main thread.
enum StageAnimations {
    static let properties = ["opacity", "x", "y", "position", "scale", "rotation", "foreground", "background", "value"]

    static func animate(_ node: WidgetNode, property: String, to: [Double], request: AnimationRequest, start: MonotonicInstant? = nil,
                        animator given: Animator? = nil, stage: SceneStage) throws(StageError) {
        // `given` (a detached animator) only checks the request: nothing of the stage's changes.
        let animator = given ?? stage.animator
        let curve: AnimationCurve
        switch request {
        case .basic(let duration, let timing): curve = .basic(duration: duration, timing: timing)
        case .spring(let stiffness, let damping, let mass, let velocity):
            curve = .spring(stiffness: stiffness, damping: damping, mass: mass, velocity: velocity.map { widen($0, for: property) })
        case .decay(let velocity, let deceleration):
            curve = .decay(velocity: widen(velocity, for: property), deceleration: deceleration)
        }
        let isDecay: Bool = if case .decay = request { true } else { false }
        let key = "\(property)"
        do {
            switch property {
            case "opacity":
                if !isDecay { try checkRange(to, 0...1, property) }
                try run(animator, node.layer, .opacity, to: to, curve: curve, key: key, start: start, isDecay: isDecay)
            case "x", "y":
                let axis = property == "x" ? 0 : 1
                let p = AnimatableProperty<Layer>(
                    name: property, componentCount: 1,
                    read: { [Double(axis == 0 ? $0.frame.x : $0.frame.y)] },
                    write: { layer, v in
                        var f = layer.frame
                        let value = Int(v[0].rounded())
                        if axis == 0 { f.x = value } else { f.y = value }
                        layer.frame = f
                    })
                try run(animator, node.layer, p, to: to, curve: curve, key: key, start: start, isDecay: isDecay)
            case "position":
                try run(animator, node.layer, .position, to: to, curve: curve, key: key, start: start, isDecay: isDecay)
            case "scale":
                try run(animator, node.layer, .scale, to: widen(to, for: property), curve: curve, key: key, start: start, isDecay: isDecay)
            case "rotation":
                // Degrees on the wire, as people write them; radians in the layer.
                let p = AnimatableProperty<Layer>(
                    name: "rotation", componentCount: 1,
                    read: { [$0.transform.rotation * 180 / .pi] },
                    write: { $0.transform.rotation = $1[0] * .pi / 180 })
                try run(animator, node.layer, p, to: to, curve: curve, key: key, start: start, isDecay: isDecay)
            case "foreground", "background":
                if !isDecay { try checkRange(to, 0...1, property) }
                let isForeground = property == "foreground"
                let p = AnimatableProperty<WidgetNode>(
                    name: property, componentCount: 4,
                    read: { node in
                        let c = isForeground ? node.widget.style.foreground
                            : node.widget.style.background.flatMap { if case .colour(let c) = $0 { c } else { nil } }
                        let colour = c ?? Color(red: 1, green: 1, blue: 1, alpha: isForeground ? 1 : 0)
                        return [colour.red, colour.green, colour.blue, colour.alpha]
                    },
                    write: { [weak stage] node, v in
                        let clamp = { (x: Double) in min(max(x, 0), 1) }
                        let colour = Color(red: clamp(v[0]), green: clamp(v[1]), blue: clamp(v[2]), alpha: clamp(v[3]))
                        if isForeground { node.widget.style.foreground = colour } else { node.widget.style.background = .colour(colour) }
                        stage?.redraw(node)
                    })
                try run(animator, node, p, to: to, curve: curve, key: key, start: start, isDecay: isDecay)
            case "value":
                guard case .progress = node.widget.content else {
                    throw StageError(.invalidArgument, "property: 'value' animates progress widgets; '\(node.id ?? "")' is a \(node.widget.type.rawValue)")
                }
                if !isDecay { try checkRange(to, 0...1, property) }
                let p = AnimatableProperty<WidgetNode>(
                    name: "value", componentCount: 1,
                    read: { [$0.progressShown] },
                    write: { [weak stage] node, v in stage?.setProgress(node, min(max(v[0], 0), 1)) })
                if given == nil, let token = node.progressAnimation { stage.engine.removeAnimation(token); node.progressAnimation = nil }
                try run(animator, node, p, to: to, curve: curve, key: key, start: start, isDecay: isDecay)
            default:
                throw StageError(.invalidArgument, "property: '\(property)' cannot be animated (one of \(properties.joined(separator: ", ")))")
            }
        } catch let error as StageError {
            throw error
        } catch {
            throw StageError(.invalidArgument, "\(property): \(error)")
        }
    }

    private static func run<T: AnyObject>(_ animator: Animator, _ target: T, _ property: AnimatableProperty<T>, to: [Double],
                                          curve: AnimationCurve, key: String, start: MonotonicInstant?, isDecay: Bool) throws {
        if isDecay {
            try animator.animate(target, property, curve: curve, key: key, startingAt: start)
        } else {
            try animator.animate(target, property, to: to, curve: curve, key: key, startingAt: start)
        }
    }

    /// `scale` takes one factor for both axes.
    private static func widen(_ values: [Double], for property: String) -> [Double] {
        property == "scale" && values.count == 1 ? [values[0], values[0]] : values
    }

    private static func checkRange(_ values: [Double], _ range: ClosedRange<Double>, _ property: String) throws(StageError) {
        guard values.allSatisfy({ range.contains($0) }) else {
            throw StageError(.invalidArgument, "to: \(property) values must be within \(range.lowerBound)...\(range.upperBound), got \(values)")
        }
    }
}
