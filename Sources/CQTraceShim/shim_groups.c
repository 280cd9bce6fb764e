// Groups and semaphores: group_async/notify submit like dispatch_async (enqueue_async);
// enter/leave/wait and the semaphore calls are recorded around the real ones.
#include "shim_internal.h"

// ---- groups ----

static void group_submit(qt_thread_t *t, unsigned kind, unsigned flags8, void *g, void *q, void *work, void *ctx,
                         int is_block, void *ra, void (*real_f)(void *, void *, void *, qt_fn_t)) {
    qt_fn_t trampoline;
    void *c = enqueue_async(t, kind, flags8, q, work, ctx, is_block, (uint64_t)(uintptr_t)g, ra, &trampoline);
    t->depth++;
    real_f(g, q, c, trampoline);
    t->depth--;
}

void dispatch_group_async(void *g, void *q, void *block) {
    QT_PROLOGUE(dispatch_group_async)
    if (!qt_is_user_call(t, ra)) { real.group_async(g, q, block); return; }
    if (is_workitem(block)) {
        enqueue_workitem(t, QT_KIND_GROUP_ASYNC, 0, q, block, (uint64_t)(uintptr_t)g);
        t->depth++; real.group_async(g, q, block); t->depth--;
        return;
    }
    group_submit(t, QT_KIND_GROUP_ASYNC, 0, g, q, block, NULL, 1, ra, real.group_async_f);
}

void dispatch_group_async_f(void *g, void *q, void *ctx, qt_fn_t fn) {
    QT_PROLOGUE(dispatch_group_async_f)
    if (!qt_is_user_call(t, ra)) { real.group_async_f(g, q, ctx, fn); return; }
    group_submit(t, QT_KIND_GROUP_ASYNC, QT_EF_FUNCTION | qt_caller_flags(ra), g, q, (void *)fn, ctx, 0, ra, real.group_async_f);
}

void dispatch_group_notify(void *g, void *q, void *block) {
    QT_PROLOGUE(dispatch_group_notify)
    if (!qt_is_user_call(t, ra)) { real.group_notify(g, q, block); return; }
    if (is_workitem(block)) {
        enqueue_workitem(t, QT_KIND_GROUP_NOTIFY, 0, q, block, (uint64_t)(uintptr_t)g);
        t->depth++; real.group_notify(g, q, block); t->depth--;
        return;
    }
    group_submit(t, QT_KIND_GROUP_NOTIFY, 0, g, q, block, NULL, 1, ra, real.group_notify_f);
}

void dispatch_group_notify_f(void *g, void *q, void *ctx, qt_fn_t fn) {
    QT_PROLOGUE(dispatch_group_notify_f)
    if (!qt_is_user_call(t, ra)) { real.group_notify_f(g, q, ctx, fn); return; }
    group_submit(t, QT_KIND_GROUP_NOTIFY, QT_EF_FUNCTION, g, q, (void *)fn, ctx, 0, ra, real.group_notify_f);
}

void *dispatch_group_create(void) {
    QT_PROLOGUE(dispatch_group_create)
    void *g = real.group_create();
    if (qt_is_user_call(t, ra)) {
        qt_thread_t *m = qt_meta_begin(t);
        qt_rec1(m, QT_GROUP_CREATE, 0, 0, (uint64_t)(uintptr_t)g);
        qt_meta_end(m, t);
    }
    return g;
}

void dispatch_group_enter(void *g) {
    QT_PROLOGUE(dispatch_group_enter)
    if (qt_is_user_call(t, ra)) qt_rec1(t, QT_GROUP_ENTER, 0, 0, (uint64_t)(uintptr_t)g);
    real.group_enter(g);
}

void dispatch_group_leave(void *g) {
    QT_PROLOGUE(dispatch_group_leave)
    // Record before leaving: the leave may fire the notify on another thread at once.
    if (qt_is_user_call(t, ra)) qt_rec1(t, QT_GROUP_LEAVE, 0, 0, (uint64_t)(uintptr_t)g);
    real.group_leave(g);
}

long dispatch_group_wait(void *g, uint64_t timeout) {
    QT_PROLOGUE(dispatch_group_wait)
    if (!qt_is_user_call(t, ra)) return real.group_wait(g, timeout);
    qt_rec2(t, QT_GROUP_WAIT_BEGIN, 0, 0, (uint64_t)(uintptr_t)g, timeout);
    t->depth++;
    // Try without waiting first (as for semaphores): only a wait that really blocks pays for
    // finding its call site (a DWARF unwind).
    long r = real.group_wait(g, 0 /* DISPATCH_TIME_NOW */);
    int blocked = 0;
    if (r != 0 && timeout != 0) { blocked = 1; r = real.group_wait(g, timeout); }
    t->depth--;
    uint32_t site = blocked ? qt_wait_site(t, (uintptr_t)ra) : 0;
    qt_rec2(t, QT_GROUP_WAIT_END, 0, r != 0, (uint64_t)(uintptr_t)g, site);
    return r;
}

// ---- semaphores ----

void *dispatch_semaphore_create(long value) {
    QT_PROLOGUE(dispatch_semaphore_create)
    void *s = real.semaphore_create(value);
    if (s && qt_is_user_call(t, ra)) {
        qt_thread_t *m = qt_meta_begin(t);
        qt_rec2(m, QT_SEM_CREATE, 0, 0, (uint64_t)(uintptr_t)s, (uint64_t)value);
        qt_meta_end(m, t);
    }
    return s;
}

long dispatch_semaphore_wait(void *s, uint64_t timeout) {
    QT_PROLOGUE(dispatch_semaphore_wait)
    if (!qt_is_user_call(t, ra)) return real.semaphore_wait(s, timeout);
    qt_rec2(t, QT_SEM_WAIT_BEGIN, 0, 0, (uint64_t)(uintptr_t)s, timeout);
    t->depth++;
    // Try without waiting first: that is libdispatch's own fast path, so the result is the
    // same, and it tells whether the caller really blocked.
    long r = real.semaphore_wait(s, 0 /* DISPATCH_TIME_NOW */);
    int blocked = 0;
    if (r != 0 && timeout != 0) { blocked = 1; r = real.semaphore_wait(s, timeout); }
    t->depth--;
    uint32_t site = blocked ? qt_wait_site(t, (uintptr_t)ra) : 0;
    qt_rec2(t, QT_SEM_WAIT_END, 0, (uint32_t)((r != 0) | (blocked << 1)), (uint64_t)(uintptr_t)s, site);
    return r;
}

long dispatch_semaphore_signal(void *s) {
    QT_PROLOGUE(dispatch_semaphore_signal)
    if (!qt_is_user_call(t, ra)) return real.semaphore_signal(s);
    qt_rec1(t, QT_SEM_SIGNAL, 0, 0, (uint64_t)(uintptr_t)s);
    return real.semaphore_signal(s);
}
