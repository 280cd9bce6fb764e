import ArgumentParser

struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "(not yet implemented)")
    func run() throws { throw ValidationError("Diff is not implemented yet") }
}
