// Scenarios for the command line's own tests: signals reaching the program through
// `qtrace record`, and names longer than any terminal for `qtrace stats` into a file.
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// SIGINTs the program received (a handler may only touch such a plain global).
nonisolated(unsafe) private var sigintCount: Int32 = 0

/// Counts SIGINTs and prints the count at the end ("quit" or end of input), so a test sees
/// whether a Ctrl-C arrived once or twice. The handler itself says "got sigint" (write(2) is
/// async-signal-safe): a signal that lands before the read starts must be announced too.
func countSigint() {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in
        sigintCount += 1
        let note: StaticString = "got sigint\n"
        _ = write(STDOUT_FILENO, note.utf8Start, note.utf8CodeUnitCount)
    }
    sigemptyset(&action.sa_mask)
    sigaction(SIGINT, &action, nil)
    let queue = DispatchQueue(label: "fx.signals")
    queue.sync { }  // a traced process: it writes a trace
    print("ready")
    fflush(stdout)
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while true {
        let n = read(STDIN_FILENO, &byte, 1)
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        if byte == UInt8(ascii: "\n") {
            if line == Array("quit".utf8) { break }
            line = []
        } else {
            line.append(byte)
        }
    }
    queue.sync { }
    print("sigint count: \(sigintCount)")
    fflush(stdout)
    exit(0)
}

enum WidthScenario {
    static let queueLabel = "com.example.a-queue-label-far-longer-than-any-terminal-table-leaves-room-for.worker-pool"

    /// A queue with a long label running a closure in a function with a long name: both are
    /// wider than the 100-column layout's name columns.
    static func run() {
        let queue = DispatchQueue(label: queueLabel)
        aFunctionWhoseNameIsLongerThanTheCodeColumnOfAHundredColumnTableCanShow(queue)
        queue.sync { }
        print("long names done")
    }
}

@inline(never)
func aFunctionWhoseNameIsLongerThanTheCodeColumnOfAHundredColumnTableCanShow(_ queue: DispatchQueue) {
    for _ in 0..<20 { queue.async { usleep(100) } }
}

/// Queues a → b → c, and one dispatch_set_target_queue record (c onto a global queue) that a
/// test rewrites into c → a: a target loop, on whose queues items then ran. Items on a, from
/// the main thread: 20 async (on workers) and 5 sync (run on the main thread itself).
func targetChain() {
    let c = DispatchQueue(label: "fx.chain.c", attributes: .initiallyInactive)
    let b = DispatchQueue(label: "fx.chain.b", target: c)
    let a = DispatchQueue(label: "fx.chain.a", target: b)
    c.setTarget(queue: DispatchQueue.global())
    c.activate()
    for _ in 0..<20 { a.async { usleep(50) } }
    for _ in 0..<5 { a.sync { } }
    print("chain done")
}
