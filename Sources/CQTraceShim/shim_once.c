// dispatch_once and dispatch_once_f: a thread that finds the predicate not done yet either
// runs the initializer or waits for the thread that runs it. Only that first, slow call is
// recorded (ONCE_BEGIN/ONCE_END); a done predicate returns at once, as libdispatch's own
// fast path does.
//
// Swift's lazy globals and `static let` do NOT come here on Linux: swift_once uses the Swift
// runtime's own once (swift::threading_impl::once_slow), and libswiftCore does not link
// libdispatch. What is traced is C, Objective-C and Swift code calling dispatch_once(_f).
#include "shim_internal.h"

/// libdispatch's DLOCK_ONCE_DONE (src/shims/lock.h): the predicate of a finished once.
#define QT_ONCE_DONE (~0l)

/// The context the real dispatch_once_f gets instead of the user's: the initializer runs on
/// the calling thread if it runs at all, so a flag on the caller's stack tells whether it did.
typedef struct {
    qt_fn_t fn;
    void *ctx;
    int ran;
} qt_once_call_t;

static void tramp_once(void *p) {
    qt_once_call_t *call = p;
    call->ran = 1;
    call->fn(call->ctx);
}

/// 1 when the initializer already finished: no call into libdispatch, nothing recorded. An
/// acquire load, like libdispatch's, so that the caller sees what the initializer wrote.
static inline int once_is_done(long *predicate) {
    return QT_LIKELY(__atomic_load_n(predicate, __ATOMIC_ACQUIRE) == QT_ONCE_DONE);
}

/// The slow path of a user's call: ONCE_BEGIN, the real once with the flagging trampoline,
/// ONCE_END saying whether this thread ran the initializer or waited for another thread's.
static void once_traced(qt_thread_t *t, void *ra, long *predicate, void *ctx, qt_fn_t fn) {
    qt_rec1(t, QT_ONCE_BEGIN, 0, 0, (uint64_t)(uintptr_t)predicate);
    qt_once_call_t call = { fn, ctx, 0 };
    // Not depth++: the initializer is user code whose Dispatch calls are recorded.
    real.once_f(predicate, &call, tramp_once);
    unsigned how = call.ran ? QT_ONCE_RAN : QT_ONCE_WAITED;
    // Only a wait pays for its call site (a DWARF unwind); it is rare and already slow.
    uint32_t site = call.ran ? 0 : qt_wait_site(t, (uintptr_t)ra);
    qt_rec2(t, QT_ONCE_END, 0, how, (uint64_t)(uintptr_t)predicate, site);
}

void dispatch_once_f(long *predicate, void *ctx, qt_fn_t fn) {
    if (once_is_done(predicate)) return;
    // qt_resolve copes with calls before the shim's constructor (static initializers).
    QT_PROLOGUE(dispatch_once_f)
    if (!qt_is_user_call(t, ra)) { real.once_f(predicate, ctx, fn); return; }
    once_traced(t, ra, predicate, ctx, fn);
}

void dispatch_once(long *predicate, void *block) {
    if (once_is_done(predicate)) return;
    QT_PROLOGUE(dispatch_once)
    if (!qt_is_user_call(t, ra)) { real.once(predicate, block); return; }
    // libdispatch's dispatch_once is dispatch_once_f with the block's invoke function.
    once_traced(t, ra, predicate, block, (qt_fn_t)((struct qt_block_layout *)block)->invoke);
}
