import Foundation
import KioskTestSupport
import XCTest

private var repository: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

/// The committed kioskd(1) and kioskctl(1) are what ArgumentParser's generate-manual plugin makes of the current
/// options (`scripts/update-manuals` regenerates them): every subcommand, option and help text is in them.
final class ManualPageTests: XCTestCase {
    func testCommittedManualsCoverEveryOption() throws {
        for tool in ["kioskd", "kioskctl"] {
            let binary = KioskdProcess.productsDirectory.appendingPathComponent(tool).path
            let dump = try runTool(binary, ["--experimental-dump-help"])
            let json = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(dump.text.utf8)) as? [String: Any])
            let manual = try String(contentsOf: repository.appendingPathComponent("docs/man/\(tool).1"), encoding: .utf8)
            // Option lines: `.It Fl o , -output Ar output`.
            let flagLines = manual.split(separator: "\n").filter { $0.hasPrefix(".It Fl") || $0.hasPrefix(".Op Fl") || $0.hasPrefix(".Oo Fl") }
            var missing: [String] = []
            func visit(_ command: [String: Any]) {
                if let name = command["commandName"] as? String, !manual.contains(name) { missing.append("command \(name)") }
                for argument in command["arguments"] as? [[String: Any]] ?? [] where argument["shouldDisplay"] as? Bool != false {
                    for name in argument["names"] as? [[String: Any]] ?? [] where name["kind"] as? String == "long" {
                        let flag = "-\(name["name"] as? String ?? "")"
                        let listed = flagLines.contains { $0.split(whereSeparator: { $0 == " " || $0 == "," }).contains(Substring(flag)) }
                        if !listed { missing.append(flag) }
                    }
                    if let abstract = argument["abstract"] as? String, !abstract.isEmpty,
                       !manual.contains(String(abstract.prefix(40)).replacingOccurrences(of: "-", with: "\\-")),
                       !manual.contains(String(abstract.prefix(40))) {
                        missing.append("help text '\(abstract.prefix(40))'")
                    }
                }
                for sub in command["subcommands"] as? [[String: Any]] ?? [] { visit(sub) }
            }
            visit(try XCTUnwrap(json["command"] as? [String: Any]))
            XCTAssertEqual(missing, [], "docs/man/\(tool).1 is stale: run scripts/update-manuals")
        }
    }
}
