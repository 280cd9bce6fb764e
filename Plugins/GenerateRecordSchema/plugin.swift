// Build-tool plugin of QTraceFormat and its tests: generates Swift from the record list,
// Sources/CQTraceShim/qtrace_records.h, by running qtrace-generate-schema into the plugin's
// work directory. Nothing generated is committed: the header is the only copy of the list.
import Foundation
import PackagePlugin

@main
struct GenerateRecordSchema: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let list = context.package.directoryURL.appending(path: "Sources/CQTraceShim/qtrace_records.h")
        // QTraceFormat gets the declarations; a test target the C-against-Swift constant table.
        let isTest = (target as? SourceModuleTarget)?.kind == .test
        let output = context.pluginWorkDirectoryURL.appending(path: isTest ? "RecordListConstants.swift" : "RecordSchema+Generated.swift")
        return [
            .buildCommand(
                displayName: "Generating \(target.name)'s record schema from qtrace_records.h",
                executable: try context.tool(named: "qtrace-generate-schema").url,
                arguments: [isTest ? "--constants" : "--declarations", list.path, output.path],
                inputFiles: [list],
                outputFiles: [output]
            ),
        ]
    }
}
