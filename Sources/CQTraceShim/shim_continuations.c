// Continuations (docs/trace-format.md, "Continuations"): shim_swift_entries.S calls these
// hooks for every swift_continuation_init and swift_continuation_await compiled code makes.
// A CONTINUATION record says which task made one and where (init: the call site, as waits
// name theirs), and whether the await will suspend (the continuation not resumed yet) — so a
// task left suspended on one at the end of the trace is a continuation never resumed.
// Resumes are not seen directly (CheckedContinuation.resume calls the runtime internally):
// the task's next job, after a suspending await, is the resumption.
#define _GNU_SOURCE
#include "shim_internal.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

typedef void *(*qt_current_task_fn)(void);

static void *g_real_init, *g_real_await;
static qt_current_task_fn g_current;

/// ContinuationAsyncContext (Swift 6.x ABI Task.h): AsyncContext (parent, resume parent,
/// flags) then the atomic await status: 0 pending, 1 awaited, 2 resumed.
#define QT_CONTINUATION_WORD_STATUS 3

static void *resolve(void **slot, const char *name) {
    void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (QT_LIKELY(fn != NULL)) return fn;
    g_current = (qt_current_task_fn)dlsym(RTLD_DEFAULT, "swift_task_getCurrent");
    fn = dlsym(RTLD_NEXT, name);
    if (!fn) {
        static const char msg[] = "qtrace: a Swift continuation entry point is missing from the runtime\n";
        ssize_t w = write(2, msg, sizeof msg - 1); (void)w;
        abort();
    }
    __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
    return fn;
}

static uint32_t current_task_id(void) {
    const uint64_t *task = g_current ? g_current() : NULL;
    return task ? (uint32_t)(task[4] >> 32) : 0;
}

QT_HIDDEN void *qt_continuation_init(uintptr_t context, uintptr_t flags, uintptr_t ra);
QT_HIDDEN void *qt_continuation_await(uintptr_t context);

void *qt_continuation_init(uintptr_t context, uintptr_t flags, uintptr_t ra) {
    (void)flags;
    void *real_init = resolve(&g_real_init, "swift_continuation_init");
    qt_thread_t *t = &qt_tls;
    if (!QT_RECORDING || t->depth != 0) return real_init;
    // The caller is the program's function that made the continuation (withCheckedContinuation
    // is inlined into it): a site per call site, found once.
    uint32_t site = qt_wait_site(t, ra);
    qt_rec3(t, QT_CONTINUATION, QT_CONTINUATION_MADE, current_task_id(), context, 0, site);
    return real_init;
}

void *qt_continuation_await(uintptr_t context) {
    void *real_await = resolve(&g_real_await, "swift_continuation_await");
    qt_thread_t *t = &qt_tls;
    if (!QT_RECORDING || t->depth != 0 || context == 0) return real_await;
    uint64_t status = __atomic_load_n(&((const uint64_t *)context)[QT_CONTINUATION_WORD_STATUS], __ATOMIC_ACQUIRE);
    qt_rec3(t, QT_CONTINUATION, QT_CONTINUATION_AWAITED, current_task_id(), context, status, 0);
    return real_await;
}
