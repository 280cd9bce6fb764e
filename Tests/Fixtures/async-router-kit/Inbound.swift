import Dispatch

// A stand-in for a server library (NIO's async sequences, Hummingbird's router) in a Swift module
// of its own: jobs of the fixture's request handlers resume here, in the library's innermost
// frame, while the handler that awaited it is further up the async stack.

/// Requests arriving one at a time; `next()` suspends until one is there.
public struct Inbound: Sendable {
    public init() {}

    public func next(_ request: Int) async -> Int {
        await Task.yield()  // SITE: inbound-next
        return request
    }
}

/// A library's blocking call (TSCBasic's Process.waitUntilExit waiting on a Dispatch group, for
/// swift-driver): the wait's own line is the library's, the line to fix the caller's.
public enum LibraryWait {
    public static func untilSignalled(_ semaphore: DispatchSemaphore) {
        semaphore.wait()  // SITE: library-wait
    }
}
