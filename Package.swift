// swift-tools-version:6.1
import PackageDescription

// System libraries come in through pkg-config; each shim header holds only #includes.
func systemLibrary(_ name: String, pkgConfig: String, apt: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([apt])])
}

// Release builds of the two programs link with lld and pack their relative relocations (RELR, glibc 2.36): a static
// release kioskd carried 2 MB of RELA relocations, which the dynamic loader reads whole at every start, and measured
// 1.7 to 2.1 MB lower peak RSS at 800x480 without them. They export no symbols (nothing loads them by name: 11,000
// names made an 860 KB dynamic symbol table the loader searched at each lookup), and record only the libraries they
// call into: GStreamer, opened when a video plays (GstLibrary.h), is not loaded at start. kioskd's release link places the
// functions its startup runs first and together (scripts/kioskd.order, made by scripts/link-order): a page of code
// is mapped with its 64 KiB neighbourhood, and spread over 18 MB of text they kept about 10 MB resident
// (docs/design.md, "The process"). lld ships with the Swift toolchain; debug and test builds keep the default link.
let releaseLink: [LinkerSetting] = [
    .unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic",
                  "-Xlinker", "--as-needed"],
                 .when(configuration: .release)),
]
let kioskdReleaseLink: [LinkerSetting] = releaseLink + [
    .unsafeFlags(["-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/scripts/kioskd.order",
                  "-Xlinker", "--no-warn-symbol-ordering",
                  "-L", "\(Context.packageDirectory)/scripts/static-libstdc++"], .when(configuration: .release)),
]

/// Where GStreamer's headers are, for every target that sees the CGStreamer module (Swift through the Clang importer).
let gstreamerHeaders = ["-I/usr/include/gstreamer-1.0"]

