// qtrace-samples: the gallery of Dispatch programs that qtrace's documentation, report
// screenshots and end-to-end tests record.
//
//   qtrace-samples SCENARIO [OPTION]   run one scenario (see Registry.swift)
//   qtrace-samples --list              print every scenario name with a one-line description
//
// Each scenario ends by itself and prints the same text to stdout on every run; anything that
// varies (timings, thread counts, completion orders) goes to stderr.
//
// Keep escaping closures out of this file: top-level code is main-actor isolated in Swift 6,
// and a closure written here that Dispatch runs on a worker thread would fail the main-actor
// runtime check (a trap inside dispatch_assert_queue). The scenarios live in other files.
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "--list" {
    printScenarioList()
    exit(0)
}

guard let name = arguments.first else {
    reportUsageError("usage: qtrace-samples SCENARIO [OPTION] | --list")
}
guard let scenario = findScenario(named: name) else {
    reportUsageError("qtrace-samples: unknown scenario '\(name)' (try --list)")
}
let options = Array(arguments.dropFirst())
if let unknown = options.first(where: { !scenario.options.contains($0) }) {
    reportUsageError("qtrace-samples: scenario '\(name)' has no option '\(unknown)'")
}

scenario.run(options)
exit(0)
