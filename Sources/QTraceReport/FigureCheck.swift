// The viewer renders the analysis' figures and computes none of its own (docs/architecture.md,
// the one-number rule): a report input without them is a bug upstream, refused here rather
// than shown with missing numbers.
import QTraceViewModel

/// Why an input cannot become a report: a queue or thread without the analysis' figures, or
/// queues without the analysis' target-queue forest.
public struct MissingFiguresError: Error, CustomStringConvertible {
    public let description: String
}

enum FigureCheck {
    /// Throws for the first queue or thread whose figures are unset (-1), or for queues with
    /// no forest (`ReportInput.queueTree`).
    static func check(_ input: ReportInput) throws {
        if let q = input.queues.first(where: { $0.items < 0 || $0.busyNs < 0 || !($0.busyShare >= 0) }) {
            throw MissingFiguresError(description: "report input: queue \(q.index) has no items, busy time or share from the analysis")
        }
        if let t = input.threads.first(where: { $0.items < 0 || $0.busyNs < 0 || $0.blockedNs < 0 }) {
            throw MissingFiguresError(description: "report input: thread \(t.index) has no items, busy or blocked time from the analysis")
        }
        if !input.queues.isEmpty && input.queueTree.isEmpty {
            throw MissingFiguresError(description: "report input: \(input.queues.count) queues but no target-queue tree from the analysis")
        }
    }
}