let package = Package(
    name: "kioskd",
    products: [
        .executable(name: "kioskd", targets: ["kioskd"]),
        .executable(name: "kioskctl", targets: ["kioskctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
    ],
    targets: [
        systemLibrary("CDRM", pkgConfig: "libdrm", apt: "libdrm-dev"),
        systemLibrary("CCairo", pkgConfig: "cairo", apt: "libcairo2-dev"),
        systemLibrary("CPango", pkgConfig: "pangocairo", apt: "libpango1.0-dev"),
        systemLibrary("CInput", pkgConfig: "libinput", apt: "libinput-dev"),
        systemLibrary("CUdev", pkgConfig: "libudev", apt: "libudev-dev"),
        systemLibrary("CEvdev", pkgConfig: "libevdev", apt: "libevdev-dev"),
        systemLibrary("CQREncode", pkgConfig: "libqrencode", apt: "libqrencode-dev"),
        systemLibrary("CJpeg", pkgConfig: "libjpeg", apt: "libjpeg62-turbo-dev"),
        systemLibrary("CPng", pkgConfig: "libpng", apt: "libpng-dev"),
        // zlib: the ZRLE encoding of the VNC server (KioskRemote) compresses its rectangles with it.
        systemLibrary("CZlib", pkgConfig: "zlib", apt: "zlib1g-dev"),
        // Headers only: libmosquitto, and OpenSSL with it, is loaded with dlopen by CKioskMosquitto when the first
        // MQTT client is made, so a kiosk without `mqtt:` never maps them.
        .systemLibrary(name: "CMosquitto", providers: [.apt(["libmosquitto-dev"])]),
        // Proof of play's store: SQLite in WAL mode (KioskPlays).
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // gstreamer-app-1.0 brings gstreamer-1.0 and the base libraries; the module map links gstvideo-1.0 beside it.
        // GStreamer's headers only: its libraries are opened with dlopen when a video plays (CKioskVideo's
        // GstLibrary.h), so they are neither linked nor named by pkg-config, whose --libs would link them. The
        // include folder is GStreamer's on every Debian architecture (gstreamerHeaders, below); GLib's comes from CPango.
        .systemLibrary(name: "CGStreamer", providers: [.apt(["libgstreamer-plugins-base1.0-dev"])]),
        // Headers only: libcurl (OpenSSL flavour), and OpenSSL, Kerberos, LDAP and more with it, is loaded with dlopen by
        // CKioskCurl when the first fetcher is made, so a kiosk whose scenes fetch nothing never maps them. KioskFetch is
        // the only module that imports it.
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // The libcurl functions KioskFetch calls, forwarding to the loaded library; typed wrappers of the variadic ones.
        .target(name: "CKioskCurl", dependencies: ["CCurl"]),
        .target(name: "CKioskShims", dependencies: ["CDRM"]),
        .target(name: "CKioskSys"),
        // GObject's variadic property setters and GStreamer's cast macros, which Swift cannot call.
        .target(name: "CKioskVideo", dependencies: ["CGStreamer", "CPango"], cSettings: [.unsafeFlags(gstreamerHeaders)]),
        // GStreamer pipelines into decoded frames; the only module that imports GStreamer.
        .target(name: "KioskVideo", dependencies: ["KioskCore", "CGStreamer", "CPango", "CKioskVideo", .product(name: "Logging", package: "swift-log")]),
        // libjpeg reports errors by longjmp, which Swift cannot catch: the decoder and encoder live in C.
        .target(name: "CKioskJpeg", dependencies: ["CJpeg"]),
        // libpng too; its decoder streams rows and scales them down as they come, so memory follows the size shown.
        .target(name: "CKioskPng", dependencies: ["CPng"]),
        // librsvg is loaded with dlopen when a scene first draws an SVG: linked, it costs every process 4 MB.
        .target(name: "CKioskSvg"),
        // WPE WebKit is loaded with dlopen at the first `web` widget, and runs on a thread of its own; nothing links it.
        .target(name: "CKioskWeb"),
        // Web pages into frames and their damage; the only module that imports CKioskWeb.
        .target(name: "KioskWeb", dependencies: ["KioskCore", "CKioskWeb"]),
        .target(name: "CKioskMosquitto"),
        .target(
            name: "KioskCore",
            dependencies: [
                "CKioskSys",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
        .target(
            name: "KioskDisplay",
            dependencies: [
                "KioskCore", "CDRM", "CKioskShims", "CUdev",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "KioskRender",
            dependencies: [
                "KioskCore", "CKioskSys", "CCairo", "CPango", "CQREncode", "CKioskSvg", "CJpeg", "CKioskJpeg", "CPng", "CKioskPng",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "KioskInput",
            dependencies: ["KioskCore", "CInput", "CUdev", "CEvdev", .product(name: "Logging", package: "swift-log")]
        ),
        .target(name: "KioskScene", dependencies: ["KioskCore", .product(name: "Yams", package: "Yams")]),
        // Content from the network: libcurl's multi interface on a worker thread, the crash-safe asset cache, and
        // the scenes' HTTP and RSS data sources.
        .target(name: "KioskFetch", dependencies: ["KioskCore", "KioskScene", "CCurl", "CKioskCurl", .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "KioskRuntime",
            dependencies: ["KioskCore", "KioskRender", "KioskScene", .product(name: "Logging", package: "swift-log")],
            // The example scenes, the default one among them; `scenes/` at the top of the repository links here.
            resources: [.copy("Scenes")]
        ),
        // Not product code: what `kioskd bench` measures against (the naive renderer) and its scenarios.
        .target(
            name: "KioskBench",
            dependencies: ["KioskCore", "KioskDisplay", "KioskRender", "KioskRuntime", "KioskRemote", "CCairo",
                           .product(name: "Logging", package: "swift-log")],
            resources: [.copy("Scenes")]
        ),
        // A kiosk's assembly and product rules: its configuration resolved from the command line, the config file
        // and the board file (KioskConfiguration), and the `Kiosk` built from it (outputs, scenes, control commands,
        // idle policy, fleet state, page captures, the service), which `kioskd run` runs.
        .target(
            name: "KioskApp",
            dependencies: ["KioskCore", "KioskDisplay", "KioskRender", "KioskControl", "KioskScene", "KioskRuntime", "KioskService", "KioskFleet",
                           "KioskInput", "KioskVideo", "KioskPlays", "KioskFetch", "KioskWeb", "KioskRemote",
                           .product(name: "Logging", package: "swift-log"), .product(name: "Yams", package: "Yams")]
        ),
        .executableTarget(
            name: "kioskd",
            dependencies: [
                "KioskApp", "KioskCore", "KioskDisplay", "KioskRender", "KioskControl", "KioskScene", "KioskRuntime", "KioskBench", "KioskService", "KioskFleet", "KioskInput", "KioskVideo",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: kioskdReleaseLink
        ),
        // systemd: notify, the watchdog, socket activation, each spoken directly (SystemdProtocol), with no libsystemd.
        .target(name: "KioskService", dependencies: ["KioskCore", .product(name: "Logging", package: "swift-log")]),
        // GnuTLS, loaded with dlopen only when `vnc.tls` is configured: VeNCrypt's TLS over memory buffers.
        .target(name: "CKioskTLS"),
        // The remote view: an RFB (VNC) server on the main loop serving each output's composed frame.
        .target(name: "KioskRemote", dependencies: ["KioskCore", "CZlib", "CKioskTLS", .product(name: "Logging", package: "swift-log")]),
        .target(
            name: "KioskControl",
            dependencies: ["KioskCore", .product(name: "Logging", package: "swift-log")]
        ),
        // MQTT: libmosquitto driven by the main loop, answering through the control socket's command registry.
        .target(
            name: "KioskPlays",
            dependencies: ["KioskCore", "CSQLite", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "KioskFleet",
            dependencies: ["KioskCore", "KioskControl", "KioskScene", "CMosquitto", "CKioskMosquitto",
                           .product(name: "Yams", package: "Yams"), .product(name: "Logging", package: "swift-log")]
        ),
        .executableTarget(
            name: "kioskctl",
            dependencies: ["KioskControl", "KioskCore", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            linkerSettings: releaseLink
        ),
        .target(name: "KioskTestSupport", dependencies: ["KioskCore", "KioskDisplay", "CDRM"], path: "Tests/KioskTestSupport"),
        // Golden-image comparison: test code that needs Cairo, kept out of the Cairo-free KioskTestSupport.
        .target(name: "KioskRenderTestSupport", dependencies: ["KioskCore", "KioskRender", "CCairo", "CKioskJpeg"],
                path: "Tests/KioskRenderTestSupport"),
        .testTarget(name: "KioskCoreTests", dependencies: ["KioskCore", "KioskDisplay", "KioskTestSupport"]),
        .testTarget(name: "KioskAppTests", dependencies: ["KioskApp", "KioskRender", "KioskScene", "KioskDisplay", "KioskInput", "KioskControl", "KioskRuntime", "KioskCore",
                                                    "KioskFleet", "KioskTestSupport", "KioskRenderTestSupport"]),
        .testTarget(name: "KioskRuntimeTests", dependencies: ["KioskRenderTestSupport", "KioskRuntime", "KioskScene", "KioskRender", "KioskCore", "KioskDisplay", "KioskTestSupport"],
                    exclude: ["Golden"]),
        .testTarget(name: "KioskInputTests", dependencies: ["KioskInput", "KioskCore", "KioskTestSupport", "KioskDisplay", "KioskRender", "KioskRuntime", "KioskBench", "CDRM"]),
        .testTarget(name: "KioskSceneTests", dependencies: ["KioskScene", "KioskCore", "KioskTestSupport"]),
        .testTarget(name: "KioskServiceTests", dependencies: ["KioskService", "KioskCore", "KioskTestSupport"]),
        .testTarget(name: "KioskRemoteTests", dependencies: ["KioskRemote", "KioskCore", "CZlib", "KioskTestSupport"]),
        .testTarget(name: "KioskFleetTests", dependencies: ["KioskFleet", "KioskScene", "KioskControl", "KioskCore", "KioskTestSupport"]),
        .testTarget(name: "KioskFetchTests", dependencies: ["KioskFetch", "KioskScene", "KioskCore", "KioskTestSupport"]),
        .testTarget(name: "KioskPlaysTests", dependencies: ["KioskPlays", "KioskCore", "KioskTestSupport"]),
        .testTarget(name: "KioskControlTests", dependencies: ["KioskControl", "KioskCore", "KioskTestSupport"]),
        .testTarget(name: "KioskdTests", dependencies: ["KioskTestSupport", "KioskRender", "KioskScene",
                                                   "KioskRenderTestSupport", "KioskCore", "KioskDisplay", "KioskRuntime", "KioskPlays", "CDRM"]),
        .testTarget(name: "KioskBenchTests", dependencies: ["KioskBench", "KioskCore", "KioskRender", "KioskRenderTestSupport"]),
        .testTarget(name: "KioskDisplayTests", dependencies: ["KioskRenderTestSupport", "KioskCore", "KioskDisplay", "KioskRender", "KioskTestSupport",
                                                          "KioskRuntime", "KioskScene", "KioskVideo", "CDRM"]),
        .testTarget(
            name: "KioskRenderTests", dependencies: ["KioskRenderTestSupport", "KioskTestSupport", "KioskCore", "KioskRender", "KioskBench", "CKioskJpeg", "CQREncode", "CPango"],
            // Golden PNGs are read from the source tree by path (see GoldenImage.swift), not bundled.
            exclude: ["Golden"]
        ),
        .testTarget(name: "KioskWebTests", dependencies: ["KioskWeb", "KioskApp", "KioskRuntime", "KioskScene", "KioskCore", "KioskDisplay", "KioskTestSupport"]),
        .testTarget(name: "KioskVideoTests", dependencies: ["KioskVideo", "CKioskVideo", "KioskCore", "KioskTestSupport"]),
    ]
)

// Release objects hold each function in its own section, so that kioskd's link can place the ones its startup runs
// together (scripts/kioskd.order); without it a file's private functions move as one block.
for target in package.targets where target.type == .regular || target.type == .executable {
    target.swiftSettings = (target.swiftSettings ?? [])
        + [.unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release))]
}
// Every Swift target that sees KioskVideo's interface imports CGStreamer's headers through the Clang importer.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(gstreamerHeaders.flatMap { ["-Xcc", $0] })]
}
