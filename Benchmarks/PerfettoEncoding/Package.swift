// swift-tools-version:6.0
// The Perfetto encoding benchmark: qtrace's hand-written protobuf writer (ProtoBuffer, linked
// from QTraceExport of the qtrace package two levels up: the encoder the export runs) against
// apple/swift-protobuf's generated messages for the same packets
// (Sources/bench-perfetto-encoding/perfetto_subset.pb.swift, generated once from
// protos/perfetto_subset.proto and committed). A package of its own, so that qtrace's build and
// CI never compile swift-protobuf. Run: scripts/bench-perfetto-encoding.sh
import PackageDescription

let package = Package(
    name: "PerfettoEncoding",
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(name: "qtrace", path: "../.."),
    ],
    targets: [
        .executableTarget(
            name: "bench-perfetto-encoding",
            dependencies: [
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "QTraceExport", package: "qtrace"),
            ]
        ),
    ]
)
