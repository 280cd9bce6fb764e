// How the embedded seeds of Fuzz/corpus were made from real recordings: a real trace has a
// 64 KiB chunk per thread, mostly zeros, which makes every fuzzing run slow. Its first events
// are written again with 4096-byte chunks (`qtrace-fuzz seed IN OUT`).
import QTraceFormat

public enum SeedCorpus {
    /// Writes the first `maxEvents` events of `input` (with its header facts) to `output`.
    public static func repack(_ input: String, to output: String, maxEvents: Int = 400) throws {
        let file = try TraceFile(path: input)
        let events = Array(file.readAllEvents().prefix(maxEvents))
        // A 4096-byte string record needs a bigger chunk.
        let longest = events.map { $0.string?.utf8.count ?? 0 }.max() ?? 0
        let writer = try TraceWriter(path: output, pid: file.header.pid, ncpu: Int(file.header.ncpu), mainTid: file.header.mainTid,
                                     chunkSize: longest > 3000 ? 8192 : 4096, initMonoNs: file.header.initMonoNs)
        writer.header.mainQueue = file.header.mainQueue
        writer.header.initRealtimeNs = file.header.initRealtimeNs
        writer.header.shimOverheadNs = file.header.shimOverheadNs
        writer.header.executablePath = file.header.executablePath
        writer.header.commandLine = file.header.commandLine
        writer.header.versionMinor = file.header.versionMinor
        for thread in file.threads { if let name = thread.name { writer.setThreadName(name, tid: thread.tid) } }
        try writer.append(contentsOf: events)
        try writer.finish()
    }
}
