// CPU samples in the report's header (traces recorded with `qtrace record --cpu`; docs/cpu.md):
// each queue's call tree, which the view model's ReportFlame carries.
import QTraceViewModel

extension ReportEncoder {
    /// The header's `cpuFlames`: per queue with samples, its call tree's columns (node 0 is
    /// the root; names index `cpuNames`).
    func cpuFlamesHeader() -> [(String, JSONValue)] {
        guard !input.cpuFlames.isEmpty else { return [] }
        var names: [String] = [], nameIndex: [String: Int] = [:]
        func index(_ name: String) -> Int {
            if let known = nameIndex[name] { return known }
            nameIndex[name] = names.count
            names.append(name)
            return names.count - 1
        }
        let flames: [JSONValue] = input.cpuFlames.map { flame in
            let t = flame.tree
            return .object([
                ("queue", .int(Int64(flame.queue))), ("item", .int(Int64(flame.item))), ("parent", .array(t.parent.map { .int(Int64($0)) })),
                ("name", .array(t.name.map { .int(Int64(index($0))) })), ("total", .array(t.total.map { .int(Int64($0)) })),
                ("self", .array(t.selfSamples.map { .int(Int64($0)) })), ("share", .array(t.share.map { .number($0) })),
            ])
        }
        return [("cpuFlames", .array(flames)), ("cpuNames", .array(names.map { .string($0) }))]
    }
}
