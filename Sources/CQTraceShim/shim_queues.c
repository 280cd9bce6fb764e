// Queues and DispatchWorkItems: the object tables (queues, attributes, work items; the known
// queues, which every enqueue reads), and the entry points that create, configure, retarget,
// suspend and resume queues, and create, perform and notify dispatch blocks.
#include "shim_internal.h"

// ---- object tables: pointer -> facts, lock-free open addressing ----

qt_entry_t g_queues[QT_TABLE_SIZE];            // queue -> (attrs | QT_Q_KNOWN, target)
static qt_entry_t g_attrs[256];                // queue attr -> attrs bits
static qt_entry_t g_workitems[QT_TABLE_SIZE];  // DispatchWorkItem block -> (item id, block flags)

static uint32_t attr_bits(void *attr) {
    if (attr == NULL) return 0;
    if (attr == g_attr_concurrent) return QT_Q_CONCURRENT;
    qt_entry_t *e = table_find(g_attrs, 256, (uintptr_t)attr, 0);
    return e ? (uint32_t)e->a : 0;
}

static void remember_attr(void *result, uint32_t bits) {
    qt_entry_t *e = table_find(g_attrs, 256, (uintptr_t)result, 1);
    if (e) e->a = bits;
}

// ---- known queues (shim_internal.h): the enqueue path's dense view of g_queues ----

qt_known_set_t g_known_queues[QT_KNOWN_SETS];

