import Foundation
import XCTest
@testable import KioskCore

/// The daemon's malloc arena limit, unless the environment sets one.
final class MallocArenasTests: XCTestCase {
    func testTheEnvironmentsLimitIsLeftAsItIs() {
        XCTAssertTrue(MallocArenas.isUnset { _ in nil })
        XCTAssertFalse(MallocArenas.isUnset { $0 == "MALLOC_ARENA_MAX" ? "4" : nil })
        XCTAssertFalse(MallocArenas.isUnset { $0 == "GLIBC_TUNABLES" ? "glibc.malloc.tcache_count=0:glibc.malloc.arena_max=8" : nil })
        XCTAssertTrue(MallocArenas.isUnset { $0 == "GLIBC_TUNABLES" ? "glibc.malloc.tcache_count=0" : nil })
    }

    func testTheLimitIsSetOnlyWhenTheEnvironmentSetsNone() {
        // A fake mallopt: the test process's own allocator is left alone.
        var set: [Int32] = []
        XCTAssertFalse(MallocArenas.limitUnlessConfigured({ $0 == "MALLOC_ARENA_MAX" ? "1" : nil }, set: { set.append($0); return true }))
        XCTAssertEqual(set, [], "not set over the environment's")
        XCTAssertTrue(MallocArenas.limitUnlessConfigured({ _ in nil }, set: { set.append($0); return true }))
        XCTAssertEqual(set, [2])
        XCTAssertFalse(MallocArenas.limitUnlessConfigured({ _ in nil }, set: { _ in false }), "mallopt's refusal is reported")
    }
}
