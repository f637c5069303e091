/// Integer pixel geometry shared by backends, the compositor and damage tracking. Plain values.
public struct Size: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) { self.width = width; self.height = height }
    public var description: String { "\(width)x\(height)" }
}

public struct Rect: Hashable, Sendable, CustomStringConvertible {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x; self.y = y; self.width = width; self.height = height
    }
    public init(size: Size) { self.init(x: 0, y: 0, width: size.width, height: size.height) }

    /// Width and height.
    public var size: Size { Size(width: width, height: height) }
    public var isEmpty: Bool { width <= 0 || height <= 0 }
    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var area: Int { isEmpty ? 0 : width * height }

    public func intersection(_ other: Rect) -> Rect {
        let nx = max(x, other.x), ny = max(y, other.y)
        let w = min(maxX, other.maxX) - nx, h = min(maxY, other.maxY) - ny
        return w > 0 && h > 0 ? Rect(x: nx, y: ny, width: w, height: h) : Rect(x: 0, y: 0, width: 0, height: 0)
    }

    /// Whether every pixel of `inner` is inside this rectangle.
    public func encloses(_ inner: Rect) -> Bool {
        inner.x >= x && inner.y >= y && inner.maxX <= maxX && inner.maxY <= maxY
    }

    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}
