// Threads, annotations and the process life cycle: pthread_create (THREAD_START of the
// threads of a traced process) and pthread_setname_np, the qtrace_* annotation API
// (qtrace_shim.h), fork and exit hooks (exec: shim_exec.c), and the constructor that arms the shim.
#include "shim_internal.h"

#include <errno.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

// ---- threads ----

typedef struct { void *(*fn)(void *); void *arg; uint64_t creator; uint32_t kind; } qt_thread_start_t;

static pthread_key_t g_thread_exit_key;

static void *thread_trampoline(void *p) {
    qt_thread_start_t start = *(qt_thread_start_t *)p;
    free(p);
    qt_thread_t *t = &qt_tls;
    qt_rec1(t, QT_THREAD_START, 0, start.kind, start.creator);
    pthread_setspecific(g_thread_exit_key, (void *)(uintptr_t)start.kind);
    if (start.kind == QT_THREAD_KIND_WORKER) qt_ring_workers_changed(+1);
    return start.fn(start.arg);
}

static void thread_exit_destructor(void *kind) {
    qt_thread_t *t = &qt_tls;
    if (t->pos) qt_rec1(t, QT_THREAD_EXIT, 0, 0, 0);
    if ((uintptr_t)kind == QT_THREAD_KIND_WORKER) qt_ring_workers_changed(-1);
    qt_ring_thread_exit(t);
    slot_thread_exit(t);
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
    qt_resolve();
    void *ra = __builtin_return_address(0);
    uintptr_t a = (uintptr_t)ra;
    int from_dispatch = a >= g_dispatch_lo && a < g_dispatch_hi;
    // Only threads of a process that is tracing Dispatch are followed.
    if (!QT_RECORDING || (!from_dispatch && qtrace_trace_path() == NULL))
        return real.pthread_create(thread, attr, fn, arg);
    qt_thread_start_t *start = malloc(sizeof *start);
    if (!start) return real.pthread_create(thread, attr, fn, arg);
    qt_thread_t *t = &qt_tls;
    *start = (qt_thread_start_t){ fn, arg, (uint64_t)(t->tid ? t->tid : qt_gettid()), from_dispatch ? QT_THREAD_KIND_WORKER : QT_THREAD_KIND_OTHER };
    int rc = real.pthread_create(thread, attr, thread_trampoline, start);
    if (rc != 0) free(start);
    return rc;
}

int pthread_setname_np(pthread_t thread, const char *name) {
    qt_resolve();
    int rc = real.pthread_setname_np(thread, name);
    // glibc declares `name` nonnull, so the compiler would assume a test of it true, drop it
    // and warn; read through a volatile, the test stays for a caller that passes NULL anyway.
    const char *volatile name_or_null = name;
    // A name over 15 bytes fails (ERANGE) but is still the name the program gave the thread
    // (Foundation's Thread.name passes it whole): the trace keeps it.
    if ((rc == 0 || rc == ERANGE) && QT_RECORDING && name_or_null && pthread_equal(thread, pthread_self()) && qtrace_trace_path())
        qt_rec_string(&qt_tls, QT_THREAD_NAME, 0, NULL, 0, name);
    return rc;
}

// ---- annotations (qtrace_shim.h) ----

void qtrace_mark(const char *name) {
    if (!QT_RECORDING || !name) return;
    qt_rec_string(&qt_tls, QT_MARK, 0, NULL, 0, name);
}

uint64_t qtrace_interval_begin(const char *name) {
    if (!QT_RECORDING || !name) return 0;
    qt_thread_t *t = &qt_tls;
    uint64_t id = qt_next_id(t);
    uint64_t words[1] = { id };
    qt_rec_string(t, QT_INTERVAL_BEGIN, 0, words, 1, name);
    return id;
}

void qtrace_interval_end(uint64_t interval_id) {
    if (!QT_RECORDING || interval_id == 0) return;
    qt_rec1(&qt_tls, QT_INTERVAL_END, 0, 0, interval_id);
}

void qtrace_name_thread(const char *name) {
    if (!QT_RECORDING || !name) return;
    qt_rec_string(&qt_tls, QT_THREAD_NAME, 0, NULL, 0, name);
}

// ---- process life cycle ----

static void after_fork_child(void) {
    g_process_pid = getpid();
    qt_recorder_after_fork_child();
    qt_sites_after_fork_child();
    slot_after_fork_child();
}

static void at_exit(void) { qtrace_finish(); }

const volatile int *qt_gate = &qt_enabled;

/// Armed but off (docs/armed.md): with QTRACE_ARMED=1 the gate reads word 0 of the control
/// file (QTRACE_CONTROL, else QTRACE_OUTPUT + ".ctl", created zeroed = off when missing),
/// which `qtrace on`/`qtrace off` write. Children inherit the variables and map the same
/// file: one switch for the whole recording. A control file that cannot be mapped keeps the
/// process off: armed means nothing is recorded until asked.
static void qt_arm_from_env(void) {
    if (!qt_env_flag("QTRACE_ARMED")) return;
    static int off;
    qt_gate = &off;
    char path[4096];
    const char *control = getenv("QTRACE_CONTROL");
    const char *output = getenv("QTRACE_OUTPUT");
    if (control && *control) {
        snprintf(path, sizeof path, "%s", control);
    } else if (output && *output) {
        snprintf(path, sizeof path, "%s.ctl", output);
    } else {
        return;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return;
    struct stat st;
    if (fstat(fd, &st) != 0 || (st.st_size < 4096 && ftruncate(fd, 4096) != 0)) { close(fd); return; }
    void *word = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (word != MAP_FAILED) qt_gate = (const volatile int *)word;
}

__attribute__((constructor)) static void qt_init(void) {
    qt_resolve();
    if (real.async == NULL) return;  // no libdispatch in this process: stay inert
    // A linked copy of the shim (QTrace library, in the executable) and a preloaded one may
    // both be present: only the copy that the dynamic linker resolves dispatch_async to
    // records; the other just forwards.
    if (dlsym(RTLD_DEFAULT, "dispatch_async") != (void *)qt_own_dispatch_async) return;
    pthread_key_create(&g_thread_exit_key, thread_exit_destructor);
    pthread_atfork(NULL, NULL, after_fork_child);
    atexit(at_exit);
    g_process_pid = getpid();
    // The trace file is created on the first recorded event, so processes that load
    // libdispatch but never use it leave no file behind.
    qt_recorder_init_from_env();
    qt_stubs_init_from_env();
    qt_arm_from_env();
}
