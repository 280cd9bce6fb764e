import ArgumentParser

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "(not yet implemented)")
    func run() throws { throw ValidationError("Export is not implemented yet") }
}
