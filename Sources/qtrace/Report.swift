import ArgumentParser

struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "(not yet implemented)")
    func run() throws { throw ValidationError("Report is not implemented yet") }
}
