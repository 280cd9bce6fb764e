// libdispatch's starfish pattern (its tests/dispatch_starfish.c), for scripts/bench-record.py
// --starfish: N serial queues target one concurrent queue; every queue pings all the others
// and each ping is answered by a pong on the pinging queue: N * (2N + 1) items per lap, up to
// ~N * N of them pending at once. `f` submits with dispatch_async_f (as the original and
// Swift Concurrency do), `block` the same with dispatch_async and blocks.
// Usage: bench-starfish f|block [N=1000] [LAPS=1]; prints wall ns per item.
#include <dispatch/dispatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { dispatch_queue_t q; long remaining; } node_t;

static node_t *nodes;
static long count, nodes_left;
static dispatch_semaphore_t done;

static void node_done(void) {
    if (__atomic_sub_fetch(&nodes_left, 1, __ATOMIC_ACQ_REL) == 0) dispatch_semaphore_signal(done);
}

// ---- function items (dispatch_async_f), as in libdispatch's tests/dispatch_starfish.c ----
static void pong_f(void *ctx) {
    node_t *n = ctx;
    if (--n->remaining == 0) node_done();
}
static void ping_f(void *ctx) { node_t *from = ctx; dispatch_async_f(from->q, from, pong_f); }
static void start_f(void *ctx) {
    node_t *n = ctx;
    for (long i = 0; i < count; i++) dispatch_async_f(nodes[i].q, n, ping_f);
}

// ---- the same with blocks (dispatch_async) ----
static void start_b(node_t *n) {
    for (long i = 0; i < count; i++)
        dispatch_async(nodes[i].q, ^{
            dispatch_async(n->q, ^{ if (--n->remaining == 0) node_done(); });
        });
}

static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + ts.tv_nsec * 1e-9; }

/// As the original: the queues are created suspended, get their start item, then all resume.
static void make_queues(void) {
    dispatch_queue_t root = dispatch_get_global_queue(0, 0);
    for (long i = 0; i < count; i++) {
        char label[64];
        snprintf(label, sizeof label, "starfish.node#%ld", i);
        nodes[i].q = dispatch_queue_create(label, DISPATCH_QUEUE_SERIAL);
        dispatch_suspend(nodes[i].q);
        dispatch_set_target_queue(nodes[i].q, root);
        nodes[i].remaining = count;
    }
}

static void lap(int blocks) {
    nodes_left = count;
    make_queues();
    for (long i = 0; i < count; i++) {
        node_t *n = &nodes[i];
        if (blocks) dispatch_async(n->q, ^{ start_b(n); });
        else dispatch_async_f(n->q, n, start_f);
    }
    for (long i = 0; i < count; i++) dispatch_resume(nodes[i].q);
    dispatch_semaphore_wait(done, DISPATCH_TIME_FOREVER);
    for (long i = 0; i < count; i++) dispatch_release(nodes[i].q);
}

int main(int argc, char **argv) {
    int blocks = argc > 1 && strcmp(argv[1], "block") == 0;
    count = argc > 2 ? atol(argv[2]) : 1000;
    long laps = argc > 3 ? atol(argv[3]) : 1;
    nodes = calloc((size_t)count, sizeof *nodes);
    done = dispatch_semaphore_create(0);
    double t0 = now();
    for (long i = 0; i < laps; i++) lap(blocks);
    double items = (double)laps * (double)count * (2.0 * (double)count + 1.0);
    printf("starfish %s: %ld queues, %ld laps, %.0f items, ns/item %.1f\n", blocks ? "block" : "f",
           count, laps, items, (now() - t0) * 1e9 / items);
    return 0;
}
