// `qtrace export --format folded`: CPU samples as folded stacks (docs/cpu.md), the format of
// flamegraph.pl and speedscope: `root;outer;...;leaf COUNT` per line.
import ArgumentParser
import Foundation
import QTraceAnalysis

extension Export {
    /// Each process analysed (symbolized) in turn; with several, each stack's root names its
    /// process too.
    func exportFolded(to path: String) throws {
        let inputs = try TraceInputs.open(traces, command: "export")
        defer { inputs.removeTemporaryFiles() }
        var lines = "", samples = 0
        for process in inputs.processes {
            let result = try analyseTrace(process, command: "export")
            guard let profile = CPUProfile.build(result.model) else { continue }
            let prefix = inputs.processes.count > 1
                ? CPUProfile.foldedName("\(result.model.info.pid) \(ProcessOverview.programName(executable: result.model.info.executable, commandLine: result.model.info.commandLine))") + ";" : ""
            for (stack, count) in profile.foldedStacks(result.model) { lines += prefix + stack + " \(count)\n" }
            samples += profile.sampleCount
        }
        guard samples > 0 else {
            throw fail("export", "no CPU samples in \(traces.joined(separator: ", ")): record with qtrace record --cpu -- PROGRAM")
        }
        try writeOutput(lines, to: path, command: "export")
        ProgressLine.shared.finish()
        if let shown = announcedPath(path) { writeStderr("qtrace: exported \(samples) samples as folded stacks: \(shown)\n") }
    }
}
