import ArgumentParser

struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "(not yet implemented)")
    func run() throws { throw ValidationError("Record is not implemented yet") }
}
