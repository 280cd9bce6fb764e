// A Swift task's async functions, one definition for `qtrace stats` (TaskStats) and the report.
import QTraceFormat

extension TraceModel {
    /// The codes a task's jobs resumed (indexes into `codes`), distinct, in job order. A task's
    /// first job enters through a reabstraction thunk: its async functions are what follows.
    public func taskFunctionCodes(_ t: Int) -> [Int] {
        var out: [Int] = []
        var seen = Set<Int>()
        for i in tasks[t].jobs {
            guard let s = items[i].site, let c = sites[s].codeIndex, !codes[c].name.contains("thunk"),
                  seen.insert(c).inserted else { continue }
            out.append(c)
        }
        return out
    }
}
