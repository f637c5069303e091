/// The loop's pending timers as a binary min-heap ordered by (deadline, sequence). Each timer knows its index,
/// so cancelling removes it at once: a kiosk that re-arms an idle timeout on every touch would otherwise pile
/// up cancelled timers until their far deadlines came round.
///
/// Lives on the main thread, inside `MainLoop`.
struct TimerQueue {
    private var heap: [TimerHandle] = []

    /// The earliest deadline.
    var nextDeadline: MonotonicInstant? { heap.first?.deadline }

    mutating func insert(_ timer: TimerHandle) {
        precondition(timer.queueIndex == nil, "timer is already queued")
        heap.append(timer)
        timer.queueIndex = heap.count - 1
        siftUp(heap.count - 1)
    }

    mutating func remove(_ timer: TimerHandle) {
        guard let index = timer.queueIndex else { return }
        precondition(heap[index] === timer, "timer queue index out of step")
        timer.queueIndex = nil
        let last = heap.removeLast()
        guard index < heap.count else { return }
        heap[index] = last
        last.queueIndex = index
        siftDown(index)
        siftUp(index)
    }

    /// Removes and returns the timers due at `now`, earliest first.
    mutating func popDue(at now: MonotonicInstant) -> [TimerHandle] {
        var due: [TimerHandle] = []
        while let first = heap.first, first.deadline <= now {
            remove(first)
            due.append(first)
        }
        return due
    }

    private static func precedes(_ a: TimerHandle, _ b: TimerHandle) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.sequence < b.sequence
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(heap[child], heap[parent]) else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && Self.precedes(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count && Self.precedes(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { return }
            swapAt(parent, smallest)
            parent = smallest
        }
    }

    private mutating func swapAt(_ i: Int, _ j: Int) {
        heap.swapAt(i, j)
        heap[i].queueIndex = i
        heap[j].queueIndex = j
    }
}
