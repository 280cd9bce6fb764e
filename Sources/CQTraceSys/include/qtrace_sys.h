// Small system helpers for qtrace's Swift side (not the interposer).
#ifndef QTRACE_SYS_H
#define QTRACE_SYS_H
#include <stdint.h>

/// The same clock the shim records (TSC on x86-64), for end-of-run calibration pairs.
uint64_t qt_sys_timestamp(void);
/// CLOCK_MONOTONIC in nanoseconds.
uint64_t qt_sys_monotonic_ns(void);
/// Whether the status from waitpid means "exited", and the value; or "signalled" and the signal.
int qt_sys_wifexited(int status);
int qt_sys_wexitstatus(int status);
int qt_sys_wifsignaled(int status);
int qt_sys_wtermsig(int status);
/// glibc's malloc_trim(0): gives the allocator's free pages back to the kernel (0 elsewhere).
int qt_sys_malloc_trim(void);
/// The CPUs this process may run on (its affinity mask; 1 when it cannot be read).
int qt_sys_usable_cpus(void);
/// Asks the CPU to bring the cache line holding `address` in, for a read soon (never faults:
/// any address may be passed). Inline, so that Swift callers compile it to one instruction.
static inline void qt_sys_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

#endif
