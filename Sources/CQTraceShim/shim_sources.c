// Sources and Dispatch I/O: creation, timers, handlers (wrapped in hand-made blocks that
// record HANDLER_BEGIN/END), cancel and merge; I/O channels, reads, writes, barriers, close.
#include "shim_internal.h"

// ---- sources ----

static uint32_t source_type_code(const void *type) {
    for (uint32_t i = 1; i < QT_SOURCE_TYPE_COUNT; i++) if (type && type == g_source_types[i]) return i;
    return 0;
}

void *dispatch_source_create(const void *type, uintptr_t handle, uintptr_t mask, void *q) {
    QT_PROLOGUE(dispatch_source_create)
    if (!qt_is_user_call(t, ra)) return real.source_create(type, handle, mask, q);
    t->depth++;
    void *s = real.source_create(type, handle, mask, q);
    t->depth--;
    if (s) {
        if (q) note_queue(t, q);
        qt_thread_t *m = qt_meta_begin(t);
        qt_rec4(m, QT_SOURCE_CREATE, 0, source_type_code(type), (uint64_t)(uintptr_t)s, handle, mask, (uint64_t)(uintptr_t)q);
        qt_meta_end(m, t);
    }
    return s;
}

void dispatch_source_set_timer(void *s, uint64_t start, uint64_t interval, uint64_t leeway) {
    QT_PROLOGUE(dispatch_source_set_timer)
    if (qt_is_user_call(t, ra)) qt_rec4(t, QT_SOURCE_SET_TIMER, 0, 0, (uint64_t)(uintptr_t)s, start, interval, leeway);
    real.source_set_timer(s, start, interval, leeway);
}

static void handler_invoke(qt_wrap_t *w) {
    qt_thread_t *t = &qt_tls;
    int saved = t->depth;
    t->depth = 0;
    uint64_t data = real.source_get_data ? real.source_get_data(w->object) : 0;
    qt_rec2(t, QT_SOURCE_HANDLER_BEGIN, 0, w->which, (uint64_t)(uintptr_t)w->object, data);
    if (w->inner) qt_invoke_block(w->inner);
    else w->fn(real.get_context(w->object));
    qt_rec1(t, QT_SOURCE_HANDLER_END, 0, w->which, (uint64_t)(uintptr_t)w->object);
    t->depth = saved;
}

static void set_handler(qt_thread_t *t, void *ra, uint32_t which, void *s, void *block, qt_fn_t fn,
                        void (*real_block)(void *, void *), void (*real_fn)(void *, qt_fn_t)) {
    if (!qt_is_user_call(t, ra) || (!block && !fn)) {
        if (real_fn && !block) real_fn(s, fn); else real_block(s, block);
        return;
    }
    uint32_t site = block ? qt_block_site(t, block, ra) : qt_function_site(t, (void *)fn, ra);
    qt_thread_t *m = qt_meta_begin(t);
    qt_rec2(m, QT_SOURCE_SET_HANDLER, 0, which, (uint64_t)(uintptr_t)s, site);
    qt_meta_end(m, t);
    // The _f handler is called with the source's context; the wrapper block fetches it the
    // same way, so one wrapper kind serves both.
    qt_wrap_t w = make_wrap((void *)handler_invoke, block, fn, s, 0, which);
    t->depth++;
    real_block(s, &w);
    t->depth--;
}

void dispatch_source_set_event_handler(void *s, void *block) {
    QT_PROLOGUE(dispatch_source_set_event_handler)
    set_handler(t, ra, QT_HANDLER_EVENT, s, block, NULL, real.source_set_event_handler, NULL);
}
void dispatch_source_set_event_handler_f(void *s, qt_fn_t fn) {
    QT_PROLOGUE(dispatch_source_set_event_handler_f)
    set_handler(t, ra, QT_HANDLER_EVENT, s, NULL, fn, real.source_set_event_handler, real.source_set_event_handler_f);
}
void dispatch_source_set_cancel_handler(void *s, void *block) {
    QT_PROLOGUE(dispatch_source_set_cancel_handler)
    set_handler(t, ra, QT_HANDLER_CANCEL, s, block, NULL, real.source_set_cancel_handler, NULL);
}
void dispatch_source_set_cancel_handler_f(void *s, qt_fn_t fn) {
    QT_PROLOGUE(dispatch_source_set_cancel_handler_f)
    set_handler(t, ra, QT_HANDLER_CANCEL, s, NULL, fn, real.source_set_cancel_handler, real.source_set_cancel_handler_f);
}
void dispatch_source_set_registration_handler(void *s, void *block) {
    QT_PROLOGUE(dispatch_source_set_registration_handler)
    set_handler(t, ra, QT_HANDLER_REGISTRATION, s, block, NULL, real.source_set_registration_handler, NULL);
}
void dispatch_source_set_registration_handler_f(void *s, qt_fn_t fn) {
    QT_PROLOGUE(dispatch_source_set_registration_handler_f)
    set_handler(t, ra, QT_HANDLER_REGISTRATION, s, NULL, fn, real.source_set_registration_handler, real.source_set_registration_handler_f);
}

