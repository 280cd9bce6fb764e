#!/usr/bin/env bash
# The Perfetto encoder benchmark (docs/perfetto.md, "Why a hand-written encoder"): qtrace's
# ProtoBuffer against apple/swift-protobuf's generated messages, the same packets, alternating
# rounds; prints the median ns per work item of each and their ratio.
#   scripts/bench-perfetto-encoding.sh [ITEMS] [ROUNDS]
# It builds Benchmarks/PerfettoEncoding (its own package: qtrace's build never compiles
# swift-protobuf). The generated perfetto_subset.pb.swift is committed; to regenerate it after
# changing protos/perfetto_subset.proto, build swift-protobuf's plugin once outside the repo:
#   git clone https://github.com/apple/swift-protobuf /tmp/swift-protobuf && cd /tmp/swift-protobuf \
#     && git checkout 1.39.0 && swift build --product protoc-gen-swift
#   cd Benchmarks/PerfettoEncoding && protoc --plugin=protoc-gen-swift=/tmp/swift-protobuf/.build/debug/protoc-gen-swift \
#     --swift_out=Sources/bench-perfetto-encoding --proto_path=protos protos/perfetto_subset.proto
set -euo pipefail
cd "$(dirname "$0")/../Benchmarks/PerfettoEncoding"
swift build -c release >/dev/null
./.build/release/bench-perfetto-encoding "${1:-1000000}" "${2:-5}"
