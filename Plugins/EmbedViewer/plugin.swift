// Build-tool plugin of QTraceReport: embeds the report viewer (Sources/QTraceReport/viewer/)
// by running qtrace-embed-viewer into the plugin's work directory. Nothing generated is
// committed: viewer/ is the only copy of the viewer.
import Foundation
import PackagePlugin

@main
struct EmbedViewer: BuildToolPlugin {
    /// The files a report embeds: the viewer's HTML, CSS and JavaScript.
    static let embeddedExtensions: Set<String> = ["html", "css", "js"]

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let viewer = context.package.directoryURL.appending(path: "Sources/\(target.name)/viewer")
        let inputs = try FileManager.default.contentsOfDirectory(at: viewer, includingPropertiesForKeys: nil)
            .filter { Self.embeddedExtensions.contains($0.pathExtension) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "ViewerAssets.swift")
        return [
            .buildCommand(
                displayName: "Embedding the report viewer into QTraceReport",
                executable: try context.tool(named: "qtrace-embed-viewer").url,
                // The tool lists viewer/ itself: SwiftPM may reuse this command's arguments from
                // an earlier build, but re-runs it when the directory (a file added or removed)
                // or one of the files changes.
                arguments: [viewer.path, output.path],
                inputFiles: [viewer] + inputs,
                outputFiles: [output]
            ),
        ]
    }
}
