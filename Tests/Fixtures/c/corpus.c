// corpus.c: the C programs of the findings precision corpus (Tests/Fixtures/findings-corpus.txt,
// FindingsCorpusTests). Each mode is a shape real Dispatch programs have; the corpus file says
// which findings each must raise and which it must not. stdout is the same on every run.
//
//   corpus fanout [QUEUES LAPS ITEMS]  bursts that drain: each lap puts ITEMS function items round
//                                      robin on QUEUES serial queues at once, waits for them, pauses
//   corpus outrun                      a producer that really outruns its consumer (exits undrained)
//   corpus timers                      40 repeating timers of 2..10 ms on 4 serial queues for 0.6 s
//   corpus groups                      200 rounds of a group: async(group:), enter/leave from
//                                      callbacks, notify and a wait
//   corpus sleepers                    items that mostly sleep (blocking I/O's shape): one serial
//                                      queue per CPU for ~1 s, then 200 on the global queue (more
//                                      workers): item time on every CPU, little CPU used
//   corpus spin                        items that compute 5 ms of CPU each, 300 on one serial queue
//                                      per CPU: every CPU busy for 1.5 s
#include <dispatch/dispatch.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_long ran;

static void count_item(void *context) {
    (void)context;
    atomic_fetch_add(&ran, 1);
}

/// About `us` microseconds of CPU (a loop the compiler keeps).
static void compute(int us) {
    volatile unsigned long x = 0;
    for (long i = 0; i < 1000L * us; i++) x += (unsigned long)i;
}

static void fanout(int nq, int laps, long items) {
    dispatch_queue_t *queues = calloc((size_t)nq, sizeof *queues);
    char label[64];
    for (int q = 0; q < nq; q++) {
        snprintf(label, sizeof label, "corpus.fanout.q%d", q);
        queues[q] = dispatch_queue_create(label, NULL);
    }
    for (int lap = 0; lap < laps; lap++) {
        dispatch_group_t group = dispatch_group_create();
        for (long i = 0; i < items; i++) dispatch_group_async_f(group, queues[i % nq], NULL, count_item);
        dispatch_group_wait(group, DISPATCH_TIME_FOREVER);
        dispatch_release(group);
        usleep(150000);  // between laps: the queues are empty
    }
    printf("fanout: %ld items\n", atomic_load(&ran));
}

static void slow_consumer(void *context) {
    (void)context;
    usleep(1000);
    atomic_fetch_add(&ran, 1);
}

static void outrun(void) {
    dispatch_queue_t sink = dispatch_queue_create("corpus.outrun.sink", NULL);
    // ~1 item per 250 µs in, ~1 per 1.1 ms out, for ~1.2 s: thousands left pending at exit.
    for (int i = 0; i < 4000; i++) {
        dispatch_async_f(sink, NULL, slow_consumer);
        usleep(200);
    }
    printf("outrun: produced 4000\n");
    fflush(stdout);
    _exit(0);  // a producer that outruns its consumer does not wait for it
}

static void timers(void) {
    enum { TIMERS = 40, QUEUES = 4 };
    dispatch_queue_t queues[QUEUES];
    char label[64];
    for (int q = 0; q < QUEUES; q++) {
        snprintf(label, sizeof label, "corpus.timers.q%d", q);
        queues[q] = dispatch_queue_create(label, NULL);
    }
    dispatch_source_t sources[TIMERS];
    for (int i = 0; i < TIMERS; i++) {
        uint64_t period = (uint64_t)(2 + i % 9) * NSEC_PER_MSEC;
        dispatch_source_t s = dispatch_source_create(DISPATCH_SOURCE_TYPE_TIMER, 0, 0, queues[i % QUEUES]);
        dispatch_source_set_timer(s, dispatch_time(DISPATCH_TIME_NOW, (int64_t)period), period, period / 10);
        dispatch_source_set_event_handler(s, ^{ compute(20); atomic_fetch_add(&ran, 1); });
        dispatch_resume(s);
        sources[i] = s;
    }
    usleep(600000);
    for (int i = 0; i < TIMERS; i++) dispatch_source_cancel(sources[i]);
    for (int q = 0; q < QUEUES; q++) dispatch_sync(queues[q], ^{});
    printf("timers: fired\n");
}

