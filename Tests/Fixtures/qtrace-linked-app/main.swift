// An app that links QTrace instead of being preloaded; the tests record it both ways.
import Dispatch
import Foundation
import QTrace

let queue = DispatchQueue(label: "linked.serial")
QTrace.nameThread("linked-main")
QTrace.mark("start")
QTrace.interval("load") {
    for _ in 0..<5 { queue.async { usleep(100) } }
    queue.sync { }
}
let pending = QTrace.Interval("pending")
let done = DispatchSemaphore(value: 0)
DispatchQueue.global().async { pending.end(); done.signal() }
done.wait()
print("linked enabled=\(QTrace.isEnabled)")
