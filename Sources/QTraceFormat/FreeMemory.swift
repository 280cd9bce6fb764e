// Memory the allocator holds free, given back to the kernel.
import CQTraceSys

public enum FreeMemory {
    /// glibc's malloc_trim: after a model of millions of small allocations is freed, their
    /// pages stay resident in the allocator's heap (only its top is returned by itself), and
    /// the big arrays that come next are fresh mappings that do not reuse them.
    public static func giveBack() {
        _ = qt_sys_malloc_trim()
    }
}
