import Foundation
import KioskTestSupport
import XCTest

private var repository: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

/// The shell completion scripts in `completions/` are what the current kioskctl generates, so they cannot go
/// stale: regenerate them with `kioskctl --generate-completion-script SHELL` when this fails.
final class CompletionScriptTests: XCTestCase {
    func testCommittedScriptsEqualWhatKioskctlGenerates() throws {
        let kioskctl = KioskdProcess.productsDirectory.appendingPathComponent("kioskctl").path
        for (shell, file) in [("bash", "kioskctl.bash"), ("zsh", "_kioskctl"), ("fish", "kioskctl.fish")] {
            let generated = try runTool(kioskctl, ["--generate-completion-script", shell])
            XCTAssertEqual(generated.status, 0, generated.text)
            XCTAssertTrue(generated.text.contains("screenshot") && generated.text.contains("animate"), "\(shell) covers the subcommands")
            let committed = try String(contentsOf: repository.appendingPathComponent("completions/\(file)"), encoding: .utf8)
            XCTAssertEqual(committed, generated.text,
                           "completions/\(file) is stale: kioskctl --generate-completion-script \(shell) > completions/\(file)")
        }
    }
}
