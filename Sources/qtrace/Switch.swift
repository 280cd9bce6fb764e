// `qtrace on` / `qtrace off`: switch the recording of a process started armed (docs/armed.md;
// the control file is QTraceRecording's RecordingSwitch).
import ArgumentParser
import Foundation
import QTraceRecording
#if canImport(Glibc)
import Glibc
#endif

struct On: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start recording a program that runs armed (qtrace record --off, or QTRACE_ARMED=1).",
        discussion: """
        TARGET is the pid of a traced process, the trace path given to qtrace record -o (its \
        control file is TRACE.ctl), or the control file itself. Every process of that \
        recording starts recording at once; items already running when it switches show as \
        started before the trace (or, with qtrace off, as running at its end).
          qtrace record --off -o run.qtrace -- ./server &
          qtrace on run.qtrace; sleep 10; qtrace off run.qtrace
        """)

    @Argument(help: ArgumentHelp("A pid, a trace path or its .ctl control file.", valueName: "target"))
    var target: String

    func run() throws { try RecordingSwitch.set(target, recording: true, command: "on") }
}

struct Off: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Stop recording a program that runs armed; qtrace on starts it again.",
        discussion: "TARGET as for qtrace on. The trace keeps what was recorded; the shim stays loaded, recording nothing.")

    @Argument(help: ArgumentHelp("A pid, a trace path or its .ctl control file.", valueName: "target"))
    var target: String

    func run() throws { try RecordingSwitch.set(target, recording: false, command: "off") }
}
