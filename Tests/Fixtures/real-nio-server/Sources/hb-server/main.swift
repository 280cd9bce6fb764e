// A Hummingbird 2 server with the routes the Swift Concurrency issue describes (lines the
// tests look for are marked `ROUTE:`). It listens on 127.0.0.1 (an ephemeral port unless
// given), prints "listening on PORT", and exits 0 on SIGTERM or SIGINT (graceful shutdown).
//
//   GET /plain     -> "hello"
//   GET /group     -> a TaskGroup of 4 children hashing a buffer
//   GET /blocking  -> waits on a DispatchSemaphore and calls DispatchQueue.global().sync { usleep }
//                     inside the async handler: the cooperative pool's mistake
//   GET /count     -> an actor counter
import Dispatch
import Foundation
import Hummingbird

/// Requests counted by an actor: every /count request hops onto it.
actor HitCounter {
    private var hits = 0
    func hit() -> Int {
        hits += 1
        return hits
    }
}

let counter = HitCounter()

/// FNV-1a over a buffer: CPU work with no suspension point.
func hashBuffer(_ seed: Int) -> UInt64 {
    var h: UInt64 = 1469598103934665603 ^ UInt64(seed)
    for k in 0..<50_000 { h = (h ^ UInt64(truncatingIfNeeded: k)) &* 1099511628211 }
    return h
}

func groupRoute() async -> String {
    let total = await withTaskGroup(of: UInt64.self) { group in
        for child in 0..<4 {
            group.addTask { hashBuffer(child) }  // ROUTE: group-child
        }
        var all: UInt64 = 0
        for await h in group { all ^= h }
        return all
    }
    return "group \(total % 1000)\n"
}

func blockingRoute() async -> String {
    let ready = DispatchSemaphore(value: 0)
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(1)) { ready.signal() }
    ready.wait()  // ROUTE: blocking-wait
    DispatchQueue.global().sync { _ = usleep(2_000) }  // ROUTE: blocking-sync
    return "blocked\n"
}

func countRoute() async -> String {
    let n = await counter.hit()  // ROUTE: count
    return "count \(n)\n"
}

let port = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 0 : 0
let router = Router()
router.get("plain") { _, _ in "hello\n" }
router.get("group") { _, _ in await groupRoute() }
router.get("blocking") { _, _ in await blockingRoute() }
router.get("count") { _, _ in await countRoute() }

var app = Application(
    router: router,
    configuration: .init(address: .hostname("127.0.0.1", port: port)),
    onServerRunning: { channel in
        print("listening on \(channel.localAddress?.port ?? 0)")
        fflush(stdout)
    }
)
try await app.runService()
print("server stopped")
