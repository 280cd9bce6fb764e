// swift-tools-version:5.9
// Servers recorded by the browser tests under a bounded loopback load, in one package so that
// SwiftNIO is built once for both (docs/real-programs.md, docs/swift-concurrency.md): a small
// HTTP server on SwiftNIO (Tests/BrowserTests/test_real_programs.py) and a Hummingbird 2
// server written as people write them (Tests/BrowserTests/test_swift_concurrency_server.py).
// A package of its own: qtrace's build does not pull them in. Offline, the git configuration
// maps the GitHub URLs to local mirrors.
import PackageDescription

let package = Package(
    name: "real-nio-server",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
    ],
    targets: [
        .executableTarget(
            name: "nio-http-server",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .executableTarget(
            name: "hb-server",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")]
        ),
    ]
)
