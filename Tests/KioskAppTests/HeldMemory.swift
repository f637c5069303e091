import Foundation
import KioskTestSupport
import XCTest

/// The memory of the test's process at one moment, for a flood test whose kiosk runs in the process: what the
/// allocator has handed out and not had back (`heapKiB`: glibc's `malloc_info` totals, bytes in use in the arenas plus
/// blocks mapped on their own; under ThreadSanitizer, whose allocator replaces glibc's, its own count), and the resident
/// memory (`residentKiB`, VmRSS). The first is what the kiosk holds: it does not count what an allocator keeps cached
/// after a free, nor the code and libraries a first use maps. The second is what a board would see, and counts those
/// too, and the test's own allocations besides the kiosk's: a bound on it bounds the kiosk's. A value.
struct HeldMemory {
    let heapKiB: Int
    let residentKiB: Int

    static func now() -> HeldMemory? {
        guard let resident = KioskTestSupport.residentKiB(of: getpid()), let heap = heapInUseBytes() else { return nil }
        return HeldMemory(heapKiB: heap / 1024, residentKiB: resident)
    }

    /// Fails the test when either figure grew from `before` by `bound` KiB or more; prints both growths.
    func assertGrowth(from before: HeldMemory, below bound: Int, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        print("\(what): heap in use \(before.heapKiB) -> \(heapKiB) KiB, resident \(before.residentKiB) -> \(residentKiB) KiB (bound \(bound) KiB)")
        XCTAssertLessThan(heapKiB - before.heapKiB, bound, "\(what): the heap in use grew from \(before.heapKiB) KiB to \(heapKiB) KiB",
                          file: file, line: line)
        XCTAssertLessThan(residentKiB - before.residentKiB, bound,
                          "\(what): resident memory grew from \(before.residentKiB) KiB to \(residentKiB) KiB", file: file, line: line)
    }

    /// Bytes allocated and not freed: the sanitizer allocator's count when it runs, else glibc's.
    private static func heapInUseBytes() -> Int? {
        if let counter = dlsym(nil, "__sanitizer_get_current_allocated_bytes") {
            typealias Count = @convention(c) () -> Int
            return unsafeBitCast(counter, to: Count.self)()
        }
        return glibcHeapInUseBytes()
    }

    /// glibc's bytes in use, from `malloc_info(3)`'s totals (the Glibc module does not import malloc.h, whose
    /// `mallinfo2` gives the same): what the arenas took from the system, less their free chunks (`fast` and
    /// `rest`), plus the chunks mapped on their own (`mmap`).
    private static func glibcHeapInUseBytes() -> Int? {
        guard let symbol = dlsym(nil, "malloc_info") else { return nil }
        typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        guard let stream = open_memstream(&buffer, &size) else { return nil }
        let status = unsafeBitCast(symbol, to: MallocInfo.self)(0, stream)
        fclose(stream)
        defer { free(buffer) }
        guard status == 0, let buffer else { return nil }
        let xml = String(cString: buffer)
        // The totals follow the last arena's </heap>.
        guard let totals = xml.range(of: "</heap>", options: .backwards).map({ xml[$0.upperBound...] }) else { return nil }
        func figure(_ element: String) -> Int? {
            guard let match = totals.firstMatch(of: try! Regex(#"<\#(element)[^>]* size="([0-9]+)""#)),
                  let text = match.output[1].substring else { return nil }
            return Int(text)
        }
        guard let system = figure(#"system type="current""#), let fast = figure(#"total type="fast""#),
              let rest = figure(#"total type="rest""#), let mmap = figure(#"total type="mmap""#) else { return nil }
        return system - fast - rest + mmap
    }
}
