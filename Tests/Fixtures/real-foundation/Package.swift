// swift-tools-version:5.9
// A Foundation program recorded by Tests/BrowserTests/test_real_programs.py (see
// docs/real-programs.md): OperationQueue with dependencies, URLSession, a RunLoop Timer.
import PackageDescription

let package = Package(
    name: "real-foundation",
    targets: [.executableTarget(name: "foundation-workload")]
)
