// swift-tools-version:5.9
// A Hummingbird 2 server written as people write them, recorded under a bounded loopback load
// by Tests/BrowserTests/test_swift_concurrency_server.py (docs/swift-concurrency.md). A package
// of its own: qtrace's build does not pull in Hummingbird. Offline, the git configuration maps
// the GitHub URL to a local mirror.
import PackageDescription

let package = Package(
    name: "real-hummingbird-server",
    platforms: [.macOS(.v14)],
    dependencies: [.package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1")],
    targets: [
        .executableTarget(
            name: "hb-server",
            dependencies: [.product(name: "Hummingbird", package: "hummingbird")]
        ),
    ]
)