static void groups(void) {
    dispatch_queue_t work = dispatch_queue_create("corpus.groups.work", DISPATCH_QUEUE_CONCURRENT);
    dispatch_queue_t callbacks = dispatch_queue_create("corpus.groups.callbacks", NULL);
    dispatch_queue_t results = dispatch_queue_create("corpus.groups.results", NULL);
    __block long notified = 0;
    for (int round = 0; round < 200; round++) {
        dispatch_group_t group = dispatch_group_create();
        for (int i = 0; i < 6; i++) dispatch_group_async(group, work, ^{ compute(100); });
        for (int i = 0; i < 3; i++) {
            dispatch_group_enter(group);
            dispatch_async(callbacks, ^{ compute(30); dispatch_group_leave(group); });
        }
        dispatch_group_notify(group, results, ^{ notified++; });
        dispatch_group_wait(group, DISPATCH_TIME_FOREVER);
        dispatch_release(group);
    }
    dispatch_sync(results, ^{});
    printf("groups: %ld notified\n", notified);
}

static void sleeper(void *context) {
    (void)context;
    compute(100);
    usleep(10000);  // a blocking call (a read, a lock) in its place: no CPU meanwhile
    atomic_fetch_add(&ran, 1);
}

/// 5 ms of this thread's CPU time, however fast the machine (a loop of a fixed length would
/// end before the 0.5 s a saturation needs on a fast one).
static void spinner(void *context) {
    (void)context;
    struct timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    long long until = (long long)now.tv_sec * 1000000000LL + now.tv_nsec + 5000000LL;
    do {
        compute(50);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    } while ((long long)now.tv_sec * 1000000000LL + now.tv_nsec < until);
    atomic_fetch_add(&ran, 1);
}

/// One serial queue per CPU, each given `items` of `work`, then, with `global_items`, as many
/// onto the default global queue; waits for all.
static void on_every_cpu(const char *name, dispatch_function_t work, int items, int global_items) {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    dispatch_group_t group = dispatch_group_create();
    char label[64];
    for (long q = 0; q < ncpu; q++) {
        snprintf(label, sizeof label, "corpus.%s.q%ld", name, q);
        dispatch_queue_t queue = dispatch_queue_create(label, NULL);
        for (int i = 0; i < items; i++) dispatch_group_async_f(group, queue, NULL, work);
        dispatch_release(queue);
    }
    dispatch_group_wait(group, DISPATCH_TIME_FOREVER);
    dispatch_queue_t global = dispatch_get_global_queue(DISPATCH_QUEUE_PRIORITY_DEFAULT, 0);
    for (int i = 0; i < global_items; i++) dispatch_group_async_f(group, global, NULL, work);
    dispatch_group_wait(group, DISPATCH_TIME_FOREVER);
    dispatch_release(group);
    printf("%s: %ld items\n", name, atomic_load(&ran));
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "fanout") == 0) {
        fanout(argc > 2 ? atoi(argv[2]) : 100, argc > 3 ? atoi(argv[3]) : 8, argc > 4 ? atol(argv[4]) : 20000);
    } else if (strcmp(mode, "outrun") == 0) {
        outrun();
    } else if (strcmp(mode, "timers") == 0) {
        timers();
    } else if (strcmp(mode, "groups") == 0) {
        groups();
    } else if (strcmp(mode, "sleepers") == 0) {
        on_every_cpu("sleepers", sleeper, 100, 200);
    } else if (strcmp(mode, "spin") == 0) {
        on_every_cpu("spin", spinner, 300, 0);
    } else {
        fprintf(stderr, "corpus: unknown mode '%s' (fanout, outrun, timers, groups, sleepers, spin)\n", mode);
        return 2;
    }
    return 0;
}
