// Item trampolines and the Blocks ABI: what libdispatch calls instead of the user's work.
// The trampolines run an item between START and END records (context slots (shim_slots.c),
// or a plain block's heap copy carrying its id); the wrapper blocks' copy/dispose helpers
// retain and release the user's block they wrap.
#include "shim_internal.h"

/// Reads a slot and gives it back to this thread's cache before the item runs: the item may
/// enqueue again from its body and take the same, still cached, slot. The next item of the
/// same queue (slot_chain) will likely run right after this one: its slot is prefetched.
static inline void slot_take(qt_thread_t *t, qt_slot_t *s, void **work, void **ctx, uint64_t *id) {
    qt_slot_t *next = __atomic_load_n(&s->next, __ATOMIC_RELAXED);
    if (next) __builtin_prefetch(next);
    *work = s->work; *ctx = s->ctx; *id = s->id;
    slot_release(t, s);
}

/// Runs a work item on this thread between START and END records.
static inline __attribute__((always_inline)) void run_item(qt_thread_t *t, uint64_t tagged_id, void *queue, void *work, void *ctx, int is_block) {
    int saved_depth = t->depth;
    t->depth = 0;
    qt_rec_start(t, (unsigned)(tagged_id >> 56), tagged_id & QT_ID_MASK);
    held_push(t, queue);
    if (is_block) qt_invoke_block(work); else ((qt_fn_t)work)(ctx);
    held_pop(t);
    qt_rec_end(t, tagged_id & QT_ID_MASK);
    t->depth = saved_depth;
}

void tramp_async_block(void *p) {
    void *work, *ctx; uint64_t id;
    qt_thread_t *t = &qt_tls;
    slot_take(t, p, &work, &ctx, &id);
    run_item(t, id, QT_HELD_CURRENT, work, ctx, 1);
    _Block_release(work);
}

void tramp_async_fn(void *p) {
    void *work, *ctx; uint64_t id;
    qt_thread_t *t = &qt_tls;
    slot_take(t, p, &work, &ctx, &id);
    run_item(t, id, QT_HELD_CURRENT, work, ctx, 0);
}

void tramp_sync_block(void *p) {
    qt_sync_slot_t *s = p;
    run_item(&qt_tls, s->id, s->queue, s->work, NULL, 1);
}

void tramp_sync_fn(void *p) {
    qt_sync_slot_t *s = p;
    run_item(&qt_tls, s->id, s->queue, s->work, s->ctx, 0);
}

// ---- plain blocks (see tag_block): the trampolines that run them ----

static inline __attribute__((always_inline)) void run_tagged_block(void *block, unsigned kind) {
    struct qt_block_layout *b = block;
    uint64_t id = (uint32_t)__atomic_load_n(&b->reserved, __ATOMIC_RELAXED);
    // Free the field before running: the block may be submitted again from its own body.
    __atomic_store_n(&b->reserved, 0, __ATOMIC_RELAXED);
    run_item(&qt_tls, id | ((uint64_t)kind << 56), QT_HELD_CURRENT, block, NULL, 1);
    _Block_release(block);
}

#define TAGGED_TRAMPOLINE(name, kind) void name(void *block) { run_tagged_block(block, kind); }
TAGGED_TRAMPOLINE(tramp_tagged_async, QT_KIND_ASYNC)
TAGGED_TRAMPOLINE(tramp_tagged_barrier_async, QT_KIND_BARRIER_ASYNC)
TAGGED_TRAMPOLINE(tramp_tagged_after, QT_KIND_AFTER)
TAGGED_TRAMPOLINE(tramp_tagged_group_async, QT_KIND_GROUP_ASYNC)
TAGGED_TRAMPOLINE(tramp_tagged_group_notify, QT_KIND_GROUP_NOTIFY)

void tramp_untraced_block(void *block) {
    qt_invoke_block(block);
    _Block_release(block);
}

// ---- hand-made wrapper blocks: their copy and dispose helpers ----

static void wrap_copy(void *dst, const void *src) {
    qt_wrap_t *d = dst;
    (void)src;
    if (d->inner) d->inner = _Block_copy(d->inner);
}

static void wrap_dispose(const void *b) {
    const qt_wrap_t *w = b;
    if (w->inner) _Block_release(w->inner);
}

const qt_wrap_descriptor_t g_wrap_descriptor = {
    0, sizeof(qt_wrap_t), (void *)wrap_copy, (void *)wrap_dispose,
};
