// A Foundation program with the three things Foundation builds on Dispatch, each ending in a
// line whose text does not depend on timing (the test compares it traced and untraced):
//   1. an OperationQueue of 2 workers running a diamond of operations (fetch -> parse, index
//      -> report) with a few independent ones, waited for with waitUntilAllOperationsAreFinished;
//   2. URLSession data tasks against BASE_URL (argument 1; a local server the test runs);
//   3. a repeating Timer on the main RunLoop, fired 5 times, the run loop driving main.
// Exit status 0, or 1 when a step did not do what it should.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

setvbuf(stdout, nil, _IOLBF, 0)

func busyWork(_ iterations: Int) -> Int {
    var x = 0
    for i in 0..<iterations { x = x &* 31 &+ i }
    return x
}

/// The order the diamond's operations finished in, as the dependencies force it.
final class Log: @unchecked Sendable {
    private let lock = NSLock()
    private var names: [String] = []
    func add(_ name: String) { lock.lock(); names.append(name); lock.unlock() }
    var all: [String] { lock.lock(); defer { lock.unlock() }; return names }
}

func operations() -> Bool {
    let queue = OperationQueue()
    queue.name = "workload.operations"
    queue.maxConcurrentOperationCount = 2
    let log = Log()
    func step(_ name: String) -> BlockOperation {
        let operation = BlockOperation { _ = busyWork(200_000); log.add(name) }
        operation.name = name
        return operation
    }
    let fetch = step("fetch"), parse = step("parse"), index = step("index"), report = step("report")
    parse.addDependency(fetch)
    index.addDependency(fetch)
    report.addDependency(parse)
    report.addDependency(index)
    let independent = (1...6).map { step("chunk-\($0)") }
    queue.addOperations([report, index, parse, fetch] + independent, waitUntilFinished: false)
    queue.waitUntilAllOperationsAreFinished()
    let order = log.all.filter { !$0.hasPrefix("chunk-") }
    let ok = order.first == "fetch" && order.last == "report" && order.count == 4 && log.all.count == 10
    print("operations: \(log.all.count) finished, diamond \(ok ? "in dependency order" : "OUT OF ORDER: \(order)")")
    return ok
}

func downloads(base: String) -> Bool {
    let session = URLSession(configuration: .ephemeral)
    let group = DispatchGroup()
    let results = Log()
    let paths = (1...8).map { "/file-\($0).txt" }
    for path in paths {
        guard let url = URL(string: base + path) else { return false }
        group.enter()
        session.dataTask(with: url) { data, response, error in
            let status = (response as? HTTPURLResponse)?.statusCode ?? -1
            results.add(error == nil ? "\(status):\(data?.count ?? 0)" : "error")
            group.leave()
        }.resume()
    }
    let finished = group.wait(timeout: .now() + 30) == .success
    let answers = results.all
    let ok = finished && answers.count == paths.count && answers.allSatisfy { $0.hasPrefix("200:") }
    print("urlsession: \(answers.count) of \(paths.count) answered, \(ok ? "all 200" : "FAILED: \(answers)")")
    session.invalidateAndCancel()
    return ok
}

func timer() -> Bool {
    let fired = Log()  // the timer fires on the main thread; the log's lock keeps the compiler content
    let timer = Timer(timeInterval: 0.02, repeats: true) { timer in
        fired.add("tick")
        if fired.all.count == 5 { timer.invalidate() }
    }
    RunLoop.main.add(timer, forMode: .default)
    let deadline = Date().addingTimeInterval(10)
    while fired.all.count < 5 && Date() < deadline { _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.05)) }
    print("timer: fired \(fired.all.count) times on the main run loop")
    return fired.all.count == 5
}

guard CommandLine.arguments.count > 1 else {
    FileHandle.standardError.write(Data("usage: foundation-workload BASE_URL (e.g. http://127.0.0.1:8000)\n".utf8))
    exit(2)
}
let results = [operations(), downloads(base: CommandLine.arguments[1]), timer()]
exit(results.allSatisfy { $0 } ? 0 : 1)
