// qtrace-fuzz: the fuzzers of docs/fuzzing.md. Built by `make fuzz` with `-sanitize=fuzzer
// -DQTRACE_LIBFUZZER`, libFuzzer owns `main` and calls the entry points below; in the normal
// build (no libFuzzer) the same binary replays inputs: `qtrace-fuzz TARGET FILE|DIR...`.
// The target (embedded, ctf, perf) comes from $QTRACE_FUZZ_TARGET under libFuzzer.
import Foundation
import QTraceFuzzing

/// The target of this process: chosen once, before libFuzzer runs the first input.
nonisolated(unsafe) var fuzzTarget = FuzzTarget.embedded

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<Int32>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> Int32 {
    let name = ProcessInfo.processInfo.environment["QTRACE_FUZZ_TARGET"] ?? "embedded"
    guard let target = FuzzTarget(rawValue: name) else {
        FileHandle.standardError.write(Data("qtrace-fuzz: error: unknown QTRACE_FUZZ_TARGET '\(name)' (embedded, ctf, perf)\n".utf8))
        exit(2)
    }
    fuzzTarget = target
    // libFuzzer's fork mode runs each job in a new process: each removes its scratch files.
    atexit { FuzzTarget.removeScratch() }
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    fuzzTarget.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}

#if QTRACE_LIBFUZZER
@_silgen_name("LLVMFuzzerRunDriver")
func libFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                        _ body: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

/// SwiftPM links an executable's `main` to this symbol (the module's entry point on Linux):
/// it hands over to libFuzzer's driver, as libFuzzer's own `main` would.
@_cdecl("qtrace_fuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var argc = argc
    var argv = argv
    return libFuzzerRunDriver(&argc, &argv) { data, size in fuzzerTestOneInput(data, size) }
}

@_silgen_name("LLVMFuzzerMutate")
func libFuzzerMutate(_ data: UnsafeMutablePointer<UInt8>?, _ size: Int, _ maxSize: Int) -> Int

/// Four mutations in five rewrite fields of valid records; the fifth is libFuzzer's own
/// byte-level mutation (it also covers inputs whose framing is already broken).
@_cdecl("LLVMFuzzerCustomMutator")
public func fuzzerCustomMutator(_ data: UnsafeMutablePointer<UInt8>?, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    guard let data, seed % 5 != 0 else { return libFuzzerMutate(data, size, maxSize) }
    var bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard StructuredMutator.mutate(fuzzTarget, &bytes, maxSize: maxSize, seed: seed) else {
        return libFuzzerMutate(data, size, maxSize)
    }
    bytes.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: $0.count) }
    return bytes.count
}
#else
/// Replay: every file given (directories: their files) through the target, then "ok".
@main
enum Replay {
    static func main() {
        let args = Array(CommandLine.arguments.dropFirst())
        if args.count == 3 && args[0] == "seed" { return seed(args[1], args[2]) }
        if args.count == 3 && args[0] == "pack-ctf" { return packCTF(args[1], args[2]) }
        guard let name = args.first, let target = FuzzTarget(rawValue: name), args.count >= 2 else {
            FileHandle.standardError.write(Data("usage: qtrace-fuzz embedded|ctf|perf FILE|DIR...\n".utf8))
            exit(2)
        }
        defer { FuzzTarget.removeScratch() }
        var count = 0
        for path in args.dropFirst() {
            for file in inputFiles(path) {
                guard let data = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("qtrace-fuzz: error: cannot read \(file)\n".utf8))
                    exit(2)
                }
                target.run(Array(data))
                count += 1
            }
        }
        print("qtrace-fuzz: \(count) inputs replayed, ok")
    }

    /// `qtrace-fuzz seed IN.qtrace OUT`: an embedded seed from a real recording (SeedCorpus).
    static func seed(_ input: String, _ output: String) {
        do {
            try SeedCorpus.repack(input, to: output)
        } catch {
            FileHandle.standardError.write(Data("qtrace-fuzz: error: \(error)\n".utf8))
            exit(2)
        }
    }

    /// `qtrace-fuzz pack-ctf DIR OUT`: a CTF trace directory as one fuzzer input (CTFInput).
    static func packCTF(_ directory: String, _ output: String) {
        do {
            try Data(CTFInput(directory: directory).packed).write(to: URL(fileURLWithPath: output))
        } catch {
            FileHandle.standardError.write(Data("qtrace-fuzz: error: \(error)\n".utf8))
            exit(2)
        }
    }

    static func inputFiles(_ path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { path + "/" + $0 }
    }
}
#endif
