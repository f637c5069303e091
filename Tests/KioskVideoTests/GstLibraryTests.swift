import CKioskVideo
import XCTest

/// GStreamer is opened with dlopen when the first player is made (GstLibrary.h): a missing library, or one without
/// a function kioskd calls, is named in the error the video widget shows, and the real libraries fill the table.
final class GstLibraryTests: XCTestCase {
    private func resolve(_ libraries: [String]) -> (ok: Bool, table: KioskGstLibrary, error: String) {
        var table = KioskGstLibrary()
        var error = [CChar](repeating: 0, count: 512)
        let names = libraries.map { strdup($0) }
        defer { names.forEach { free($0) } }
        let pointers = names.map { UnsafePointer($0) }
        let size = error.count
        let ok = pointers.withUnsafeBufferPointer { kiosk_gst_resolve($0.baseAddress, $0.count, &table, &error, size) }
        return (ok == 1, table, String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }

    func testAMissingLibraryIsNamedWithTheLoadersReason() {
        let result = resolve(["libgstapp-1.0.so.0", "libkioskd-no-such-gstreamer.so.0"])
        XCTAssertFalse(result.ok)
        XCTAssertTrue(result.error.hasPrefix("GStreamer is not installed: libkioskd-no-such-gstreamer.so.0: cannot open shared object file"),
                      result.error)
        XCTAssertTrue(result.error.contains("install libgstreamer1.0-0"), result.error)
    }

    func testALibraryWithoutAFunctionKioskdCallsNamesTheFunction() {
        // libm opens, and has none of GStreamer's functions: the first one looked for is named.
        let result = resolve(["libm.so.6"])
        XCTAssertFalse(result.ok)
        XCTAssertEqual(result.error, "GStreamer's libraries (libm.so.6) have no gst_init: kioskd needs GStreamer 1.20 or later")
    }

    func testGStreamersOwnLibrariesFillTheWholeTable() throws {
        let result = resolve(["libgstapp-1.0.so.0", "libgstvideo-1.0.so.0"])
        XCTAssertTrue(result.ok, result.error)
        // Every entry, by its place in the table: none may be left empty.
        var table = result.table
        let entries = withUnsafeBytes(of: &table) { raw in
            (0..<(raw.count / MemoryLayout<UnsafeRawPointer?>.stride)).map {
                raw.load(fromByteOffset: $0 * MemoryLayout<UnsafeRawPointer?>.stride, as: UnsafeRawPointer?.self)
            }
        }
        XCTAssertEqual(entries.count, 33)
        XCTAssertEqual(entries.filter { $0 == nil }.count, 0, "table entries left unresolved")
        let core = try XCTUnwrap(dlopen("libgstreamer-1.0.so.0", RTLD_NOW | RTLD_NOLOAD), "libgstreamer was opened")
        XCTAssertEqual(entries[0], UnsafeRawPointer(dlsym(core, "gst_init")), "gst_init is libgstreamer's own")
    }

    func testTheProcessWideLoadSucceedsAndIsTheSameTableEachTime() {
        var error: UnsafePointer<CChar>?
        XCTAssertEqual(kiosk_gst_load(&error), 1, error.map { String(cString: $0) } ?? "")
        XCTAssertEqual(kiosk_gst_load(&error), 1)
        XCTAssertNotNil(kiosk_gst_api().pointee.gst_element_set_state)
    }
}
