// `qtrace export --format folded`: CPU samples as folded stacks (docs/cpu.md), the format of
// flamegraph.pl and speedscope: `root;outer;...;leaf COUNT` per line.
import QTraceAnalysis

/// The folded stacks of one or more processes, added one analysed (symbolized) model at a
/// time so that each model can be released before the next is analysed.
public struct FoldedStacks {
    /// One line per distinct stack of each process, in the order added.
    public private(set) var text = ""
    public private(set) var sampleCount = 0
    /// With several processes, each stack's root names its process too.
    private let namesProcesses: Bool

    public init(namesProcesses: Bool) { self.namesProcesses = namesProcesses }

    /// Adds `model`'s samples (none when it was recorded without --cpu).
    public mutating func add(_ model: TraceModel) {
        guard let profile = CPUProfile.build(model) else { return }
        let prefix = namesProcesses
            ? CPUProfile.foldedName("\(model.info.pid) \(ProcessOverview.programName(executable: model.info.executable, commandLine: model.info.commandLine))") + ";" : ""
        for (stack, count) in profile.foldedStacks(model) { text += prefix + stack + " \(count)\n" }
        sampleCount += profile.sampleCount
    }
}
