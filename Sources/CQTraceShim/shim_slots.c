// Context slots of function items (and of blocks that cannot carry their id): per-thread LIFO
// caches (shim_internal.h: slot_alloc, slot_release) refilled from and spilled to a shared
// pool of batches. A slot is never freed: slots in use plus cached are bounded by the
// pending items' peak plus QT_SLOT_CACHE_MAX per thread.
#include "shim_internal.h"

/// The pool: batches of free slots, each a list linked through `work`, whose head holds the
/// next batch in `ctx` and its own length in `id`. Touched once per QT_SLOT_BATCH items.
static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static qt_slot_t *g_pool;

static void pool_push(qt_slot_t *head, uint32_t count) {
    head->id = count;
    pthread_mutex_lock(&g_pool_lock);
    head->ctx = g_pool;
    g_pool = head;
    pthread_mutex_unlock(&g_pool_lock);
}

static qt_slot_t *pool_pop(uint32_t *count) {
    pthread_mutex_lock(&g_pool_lock);
    qt_slot_t *head = g_pool;
    if (head) g_pool = head->ctx;
    pthread_mutex_unlock(&g_pool_lock);
    if (head) *count = (uint32_t)head->id;
    return head;
}

/// A new batch, linked in address order (consecutive enqueues then fill consecutive lines).
static qt_slot_t *new_batch(uint32_t *count) {
    qt_slot_t *slots = NULL;
    if (posix_memalign((void **)&slots, 64, QT_SLOT_BATCH * sizeof *slots) != 0) return NULL;
    for (uint32_t i = 0; i + 1 < QT_SLOT_BATCH; i++) slots[i].work = &slots[i + 1];
    slots[QT_SLOT_BATCH - 1].work = NULL;
    *count = QT_SLOT_BATCH;
    return slots;
}

qt_slot_t *slot_refill(qt_thread_t *t) {
    uint32_t count = 0;
    qt_slot_t *head = pool_pop(&count);
    if (!head) head = new_batch(&count);
    if (!head) return NULL;
    t->slot_free = head->work;
    t->slot_free_count = count - 1;
    return head;
}

void slot_spill(qt_thread_t *t) {
    qt_slot_t *head = t->slot_free, *last = head;
    for (uint32_t i = 1; i < QT_SLOT_BATCH; i++) last = last->work;
    t->slot_free = last->work;
    t->slot_free_count -= QT_SLOT_BATCH;
    last->work = NULL;
    pool_push(head, QT_SLOT_BATCH);
}

void slot_thread_exit(qt_thread_t *t) {
    if (t->slot_free) pool_push(t->slot_free, t->slot_free_count);
    t->slot_free = NULL;
    t->slot_free_count = 0;
}

/// The lock may have been held by a thread that does not exist in the child.
void slot_after_fork_child(void) { pthread_mutex_init(&g_pool_lock, NULL); }
