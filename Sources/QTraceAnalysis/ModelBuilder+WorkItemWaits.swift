// DispatchWorkItem.wait() (dispatch_block_wait): the thread blocks until the work item has run,
// a blocking call like a group wait. The key is the work item's id (0 for a block the shim did
// not see made: waits on such blocks still pair, one at a time per thread).
import QTraceFormat

extension ModelBuilder {
    mutating func workItemWaitBegin(_ e: Event, thread t: Int32) {
        beginBlocked(t, cause: .workItemWait, object: -1, key: e.a)
    }

    mutating func workItemWaitEnd(_ e: Event, thread t: Int32) {
        if let f = endBlocked(t, cause: .workItemWait, key: e.a, timedOut: e.arg & 1 != 0), e.b != 0 {
            threads.setBlockedSite(t, f.index, site: siteID(e.b))
        }
    }
}
