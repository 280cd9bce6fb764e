// A cache prefetch hint for the collector's hot paths (CQTraceSys: Swift has no intrinsic).
import CQTraceSys

/// Asks the CPU to load the cache line holding `address` ahead of a read. It changes no
/// value and never faults (any address may be passed): it only hides a cache miss that a
/// later read would otherwise wait for.
@inlinable @inline(__always)
public func prefetchForRead(_ address: UnsafeRawPointer) {
    qt_sys_prefetch(address)
}
