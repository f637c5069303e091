import Foundation
import KioskTestSupport
import XCTest

private var repository: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

/// The release kioskd links the C++ runtime statically: the toolchain's -static-stdlib asks for -lstdc++, and the
/// release link searches scripts/static-libstdc++ first, whose linker script names libstdc++.a. Checked here on a
/// small C++ program linked the same way (the test builds are debug builds, which link it as a shared library).
final class StaticCppRuntimeTests: XCTestCase {
    func testTheLinkerScriptMakesLstdcxxTheStaticArchive() throws {
        let directory = repository.appendingPathComponent("scripts/static-libstdc++").path
        let work = try KioskdProcess.scratchDirectory("static-cxx")
        let source = work.appendingPathComponent("main.cpp").path
        try """
            #include <cstdio>
            #include <string>
            int main() {
                std::string *text = new std::string("static C++ runtime");
                std::printf("%s\\n", text->c_str());
                delete text;
                try { throw 42; } catch (int code) { return code == 42 ? 0 : 1; }
            }
            """.write(toFile: source, atomically: true, encoding: .utf8)
        let program = work.appendingPathComponent("program").path
        let link = try runTool("/usr/bin/env", ["clang", "-x", "c++", source, "-o", program, "-fuse-ld=lld", "-L", directory, "-lstdc++"],
                               timeout: 120)
        XCTAssertEqual(link.status, 0, link.text)
        let run = try runTool(program, [])
        XCTAssertEqual(run.status, 0, run.text)
        XCTAssertEqual(run.text, "static C++ runtime\n", "operator new, std::string and exceptions work")
        let needed = try runTool("/usr/bin/readelf", ["-d", program])
        XCTAssertEqual(needed.status, 0, needed.text)
        XCTAssertTrue(needed.text.contains("libc.so.6"), needed.text)
        XCTAssertFalse(needed.text.contains("libstdc++"), "linked as a shared library: \(needed.text)")
    }

    func testTheReleaseLinkOfKioskdSearchesTheDirectory() throws {
        let manifest = try String(contentsOf: repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        let release = try XCTUnwrap(manifest.range(of: "let kioskdReleaseLink"), "Package.swift has kioskd's release link flags")
        let rest = manifest[release.lowerBound...]
        let flags = rest[..<(rest.range(of: "\n\n")?.lowerBound ?? rest.endIndex)]
        XCTAssertTrue(flags.contains("\"-L\", \"\\(Context.packageDirectory)/scripts/static-libstdc++\""), String(flags))
    }
}
