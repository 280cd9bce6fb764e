// How the exports (Chrome JSON, Perfetto) name processes and threads: the same for both, so
// a thread is one track with one name whichever file a user opens.
import QTraceViewModel

extension ReportInput {
    /// The traced processes; a single-process input built by hand may list none.
    var exportedProcesses: [ReportProcess] {
        processes.isEmpty ? [ReportProcess(pid: meta.pid, executable: meta.title)] : processes
    }

    /// The process (index into `exportedProcesses`) a thread belongs to.
    func exportedProcess(ofThread thread: Int) -> Int {
        guard threads.indices.contains(thread), exportedProcesses.indices.contains(threads[thread].process) else { return 0 }
        return threads[thread].process
    }

    /// A thread's id as the exports show it; index + 1 when the tid is unknown.
    func exportedTID(_ thread: Int) -> Int64 {
        guard threads.indices.contains(thread) else { return 0 }
        let t = threads[thread]
        return t.tid > 0 ? t.tid : Int64(thread + 1)
    }

    func exportedThreadName(_ thread: Int) -> String {
        let t = threads[thread]
        return t.name.isEmpty ? (t.kind == .main ? "main" : "thread \(t.tid)") : t.name
    }

    func exportedQueueLabel(_ queue: Int) -> String {
        queues.indices.contains(queue) ? queues[queue].label : "unknown queue"
    }
}

extension ReportBlockedInterval {
    /// "blocked: CAUSE OBJECT", the name of a blocked interval's slice.
    var exportedName: String { "blocked: " + cause.name + (objectLabel.isEmpty ? "" : " " + objectLabel) }
}