qt_known_queue_t *known_queue_insert(uintptr_t q) {
    qt_known_set_t *s = known_set_of(q);
    for (int w = 0; w < QT_KNOWN_WAYS; w++) {
        uintptr_t expected = 0;
        if (__atomic_compare_exchange_n(&s->way[w].queue, &expected, q, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
            || expected == q)
            return &s->way[w];
    }
    // A full set: the way the address picks goes to this queue (no count to keep up to date).
    qt_known_queue_t *k = &s->way[(q >> 4) & (QT_KNOWN_WAYS - 1)];
    __atomic_store_n(&k->last, NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&k->queue, q, __ATOMIC_RELEASE);
    return k;
}

void note_queue_miss(qt_thread_t *t, void *q) {
    qt_entry_t *e = table_find(g_queues, QT_TABLE_SIZE, (uintptr_t)q, 1);
    if (!e) return; // the table is full around q: noted again next time, as before
    if (!(e->a & QT_Q_KNOWN)) {
        const char *label = label_of(q);
        uint32_t kind = QT_QUEUE_INFO_OTHER, bits = 0;
        if (q == g_main_queue) kind = QT_QUEUE_INFO_MAIN;
        else if (strncmp(label, "com.apple.root.", 15) == 0) { kind = QT_QUEUE_INFO_GLOBAL; bits = QT_Q_CONCURRENT | QT_Q_GLOBAL; }
        int relpri = 0;
        unsigned qos = real.queue_get_qos_class ? real.queue_get_qos_class(q, &relpri) : 0;
        e->b = 0;
        e->a = bits | QT_Q_KNOWN;
        uint64_t words[1] = { (uint64_t)(uintptr_t)q };
        qt_thread_t *m = qt_meta_begin(t);
        qt_rec_string(m, QT_QUEUE_INFO, kind | ((qos & 0xff) << 8), words, 1, label);
        qt_meta_end(m, t);
    }
    t->last_noted_queue = q;
    t->last_noted_entry = known_queue_insert((uintptr_t)q);
}

// ---- queues ----

static void record_queue_create(qt_thread_t *t, void *q, const char *label, void *attr, void *target) {
    uint32_t bits = attr_bits(attr);
    int relpri = 0;
    unsigned qos = real.queue_get_qos_class ? real.queue_get_qos_class(q, &relpri) : 0;
    qt_entry_t *e = table_find(g_queues, QT_TABLE_SIZE, (uintptr_t)q, 1);
    if (e) {
        e->b = (uint64_t)(uintptr_t)target;
        e->a = (bits & QT_Q_CONCURRENT) | QT_Q_KNOWN;
        known_queue_insert((uintptr_t)q);
    }
    uint32_t arg = (bits & 3u) | ((qos & 0xffu) << 8) | ((uint32_t)((relpri + 128) & 0xff) << 16);
    uint64_t words[2] = { (uint64_t)(uintptr_t)q, (uint64_t)(uintptr_t)target };
    qt_thread_t *m = qt_meta_begin(t);
    qt_rec_string(m, QT_QUEUE_CREATE, arg, words, 2, label ? label : "");
    qt_meta_end(m, t);
}

void *dispatch_queue_create(const char *label, void *attr) {
    QT_PROLOGUE(dispatch_queue_create)
    if (!qt_is_user_call(t, ra)) return real.queue_create(label, attr);
    t->depth++;
    void *q = real.queue_create(label, attr);
    t->depth--;
    if (q) record_queue_create(t, q, label, attr, NULL);
    return q;
}

void *dispatch_queue_create_with_target(const char *label, void *attr, void *target) {
    QT_PROLOGUE(dispatch_queue_create_with_target)
    if (!qt_is_user_call(t, ra)) return real.queue_create_with_target(label, attr, target);
    t->depth++;
    void *q = real.queue_create_with_target(label, attr, target);
    t->depth--;
    if (q) record_queue_create(t, q, label, attr, target);
    return q;
}

void *dispatch_queue_attr_make_with_qos_class(void *attr, unsigned qos, int relpri) {
    qt_resolve();
    void *r = real.attr_make_with_qos_class(attr, qos, relpri);
    if (r) remember_attr(r, attr_bits(attr));
    return r;
}

void *dispatch_queue_attr_make_initially_inactive(void *attr) {
    qt_resolve();
    void *r = real.attr_make_initially_inactive(attr);
    if (r) remember_attr(r, attr_bits(attr) | QT_Q_INACTIVE);
    return r;
}

void *dispatch_get_global_queue(intptr_t identifier, uintptr_t flags) {
    QT_PROLOGUE(dispatch_get_global_queue)
    void *q = real.get_global_queue(identifier, flags);
    if (q && qt_is_user_call(t, ra)) note_queue(t, q);
    return q;
}

void dispatch_set_target_queue(void *object, void *target) {
    QT_PROLOGUE(dispatch_set_target_queue)
    if (qt_is_user_call(t, ra)) {
        qt_entry_t *e = table_find(g_queues, QT_TABLE_SIZE, (uintptr_t)object, 0);
        if (e) e->b = (uint64_t)(uintptr_t)target;
        if (target) note_queue(t, target);
        qt_thread_t *m = qt_meta_begin(t);
        qt_rec2(m, QT_SET_TARGET, 0, 0, (uint64_t)(uintptr_t)object, (uint64_t)(uintptr_t)target);
        qt_meta_end(m, t);
    }
    real.set_target_queue(object, target);
}

#define OBJECT_API(name, field, type)                                              \
    void name(void *object) {                                                      \
        QT_PROLOGUE(name)                                                          \
        if (qt_is_user_call(t, ra)) qt_rec1(t, type, 0, 0, (uint64_t)(uintptr_t)object); \
        real.field(object);                                                        \
    }

OBJECT_API(dispatch_suspend, suspend, QT_SUSPEND)
OBJECT_API(dispatch_resume, resume, QT_RESUME)
OBJECT_API(dispatch_activate, activate, QT_ACTIVATE)

// ---- DispatchWorkItem (dispatch_block_*) ----

/// ENQUEUE of a DispatchWorkItem: its id was given when it was created.
void enqueue_workitem(qt_thread_t *t, unsigned kind, unsigned flags8, void *q, void *block, uint64_t extra) {
    qt_entry_t *e = table_find(g_workitems, QT_TABLE_SIZE, (uintptr_t)block, 0);
    uint64_t id = e ? e->a : 0;
    if (e && (e->b & 1)) flags8 |= QT_EF_BARRIER;  // DISPATCH_BLOCK_BARRIER
    uint32_t site = e ? (uint32_t)(e->b >> 32) : 0;
    note_queue(t, q);
    qt_rec4(t, QT_ENQUEUE, flags8 | QT_EF_WORKITEM, kind, id, (uint64_t)(uintptr_t)q, extra, site);
}

static void workitem_invoke(qt_wrap_t *w) {
    qt_thread_t *t = &qt_tls;
    int saved = t->depth;
    t->depth = 0;
    qt_rec1(t, QT_START, QT_EF_WORKITEM, 0, w->id);
    qt_operation_started(t, w->id, w->inner);
    qt_invoke_block(w->inner);
    qt_rec1(t, QT_END, 0, 0, w->id);
    t->depth = saved;
}

/// `site`: the body's code and where the work item was created (its ENQUEUEs reuse it).
static inline void remember_workitem(qt_thread_t *t, void *block, uint64_t id, unsigned long flags, unsigned qos,
                                     uint32_t site) {
    if (!block) return;
    qt_entry_t *e = table_find(g_workitems, QT_TABLE_SIZE, (uintptr_t)block, 1);
    if (e) { e->a = id; e->b = (flags & 0xFFFFFFFFu) | ((uint64_t)site << 32); }
    qt_rec2(t, QT_WORKITEM_CREATE, 0, (uint32_t)(flags & 0xffffff) | ((qos & 0xffu) << 24), id, (uint64_t)(uintptr_t)block);
}

void *dispatch_block_create(unsigned long flags, void *block) {
    QT_PROLOGUE(dispatch_block_create)
    if (!qt_is_user_call(t, ra) || !block) return real.block_create(flags, block);
    uint64_t id = qt_next_id(t);
    qt_wrap_t w = make_wrap((void *)workitem_invoke, block, NULL, NULL, id, 0);
    t->depth++;
    void *r = real.block_create(flags, &w);
    t->depth--;
    remember_workitem(t, r, id, flags, 0, qt_block_site(t, block, ra));
    return r;
}

void *dispatch_block_create_with_qos_class(unsigned long flags, unsigned qos, int relpri, void *block) {
    QT_PROLOGUE(dispatch_block_create_with_qos_class)
    if (!qt_is_user_call(t, ra) || !block) return real.block_create_with_qos_class(flags, qos, relpri, block);
    uint64_t id = qt_next_id(t);
    qt_wrap_t w = make_wrap((void *)workitem_invoke, block, NULL, NULL, id, 0);
    t->depth++;
    void *r = real.block_create_with_qos_class(flags, qos, relpri, &w);
    t->depth--;
    remember_workitem(t, r, id, flags, qos, qt_block_site(t, block, ra));
    return r;
}

void dispatch_block_perform(unsigned long flags, void *block) {
    QT_PROLOGUE(dispatch_block_perform)
    if (!qt_is_user_call(t, ra) || !block) { real.block_perform(flags, block); return; }
    uint64_t id = qt_next_id(t);
    qt_rec1(t, QT_WORKITEM_PERFORM, 0, 0, id);
    qt_wrap_t w = make_wrap((void *)workitem_invoke, block, NULL, NULL, id, 0);
    t->depth++;
    real.block_perform(flags, &w);
    t->depth--;
}

static void notify_invoke(qt_wrap_t *w) {
    qt_thread_t *t = &qt_tls;
    int saved = t->depth;
    t->depth = 0;
    qt_rec1(t, QT_START, 0, QT_KIND_WORKITEM_NOTIFY, w->id);
    held_push(t, w->object);
    qt_invoke_block(w->inner);
    held_pop(t);
    qt_rec1(t, QT_END, 0, 0, w->id);
    t->depth = saved;
}

void dispatch_block_notify(void *block, void *q, void *notification) {
    QT_PROLOGUE(dispatch_block_notify)
    if (!qt_is_user_call(t, ra) || !notification) { real.block_notify(block, q, notification); return; }
    uint64_t id = qt_next_id(t);
    qt_entry_t *e = table_find(g_workitems, QT_TABLE_SIZE, (uintptr_t)block, 0);
    note_queue(t, q);
    qt_rec3(t, QT_ENQUEUE, 0, QT_KIND_WORKITEM_NOTIFY, id, (uint64_t)(uintptr_t)q, e ? e->a : 0);
    qt_wrap_t w = make_wrap((void *)notify_invoke, notification, NULL, q, id, 0);
    t->depth++;
    real.block_notify(block, q, &w);
    t->depth--;
}

/// DispatchWorkItem.wait(): a blocking call like a group wait (libdispatch waits on the block's
/// own group, a call the shim does not see). Tried without waiting first, as group waits are:
/// only a wait that really blocks pays for its call site. A wait that timed out clears
/// libdispatch's "waiting" flag, so the second call is allowed (a block may be waited for once).
long dispatch_block_wait(void *block, uint64_t timeout) {
    QT_PROLOGUE(dispatch_block_wait)
    if (!qt_is_user_call(t, ra) || !block) return real.block_wait(block, timeout);
    qt_entry_t *e = table_find(g_workitems, QT_TABLE_SIZE, (uintptr_t)block, 0);
    uint64_t id = e ? e->a : 0;
    qt_rec2(t, QT_WORKITEM_WAIT_BEGIN, 0, 0, id, timeout);
    t->depth++;
    long r = real.block_wait(block, 0 /* DISPATCH_TIME_NOW */);
    int blocked = 0;
    if (r != 0 && timeout != 0) { blocked = 1; r = real.block_wait(block, timeout); }
    t->depth--;
    uint32_t site = blocked ? qt_wait_site(t, (uintptr_t)ra) : 0;
    qt_rec2(t, QT_WORKITEM_WAIT_END, 0, r != 0, id, site);
    return r;
}
