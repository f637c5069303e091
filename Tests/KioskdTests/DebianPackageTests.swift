import Foundation
import KioskTestSupport
import XCTest

private var repository: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

/// `scripts/package-deb` on the binaries of this build: the .deb's name, contents and control data, lintian, and
/// the installed layout working (data found under /usr/share/kioskd at run time). The package goes to
/// `KIOSKD_DEB_DIR` when set (scripts/test-all's service tier installs that one rather than packaging the same build
/// again), else to a scratch folder.
final class DebianPackageTests: XCTestCase {
    func testPackageContentsControlDataLintianAndInstalledLayout() throws {
        let out: URL
        if let kept = ProcessInfo.processInfo.environment["KIOSKD_DEB_DIR"] {
            out = URL(fileURLWithPath: kept)
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        } else {
            out = try KioskdProcess.scratchDirectory("deb")
        }
        let build = try runTool(repository.appendingPathComponent("scripts/package-deb").path,
                                ["--bin-dir", KioskdProcess.productsDirectory.path, "--out", out.path], timeout: 300)
        XCTAssertEqual(build.status, 0, build.text)
        let version = try runTool(KioskdProcess.kioskdPath, ["--version"]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        let arch = try runTool("/usr/bin/dpkg", ["--print-architecture"]).text.trimmingCharacters(in: .whitespacesAndNewlines)
        let deb = out.appendingPathComponent("kioskd_\(version)_\(arch).deb").path
        XCTAssertTrue(FileManager.default.fileExists(atPath: deb), build.text)

        let contents = try runTool("/usr/bin/dpkg-deb", ["-c", deb])
        XCTAssertEqual(contents.status, 0, contents.text)
        for path in ["./usr/bin/kioskd", "./usr/bin/kioskctl", "./usr/share/kioskd/scenes/dashboard.yaml",
                     "./usr/share/kioskd/scenes/builtin/diagnostic.yaml", "./usr/share/kioskd/bench/Scenes/",
                     "./usr/share/kioskd/board-configs/raspberry-pi-4-hdmi.yaml",
                     "./lib/systemd/system/kioskd.service", "./lib/systemd/system/kioskd.socket",
                     "./usr/lib/sysusers.d/kioskd.conf", "./usr/lib/tmpfiles.d/kioskd.conf", "./usr/share/kioskd/systemd/mqtt.conf", "./usr/share/kioskd/systemd/web.conf", "./usr/share/kioskd/systemd/vnc.conf",
                     "./usr/share/bash-completion/completions/kioskctl",
                     "./usr/share/zsh/vendor-completions/_kioskctl", "./usr/share/fish/vendor_completions.d/kioskctl.fish",
                     "./usr/share/man/man1/kioskd.1.gz", "./usr/share/man/man1/kioskctl.1.gz",
                     "./usr/share/man/man5/kioskd.yaml.5.gz", "./usr/share/man/man5/kioskd-scene.5.gz",
                     "./etc/kioskd/kioskd.yaml", "./usr/share/doc/kioskd/README.md", "./usr/share/doc/kioskd/copyright"] {
            XCTAssertTrue(contents.text.contains(" \(path)\n"), "the package holds \(path)")
        }

        let info = try runTool("/usr/bin/dpkg-deb", ["-I", deb])
        XCTAssertEqual(info.status, 0, info.text)
        XCTAssertTrue(info.text.contains(" Package: kioskd\n") && info.text.contains(" Version: \(version)\n"), info.text)
        let depends = try XCTUnwrap(info.text.split(separator: "\n").first { $0.hasPrefix(" Depends: ") }, info.text)
        // GStreamer's libraries are opened with dlopen when a video plays (no NEEDED entry names them), and are named
        // by the packaging script; its plugins by name.
        let needed = try runTool("/usr/bin/readelf", ["-d", KioskdProcess.kioskdPath])
        XCTAssertEqual(needed.status, 0, needed.text)
        XCTAssertFalse(needed.text.contains("libgst"), "kioskd links GStreamer: \(needed.text)")
        // libcurl too, when a scene first fetches.
        XCTAssertFalse(needed.text.contains("libcurl"), "kioskd links libcurl: \(needed.text)")
        // GnuTLS too, when the config has vnc.tls.
        XCTAssertFalse(needed.text.contains("libgnutls"), "kioskd links GnuTLS: \(needed.text)")
        for library in ["libdrm2", "libcairo2", "libpango-1.0-0", "systemd", "libgstreamer1.0-0",
                        "libgstreamer-plugins-base1.0-0", "gstreamer1.0-plugins-base", "gstreamer1.0-plugins-good", "libsqlite3-0", "libcurl4",
                        "libgnutls30"] {
            XCTAssertTrue(depends.contains(library), "\(depends) names \(library)")
        }
        // systemd's protocol is spoken directly: nothing links libsystemd.
        XCTAssertFalse(depends.contains("libsystemd0"), "\(depends) names libsystemd0")
        // libc6 at least at the newest glibc symbol version the binaries name, 2.36 for packed relocations.
        var glibc = (0, 0)
        for binary in ["kioskd", "kioskctl"] {
            let versions = try runTool("/usr/bin/readelf", ["-V", "--wide", KioskdProcess.productsDirectory.appendingPathComponent(binary).path])
            XCTAssertEqual(versions.status, 0, versions.text)
            for match in versions.text.matches(of: /GLIBC_(\d+)\.(\d+)/) {
                if let major = Int(match.1), let minor = Int(match.2), (major, minor) > glibc { glibc = (major, minor) }
            }
            if versions.text.contains("GLIBC_ABI_DT_RELR"), (2, 36) > glibc { glibc = (2, 36) }
        }
        XCTAssertGreaterThan(glibc.0, 0, "the binaries name a glibc version")
        XCTAssertTrue(depends.contains("libc6 (>= \(glibc.0).\(glibc.1))"), "\(depends) asks for glibc \(glibc.0).\(glibc.1)")
        let conffiles = try runTool("/usr/bin/dpkg-deb", ["-I", deb, "conffiles"])
        XCTAssertEqual(conffiles.text, "/etc/kioskd/kioskd.yaml\n")
        let postinst = try runTool("/usr/bin/dpkg-deb", ["-I", deb, "postinst"])
        XCTAssertTrue(postinst.text.contains("systemd-sysusers /usr/lib/sysusers.d/kioskd.conf"), postinst.text)
        XCTAssertTrue(postinst.text.contains("enable kioskd.socket"), postinst.text)
        XCTAssertTrue(postinst.text.contains("systemd-tmpfiles --create /usr/lib/tmpfiles.d/kioskd.conf"), postinst.text)

        // Every override in the package says why (a comment line above it), and nothing else is reported.
        let lintian = try runTool("/usr/bin/lintian", ["--fail-on", "error,warning", deb], timeout: 300)
        XCTAssertEqual(lintian.status, 0, lintian.text)
        XCTAssertFalse(lintian.text.contains("E: ") || lintian.text.contains("W: "), lintian.text)

        // Unpacked, the binary finds its scenes under <prefix>/share/kioskd and the conffile checks ok.
        let root = out.appendingPathComponent("root")
        XCTAssertEqual(try runTool("/usr/bin/dpkg-deb", ["-x", deb, root.path]).status, 0)
        let installed = root.appendingPathComponent("usr/bin/kioskd").path
        let run = try runTool(installed, ["run", "--backend", "headless", "--mode", "320x240@60", "--scene", "default",
                                          "--frames", "2", "--socket", "none", "--config", root.appendingPathComponent("etc/kioskd/kioskd.yaml").path])
        XCTAssertEqual(run.status, 0, run.text)
        // kioskd finds its prefix from /proc/self/exe, which has no symlinks in it (.build/debug is one).
        XCTAssertTrue(run.text.contains("scene \(root.resolvingSymlinksInPath().path)/usr/share/kioskd/scenes/dashboard.yaml"), run.text)
        let check = try runTool(installed, ["check-config", root.appendingPathComponent("etc/kioskd/kioskd.yaml").path])
        XCTAssertEqual(check.text, "ok\n")
    }
}