void dispatch_source_cancel(void *s) {
    QT_PROLOGUE(dispatch_source_cancel)
    if (qt_is_user_call(t, ra)) qt_rec1(t, QT_SOURCE_CANCEL, 0, 0, (uint64_t)(uintptr_t)s);
    real.source_cancel(s);
}

void dispatch_source_merge_data(void *s, uintptr_t value) {
    QT_PROLOGUE(dispatch_source_merge_data)
    if (qt_is_user_call(t, ra)) qt_rec2(t, QT_SOURCE_MERGE_DATA, 0, 0, (uint64_t)(uintptr_t)s, value);
    real.source_merge_data(s, value);
}

// ---- Dispatch I/O ----

static void io_handler_invoke(qt_wrap_t *w, bool done, void *data, int error) {
    qt_thread_t *t = &qt_tls;
    int saved = t->depth;
    t->depth = 0;
    uint64_t bytes = data && real.data_get_size ? real.data_get_size(data) : 0;
    qt_rec2(t, QT_IO_HANDLER_BEGIN, 0, (uint32_t)(done ? 1 : 0) | ((uint32_t)error << 8), w->id, bytes);
    ((void (*)(void *, bool, void *, int))((struct qt_block_layout *)w->inner)->invoke)(w->inner, done, data, error);
    qt_rec1(t, QT_IO_HANDLER_END, 0, 0, w->id);
    t->depth = saved;
}

static void fd_handler_invoke(qt_wrap_t *w, void *data, int error) {
    qt_thread_t *t = &qt_tls;
    int saved = t->depth;
    t->depth = 0;
    uint64_t bytes = data && real.data_get_size ? real.data_get_size(data) : 0;
    qt_rec2(t, QT_IO_HANDLER_BEGIN, 0, 1u | ((uint32_t)error << 8), w->id, bytes);
    ((void (*)(void *, void *, int))((struct qt_block_layout *)w->inner)->invoke)(w->inner, data, error);
    qt_rec1(t, QT_IO_HANDLER_END, 0, 0, w->id);
    t->depth = saved;
}

static void cleanup_invoke(qt_wrap_t *w, int error) {
    qt_thread_t *t = &qt_tls;
    int saved = t->depth;
    t->depth = 0;
    qt_rec1(t, QT_IO_CLEANUP_BEGIN, 0, (uint32_t)error, w->id);
    ((void (*)(void *, int))((struct qt_block_layout *)w->inner)->invoke)(w->inner, error);
    qt_rec1(t, QT_IO_CLEANUP_END, 0, 0, w->id);
    t->depth = saved;
}

static void record_io_create(qt_thread_t *t, void *channel, unsigned long type, uint64_t fd, uint64_t cleanup_id,
                             const char *path, void *q) {
    if (!channel) return;
    if (q) note_queue(t, q);
    uint64_t words[3] = { (uint64_t)(uintptr_t)channel, fd, cleanup_id };
    qt_thread_t *m = qt_meta_begin(t);
    qt_rec_string(m, QT_IO_CREATE, (uint32_t)type, words, 3, path ? path : "");
    qt_meta_end(m, t);
}

void *dispatch_io_create(unsigned long type, int fd, void *q, void *cleanup) {
    QT_PROLOGUE(dispatch_io_create)
    if (!qt_is_user_call(t, ra)) return real.io_create(type, fd, q, cleanup);
    uint64_t id = cleanup ? qt_next_id(t) : 0;
    qt_wrap_t w = make_wrap((void *)cleanup_invoke, cleanup, NULL, NULL, id, 0);
    t->depth++;
    void *c = real.io_create(type, fd, q, cleanup ? &w : NULL);
    t->depth--;
    record_io_create(t, c, type, (uint64_t)fd, id, NULL, q);
    return c;
}

