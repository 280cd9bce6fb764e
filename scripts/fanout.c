// Fan-out load for the collector's benchmarks (docs/performance.md, "Run of 2026-11-27"):
// NQ serial queues, then ITEMS dispatch_async_f items round robin onto them from the main
// thread (all pending at once at first), then one group item per queue to wait for the end.
// Many queues of a few thousand items each: the per-queue statistics (percentiles above the
// 512 values kept exactly) dominated `qtrace stats` on such traces.
//
//   clang -O2 -I/opt/swift/usr/lib/swift scripts/fanout.c -o fanout -L/opt/swift/usr/lib/swift/linux \
//       -ldispatch -lBlocksRuntime -Wl,-rpath,/opt/swift/usr/lib/swift/linux
//   .build/debug/qtrace record -o fanout.qtrace -- ./fanout 400 1000000
#include <dispatch/dispatch.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static atomic_long done;

static void work(void *context) {
    (void)context;
    atomic_fetch_add(&done, 1);
}

int main(int argc, char **argv) {
    int nq = argc > 1 ? atoi(argv[1]) : 400;
    long items = argc > 2 ? atol(argv[2]) : 1000000;
    if (nq <= 0) return 2;
    dispatch_queue_t *queues = malloc(sizeof *queues * (size_t)nq);
    char label[64];
    for (int i = 0; i < nq; i++) {
        snprintf(label, sizeof label, "fanout.q%d", i);
        queues[i] = dispatch_queue_create(label, NULL);
    }
    dispatch_group_t group = dispatch_group_create();
    for (long i = 0; i < items; i++) dispatch_async_f(queues[i % nq], NULL, work);
    for (int i = 0; i < nq; i++) dispatch_group_async_f(group, queues[i], NULL, work);
    dispatch_group_wait(group, DISPATCH_TIME_FOREVER);
    printf("%ld\n", atomic_load(&done));
    return 0;
}
