// swift-tools-version:6.0
// qtrace: a tracing profiler and visualizer for Grand Central Dispatch on Linux.
import PackageDescription
import Foundation

/// `make fuzz` builds with QTRACE_LIBFUZZER=1 (in its own scratch path): the modules the fuzzers
/// run are instrumented for libFuzzer, and qtrace-fuzz links it (docs/fuzzing.md). Build tools
/// such as the viewer embedder stay plain: libFuzzer brings its own `main`.
let libFuzzer = ProcessInfo.processInfo.environment["QTRACE_LIBFUZZER"] == "1"
let fuzzed: [SwiftSetting] = libFuzzer ? [.unsafeFlags(["-sanitize=fuzzer"]), .define("QTRACE_LIBFUZZER")] : []

let package = Package(
    name: "qtrace",
    products: [
        .executable(name: "qtrace", targets: ["qtrace"]),
        // Apps that prefer linking to preloading: `import QTrace`.
        .library(name: "QTrace", targets: ["QTrace"]),
        .library(name: "QTraceFormat", targets: ["QTraceFormat"]),
        .library(name: "QTraceAnalysis", targets: ["QTraceAnalysis"]),
        // Benchmarks/PerfettoEncoding measures its ProtoBuffer encoder.
        .library(name: "QTraceExport", targets: ["QTraceExport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
    ],
    targets: [
        // The interposer and embedded recorder. Pure C, no Swift runtime: the same sources are
        // built by the Makefile into libqtrace-shim.so for LD_PRELOAD, and linked into apps
        // through the QTrace target.
        .target(
            name: "CQTraceShim",
            linkerSettings: [.linkedLibrary("dl"), .linkedLibrary("pthread")]
        ),
        // Small C helpers for the Swift side (TSC, process spawning) without interposing.
        .target(name: "CQTraceSys"),
        // Reading (and, for tests, writing) the embedded trace format. Its EventType, record
        // layouts and value enums are generated at build time from the record list,
        // Sources/CQTraceShim/qtrace_records.h, by the GenerateRecordSchema plugin (into the
        // build directory: nothing generated is committed).
        .target(name: "QTraceFormat", dependencies: ["CQTraceSys"], swiftSettings: fuzzed, plugins: ["GenerateRecordSchema"]),
        .plugin(name: "GenerateRecordSchema", capability: .buildTool(), dependencies: ["qtrace-generate-schema"]),
        .executableTarget(name: "qtrace-generate-schema"),
        // Pure, deterministic analysis: model, statistics and diagnostics.
        .target(
            name: "QTraceAnalysis",
            dependencies: ["QTraceFormat"],
            swiftSettings: fuzzed
        ),
        // Terminal rendering of the analysis: the tables of `qtrace stats`, `diff` and `check`.
        .target(name: "QTraceText", dependencies: ["QTraceAnalysis", "QTraceFormat"], swiftSettings: fuzzed),
        // The view model: ReportInput, what the report's viewer and the exports show (gathered
        // from the analysis, merged across processes), and the output plumbing both write through.
        .target(
            name: "QTraceViewModel", dependencies: ["QTraceAnalysis", "QTraceFormat", "CZlib"], swiftSettings: fuzzed
        ),
        // The static HTML report. Its viewer/ (HTML, JS, CSS) is embedded at build time by the
        // EmbedViewer plugin (ViewerAssets.swift, written into the build directory): nothing
        // generated is committed. viewer/ lives in the target so that adding or removing a file
        // re-plans the build (SwiftPM watches target directories, not the package root).
        .target(
            name: "QTraceReport", dependencies: ["QTraceViewModel", "QTraceAnalysis", "QTraceFormat"],
            exclude: ["viewer"], swiftSettings: fuzzed, plugins: ["EmbedViewer"]
        ),
        .plugin(name: "EmbedViewer", capability: .buildTool(), dependencies: ["qtrace-embed-viewer"]),
        .executableTarget(name: "qtrace-embed-viewer"),
        // `qtrace export`: every format another tool reads. Perfetto's protobuf and Chrome's JSON
        // (from the view model), folded stacks of the CPU samples and the fleet's gzip CSV tables
        // (from the analysis; docs/fleet.md).
        .target(
            name: "QTraceExport", dependencies: ["QTraceViewModel", "QTraceAnalysis", "QTraceFormat", "CZlib"],
            swiftSettings: fuzzed
        ),
        // zlib (Debian zlib1g-dev) for the report's compressed data columns.
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        // libbabeltrace2 (Debian libbabeltrace2-dev) for reading LTTng's CTF traces.
        .systemLibrary(name: "CBabeltrace2", path: "Sources/CBabeltrace2"),
        // Reading the `qtrace:*` events of an LTTng (CTF) trace into the same `Event`s.
        .target(name: "QTraceCTF", dependencies: ["QTraceFormat", "CBabeltrace2"], swiftSettings: fuzzed),
        // Kernel scheduling for `qtrace record --sched`: perf's sched events → SCHED_STATE records.
        .target(name: "QTraceSched", dependencies: ["QTraceFormat"], swiftSettings: fuzzed),
        // Offline symbolization of recorded code addresses (llvm-symbolizer, swift-demangle, build-id checks).
        .target(name: "QTraceSymbols"),
        // Annotation API for apps, and the linked-in recorder.
        .target(name: "QTrace", dependencies: ["CQTraceShim"]),
        // What the command line runs, below its argument parsing and printing: the program as a
        // child (ChildProcess), LTTng and perf sessions, flight-recorder rings found through /proc,
        // trace arguments (TraceInputs), analysis with symbols, and report generation. It throws
        // ArgumentParser's ValidationError and ExitCode, which the CLI prints unchanged.
        .target(
            name: "QTraceRecording",
            dependencies: [
                "QTraceFormat", "QTraceAnalysis", "QTraceViewModel", "QTraceReport", "QTraceCTF", "QTraceSched",
                "QTraceSymbols", "CQTraceSys", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The command line: swift-argument-parser commands and their output.
        .executableTarget(
            name: "qtrace",
            dependencies: [
                "QTraceRecording", "QTraceFormat", "QTraceAnalysis", "QTraceViewModel", "QTraceReport", "QTraceExport",
                "QTraceText", "CQTraceSys", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The gallery: one executable, one scenario per argument.
        .executableTarget(name: "qtrace-samples", path: "samples/Swift"),
        // Programs the end-to-end tests record: every traced API with known counts.
        .executableTarget(
            name: "qtrace-fixtures", dependencies: ["AsyncRouterKit"], path: "Tests/Fixtures/qtrace-fixtures",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // A library module for the fixtures' async stacks (its frames are not "the program"
        // under `--focus qtrace_fixtures`).
        .target(name: "AsyncRouterKit", path: "Tests/Fixtures/async-router-kit"),
        .executableTarget(
            name: "qtrace-linked-app", dependencies: ["QTrace"], path: "Tests/Fixtures/qtrace-linked-app",
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // The fuzzers (docs/fuzzing.md): targets and structure-aware mutators, and the binary
        // that runs them under libFuzzer (`make fuzz`) or replays inputs (normal build).
        .target(name: "QTraceFuzzing", dependencies: ["QTraceFormat", "QTraceAnalysis", "QTraceViewModel", "QTraceReport",
                                                      "QTraceExport", "QTraceCTF", "QTraceSched", "QTraceText"],
                swiftSettings: fuzzed),
        .executableTarget(name: "qtrace-fuzz", dependencies: ["QTraceFuzzing"], swiftSettings: fuzzed,
                          linkerSettings: libFuzzer ? [.unsafeFlags(["-sanitize=fuzzer"])] : []),
        .testTarget(name: "QTraceFuzzingTests", dependencies: ["QTraceFuzzing", "QTraceFormat"]),
        // The tests compare each C constant of the record list (CQTraceRecords: the header
        // alone, no shim linked in) with the Swift value generated from it.
        .testTarget(name: "QTraceFormatTests", dependencies: ["QTraceFormat", "CQTraceRecords"], plugins: ["GenerateRecordSchema"]),
        .systemLibrary(name: "CQTraceRecords", path: "Tests/CQTraceRecords"),
        // The hdrhistogram package: DurationRecorderTests compare the recorder's own layout with it.
        .testTarget(name: "QTraceAnalysisTests", dependencies: ["QTraceAnalysis", "QTraceFormat", "QTraceText",
                                                                "QTraceAnalysisTestSupport",
                                                                .product(name: "Histogram", package: "hdrhistogram-swift")]),
        // Synthetic event streams (TraceScript, SyntheticWorkload) for the analysis' tests and
        // the CLI's: test support, not part of the product.
        .target(name: "QTraceAnalysisTestSupport", dependencies: ["QTraceAnalysis", "QTraceFormat"],
                path: "Tests/QTraceAnalysisTestSupport"),
        // The end-to-end tests run the executables (qtrace, the fixtures, the samples) as
        // processes, never link them: `swift build --build-tests` builds every product.
        .testTarget(
            name: "QTraceRecordTests",
            dependencies: ["QTraceFormat", "QTraceAnalysis", "QTraceViewModel", "QTraceReport", "QTraceText"]
        ),
        // The recording library's tests, and the CLI's as a user runs it (the built qtrace binary).
        .testTarget(
            name: "QTraceRecordingTests",
            dependencies: ["QTraceRecording", "QTraceFormat", "QTraceAnalysis", "QTraceAnalysisTestSupport", "QTraceFuzzing"]
        ),
        .testTarget(name: "QTraceSchedTests", dependencies: ["QTraceSched", "QTraceAnalysis", "QTraceFormat"]),
        // Synthetic reports (known codes, tasks, hostile labels) for the report's tests and the
        // browser fixtures: test support, not part of the product.
        .target(name: "QTraceReportTestSupport", dependencies: ["QTraceViewModel", "QTraceAnalysis", "QTraceFormat"],
                path: "Tests/QTraceReportTestSupport"),
        .testTarget(name: "QTraceReportTests", dependencies: ["QTraceReport", "QTraceViewModel", "QTraceExport", "QTraceAnalysis",
                                                              "QTraceFormat", "QTraceReportTestSupport"]),
        .testTarget(name: "QTraceExportTests", dependencies: ["QTraceExport", "QTraceViewModel", "QTraceReportTestSupport", "CZlib"]),
        .testTarget(name: "QTraceSymbolsTests", dependencies: ["QTraceSymbols"]),
        .testTarget(name: "QTraceCTFTests", dependencies: ["QTraceCTF", "QTraceFormat", "QTraceViewModel", "QTraceReport",
                                                           "QTraceRecording"]),
    ]
)
