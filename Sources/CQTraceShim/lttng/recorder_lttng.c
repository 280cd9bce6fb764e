// The LTTng recorder: replaces recorder.c in libqtrace-shim-lttng.so (Makefile target
// shim-lttng). Same interface (recorder.h, qtrace_shim.h), but records go to LTTng-UST
// tracepoints (qtrace_tp.h) and the header facts to a one-time qtrace:process event.
// SwiftPM also compiles this file, without QTRACE_LTTNG, to nothing.
#ifdef QTRACE_LTTNG
#define _GNU_SOURCE
#include "../recorder.h"
#include "../include/qtrace_shim.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

__thread qt_thread_t qt_tls __attribute__((tls_model("initial-exec")));
int qt_enabled;

static struct {
    pthread_mutex_t lock;
    int process_announced;  // qtrace:process emitted (reset in a forked child)
    int process_ended;      // qtrace:process_end emitted (reset in a forked child)
    int exit_hook_set;      // atexit(emit_process_end) done (a forked child inherits it)
    uint64_t main_queue;
    uint64_t id_counter;
    uint64_t dropped;       // events the shim could not record (LTTng's own losses are in the trace)
} g_lttng = { .lock = PTHREAD_MUTEX_INITIALIZER, .id_counter = 1 };

pid_t qt_gettid(void) { return (pid_t)syscall(SYS_gettid); }

static uint64_t clock_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t qt_next_id_block(void) { return __atomic_fetch_add(&g_lttng.id_counter, 1024, __ATOMIC_RELAXED); }

void qt_count_dropped(unsigned type) {
    __atomic_fetch_add(&g_lttng.dropped, 1, __ATOMIC_RELAXED);
    // One event per loss (rare) keeps the per-type counts a reader needs.
    lttng_ust_tracepoint(qtrace, dropped, (uint8_t)type);
}

void qt_recorder_set_main_queue(uint64_t q) { g_lttng.main_queue = q; }

int qt_recorder_open(void) { return 1; }

/// /proc/self/cmdline with its NUL separators turned into spaces, as in the embedded header.
static void read_command_line(char *dst, size_t cap) {
    dst[0] = 0;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, dst, cap - 1);
    close(fd);
    if (n <= 0) return;
    dst[n] = 0;
    for (ssize_t i = 0; i < n - 1; i++) if (dst[i] == 0) dst[i] = ' ';
}

static void emit_process_end(void) { qtrace_finish(); }

static void announce_process_locked(void) {
    if (g_lttng.process_announced) return;
    // shim_threads.c's atexit handler was registered while the shim loaded, before the C
    // runtime registered the destructors' runner: it runs after liblttng-ust has shut down.
    // One registered now (the program is running) runs before, while tracing still works.
    if (!g_lttng.exit_hook_set) {
        g_lttng.exit_hook_set = 1;
        atexit(emit_process_end);
    }
    char executable[256] = "", command_line[1024];
    ssize_t n = readlink("/proc/self/exe", executable, sizeof executable - 1);
    executable[n > 0 ? n : 0] = 0;
    read_command_line(command_line, sizeof command_line);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    uint32_t pid = (uint32_t)getpid();
    lttng_ust_tracepoint(qtrace, process, pid, (uint32_t)getppid(), ncpu > 0 ? (uint32_t)ncpu : 1, pid,
                         g_lttng.main_queue, clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_REALTIME),
                         executable, command_line);
    __atomic_store_n(&g_lttng.process_announced, 1, __ATOMIC_RELEASE);
}

void qt_lttng_announce_thread(qt_thread_t *t) {
    // The lock orders every thread's first record after the process event.
    if (!__atomic_load_n(&g_lttng.process_announced, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&g_lttng.lock);
        announce_process_locked();
        pthread_mutex_unlock(&g_lttng.lock);
    }
    if (t->tid == 0) t->tid = qt_gettid();
    char name[16] = "";
    prctl(PR_GET_NAME, name, 0, 0, 0);
    lttng_ust_tracepoint(qtrace, thread, (uint32_t)getpid(), name);
    t->pos = QT_LTTNG_THREAD_ANNOUNCED;
}

void qt_rec_string(qt_thread_t *t, unsigned type, uint32_t arg, const uint64_t *words, int nwords, const char *s) {
    static const uint64_t no_words[1];
    size_t length = s ? strlen(s) : 0;
    unsigned flags8 = 0;
    if (length > QT_MAX_STRING) { length = QT_MAX_STRING; flags8 = 0x80; }
    qt_lttng_prologue(t);
    lttng_ust_tracepoint(qtrace, record_string, (uint8_t)type, (uint8_t)flags8, arg, words ? words : no_words,
                         (uint8_t)nwords, s ? s : "", (uint32_t)length);
}

void qt_recorder_init_from_env(void) {
    if (qt_env_flag("QTRACE_DISABLE")) return;
    // Preloaded: record; whether anything is kept is the LTTng session's business.
    qt_enabled = 1;
}

void qt_recorder_after_fork_child(void) {
    // The child is a new process: it announces itself (and its threads) again.
    qt_thread_t *t = &qt_tls;
    t->pos = t->end = NULL;
    t->tid = 0;
    t->held_count = 0;
    pthread_mutex_init(&g_lttng.lock, NULL);
    g_lttng.process_announced = 0;
    g_lttng.process_ended = 0;
    g_lttng.dropped = 0;
}

/// An exec ends the process's part of the session like an exit (a failed exec cannot take
/// the process_end event back; the process's later events still arrive).
void qt_recorder_exec(int replacing) {
    if (replacing) qtrace_finish();
}

// ---- public API (qtrace_shim.h) ----

int qtrace_is_enabled(void) { return QT_RECORDING; }

int qtrace_start(const char *path) {
    (void)path;  // the LTTng session decides where the trace goes
    qt_enabled = 1;
    return 0;
}

/// Not a file: the trace is the LTTng session's. Non-NULL once this process has recorded.
const char *qtrace_trace_path(void) {
    return __atomic_load_n(&g_lttng.process_announced, __ATOMIC_ACQUIRE) ? "lttng" : NULL;
}

uint64_t qtrace_dropped_events(void) { return __atomic_load_n(&g_lttng.dropped, __ATOMIC_RELAXED); }

void qtrace_finish(void) {
    if (!__atomic_load_n(&g_lttng.process_announced, __ATOMIC_ACQUIRE)) return;
    if (__atomic_exchange_n(&g_lttng.process_ended, 1, __ATOMIC_ACQ_REL)) return;
    lttng_ust_tracepoint(qtrace, process_end, qtrace_dropped_events());
}
#endif
