import ArgumentParser

struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "(not yet implemented)")
    func run() throws { throw ValidationError("Dump is not implemented yet") }
}
