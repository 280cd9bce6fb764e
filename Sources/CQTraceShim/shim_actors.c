// Actor hops (docs/trace-format.md, "Actors"): shim_swift_entries.S calls qt_actor_hop for
// every swift_task_switch the program's code makes (a hop onto an actor, the main actor, or
// back to the generic executor), whether the runtime then runs the task inline (a free actor)
// or enqueues it (a busy one). One ACTOR_HOP record per hop; an actor's type is named once, by
// the Swift runtime's own swift_getTypeName, in an ACTOR_TYPE record.
#define _GNU_SOURCE
#include "shim_internal.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/// The runtime's functions this file calls (resolved on first use: libswift_Concurrency may be
/// loaded after the first Dispatch call).
typedef void *(*qt_current_task_fn)(void);
typedef struct { const char *data; uintptr_t length; } qt_type_name_t;
typedef qt_type_name_t (*qt_type_name_fn)(const void *metadata, int qualified);

static void *g_real_switch;
static qt_current_task_fn g_current_task;
static qt_type_name_fn g_type_name;

static void resolve_runtime(void) {
    g_current_task = (qt_current_task_fn)dlsym(RTLD_DEFAULT, "swift_task_getCurrent");
    g_type_name = (qt_type_name_fn)dlsym(RTLD_DEFAULT, "swift_getTypeName");
    __atomic_store_n(&g_real_switch, dlsym(RTLD_NEXT, "swift_task_switch"), __ATOMIC_RELEASE);
}

// ---- actor types: metadata -> named once ----

#define QT_ACTOR_TYPES_SIZE 1024
static uintptr_t g_actor_types[QT_ACTOR_TYPES_SIZE];
static pthread_mutex_t g_actor_lock = PTHREAD_MUTEX_INITIALIZER;

static int type_known(uintptr_t metadata, int insert) {
    size_t i = (size_t)((metadata * 0x9E3779B97F4A7C15ull) >> 40) & (QT_ACTOR_TYPES_SIZE - 1);
    for (int probe = 0; probe < 32; probe++, i = (i + 1) & (QT_ACTOR_TYPES_SIZE - 1)) {
        uintptr_t m = __atomic_load_n(&g_actor_types[i], __ATOMIC_ACQUIRE);
        if (m == metadata) return 1;
        if (m == 0) {
            if (insert) __atomic_store_n(&g_actor_types[i], metadata, __ATOMIC_RELEASE);
            return 0;
        }
    }
    return 1;  // full: no more names (the hops still name the metadata)
}

static void name_actor_type(qt_thread_t *t, uintptr_t metadata) {
    if (!g_type_name) return;
    pthread_mutex_lock(&g_actor_lock);
    if (!type_known(metadata, 1)) {
        t->depth++;
        qt_type_name_t name = g_type_name((const void *)metadata, 1);
        t->depth--;
        char text[256];
        size_t n = name.data ? (name.length < sizeof text - 1 ? name.length : sizeof text - 1) : 0;
        if (n) memcpy(text, name.data, n);
        text[n] = 0;
        uint64_t words[1] = { metadata };
        qt_thread_t *meta = qt_meta_begin(t);
        qt_rec_string(meta, QT_ACTOR_TYPE, 0, words, 1, text);
        qt_meta_end(meta, t);
    }
    pthread_mutex_unlock(&g_actor_lock);
}

// ---- the hop ----

/// Words of an AsyncTask: word 4's high half is its id (as for jobs, shim_async.c).
#define QT_TASK_WORD_FLAGS_ID 4

QT_HIDDEN void *qt_actor_hop(uintptr_t resume, uintptr_t identity, uintptr_t implementation, uintptr_t context);

void *qt_actor_hop(uintptr_t resume, uintptr_t identity, uintptr_t implementation, uintptr_t context) {
    (void)context;
    void *real_switch = __atomic_load_n(&g_real_switch, __ATOMIC_ACQUIRE);
    if (QT_UNLIKELY(real_switch == NULL)) {
        resolve_runtime();
        real_switch = g_real_switch;
        if (!real_switch) {
            static const char msg[] = "qtrace: swift_task_switch called but not found in the Swift runtime\n";
            ssize_t w = write(2, msg, sizeof msg - 1); (void)w;
            abort();
        }
    }
    qt_thread_t *t = &qt_tls;
    if (!QT_RECORDING || t->depth != 0) return real_switch;
    const uint64_t *task = g_current_task ? g_current_task() : NULL;
    uint32_t task_id = task ? (uint32_t)(task[QT_TASK_WORD_FLAGS_ID] >> 32) : 0;
    // An executor's identity is its actor (a heap object: word 0 is its metadata), or 0 for
    // the generic executor.
    uintptr_t metadata = identity ? *(const uintptr_t *)identity : 0;
    if (metadata && QT_UNLIKELY(!type_known(metadata, 0))) name_actor_type(t, metadata);
    qt_rec4(t, QT_ACTOR_HOP, 0, task_id, identity, implementation, resume, metadata);
    return real_switch;
}

void qt_actors_after_fork_child(void) {
    pthread_mutex_init(&g_actor_lock, NULL);
    memset(g_actor_types, 0, sizeof g_actor_types);
}
