#define _GNU_SOURCE
#include "qtrace_sys.h"
#include <sched.h>
#include <sys/wait.h>
#include <time.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

uint64_t qt_sys_timestamp(void) {
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return qt_sys_monotonic_ns();
#endif
}

uint64_t qt_sys_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int qt_sys_wifexited(int status) { return WIFEXITED(status); }
int qt_sys_wexitstatus(int status) { return WEXITSTATUS(status); }
int qt_sys_wifsignaled(int status) { return WIFSIGNALED(status); }
int qt_sys_wtermsig(int status) { return WTERMSIG(status); }

int qt_sys_malloc_trim(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}

int qt_sys_usable_cpus(void) {
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int count = CPU_COUNT(&set);
        return count > 0 ? count : 1;
    }
#endif
    return 1;
}
