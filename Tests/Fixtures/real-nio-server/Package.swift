// swift-tools-version:5.9
// A small HTTP server on SwiftNIO, recorded by Tests/BrowserTests/test_real_programs.py (see
// docs/real-programs.md). A package of its own: qtrace's build does not pull in SwiftNIO.
// Offline, the git configuration maps the GitHub URL to a local mirror.
import PackageDescription

let package = Package(
    name: "real-nio-server",
    dependencies: [.package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0")],
    targets: [
        .executableTarget(
            name: "nio-http-server",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
    ]
)
