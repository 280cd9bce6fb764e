import ArgumentParser

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "(not yet implemented)")
    func run() throws { throw ValidationError("Check is not implemented yet") }
}
