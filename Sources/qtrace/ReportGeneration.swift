// Trace(s) -> analysis -> HTML report. Wired once the report library lands.
import Foundation

enum ReportGeneration {
    static func write(tracePaths: [String], to reportPath: String, progress: Bool) throws {}
}
