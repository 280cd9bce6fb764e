import ArgumentParser

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "(not yet implemented)")
    func run() throws { throw ValidationError("Stats is not implemented yet") }
}