void *dispatch_io_create_with_path(unsigned long type, const char *path, int oflag, unsigned mode, void *q, void *cleanup) {
    QT_PROLOGUE(dispatch_io_create_with_path)
    if (!qt_is_user_call(t, ra)) return real.io_create_with_path(type, path, oflag, mode, q, cleanup);
    uint64_t id = cleanup ? qt_next_id(t) : 0;
    qt_wrap_t w = make_wrap((void *)cleanup_invoke, cleanup, NULL, NULL, id, 0);
    t->depth++;
    void *c = real.io_create_with_path(type, path, oflag, mode, q, cleanup ? &w : NULL);
    t->depth--;
    record_io_create(t, c, type, ~0ull, id, path, q);
    return c;
}

void *dispatch_io_create_with_io(unsigned long type, void *io, void *q, void *cleanup) {
    QT_PROLOGUE(dispatch_io_create_with_io)
    if (!qt_is_user_call(t, ra)) return real.io_create_with_io(type, io, q, cleanup);
    uint64_t id = cleanup ? qt_next_id(t) : 0;
    qt_wrap_t w = make_wrap((void *)cleanup_invoke, cleanup, NULL, NULL, id, 0);
    t->depth++;
    void *c = real.io_create_with_io(type, io, q, cleanup ? &w : NULL);
    t->depth--;
    record_io_create(t, c, type, ~0ull, id, NULL, q);
    return c;
}

void dispatch_io_read(void *channel, int64_t offset, size_t length, void *q, void *handler) {
    QT_PROLOGUE(dispatch_io_read)
    if (!qt_is_user_call(t, ra) || !handler) { real.io_read(channel, offset, length, q, handler); return; }
    uint64_t id = qt_next_id(t);
    note_queue(t, q);
    qt_rec4(t, QT_IO_READ, 0, 0, (uint64_t)(uintptr_t)channel, id, (uint64_t)offset, (uint64_t)length);
    qt_wrap_t w = make_wrap((void *)io_handler_invoke, handler, NULL, channel, id, 0);
    t->depth++;
    real.io_read(channel, offset, length, q, &w);
    t->depth--;
}

void dispatch_io_write(void *channel, int64_t offset, void *data, void *q, void *handler) {
    QT_PROLOGUE(dispatch_io_write)
    if (!qt_is_user_call(t, ra) || !handler) { real.io_write(channel, offset, data, q, handler); return; }
    uint64_t id = qt_next_id(t);
    uint64_t length = data && real.data_get_size ? real.data_get_size(data) : 0;
    note_queue(t, q);
    qt_rec4(t, QT_IO_WRITE, 0, 0, (uint64_t)(uintptr_t)channel, id, (uint64_t)offset, length);
    qt_wrap_t w = make_wrap((void *)io_handler_invoke, handler, NULL, channel, id, 0);
    t->depth++;
    real.io_write(channel, offset, data, q, &w);
    t->depth--;
}

void dispatch_read(int fd, size_t length, void *q, void *handler) {
    QT_PROLOGUE(dispatch_read)
    if (!qt_is_user_call(t, ra) || !handler) { real.read(fd, length, q, handler); return; }
    uint64_t id = qt_next_id(t);
    note_queue(t, q);
    qt_rec4(t, QT_IO_READ, 0, 0, 0, id, (uint64_t)fd, (uint64_t)length);
    qt_wrap_t w = make_wrap((void *)fd_handler_invoke, handler, NULL, NULL, id, 0);
    t->depth++;
    real.read(fd, length, q, &w);
    t->depth--;
}

void dispatch_write(int fd, void *data, void *q, void *handler) {
    QT_PROLOGUE(dispatch_write)
    if (!qt_is_user_call(t, ra) || !handler) { real.write(fd, data, q, handler); return; }
    uint64_t id = qt_next_id(t);
    uint64_t length = data && real.data_get_size ? real.data_get_size(data) : 0;
    note_queue(t, q);
    qt_rec4(t, QT_IO_WRITE, 0, 0, 0, id, (uint64_t)fd, length);
    qt_wrap_t w = make_wrap((void *)fd_handler_invoke, handler, NULL, NULL, id, 0);
    t->depth++;
    real.write(fd, data, q, &w);
    t->depth--;
}

void dispatch_io_barrier(void *channel, void *barrier) {
    QT_PROLOGUE(dispatch_io_barrier)
    if (qt_is_user_call(t, ra)) qt_rec1(t, QT_IO_BARRIER, 0, 0, (uint64_t)(uintptr_t)channel);
    t->depth++;
    real.io_barrier(channel, barrier);
    t->depth--;
}

void dispatch_io_close(void *channel, unsigned long flags) {
    QT_PROLOGUE(dispatch_io_close)
    if (qt_is_user_call(t, ra)) qt_rec1(t, QT_IO_CLOSE, 0, (uint32_t)flags, (uint64_t)(uintptr_t)channel);
    real.io_close(channel, flags);
}
