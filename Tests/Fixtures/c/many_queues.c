// More queues than the shim's known-queue table holds (shim_internal.h: 2048 sets of 4), made
// one after another so that they crowd its sets: items go round them twice, each time a
// function item and a block, so a queue pushed out of the table is looked up again. Then items
// onto a global queue, which the shim did not see created (it records QUEUE_INFO for it).
#include <dispatch/dispatch.h>
#include <stdio.h>
#include <stdlib.h>

enum { QUEUES = 12000, ROUNDS = 2, GLOBAL_ITEMS = 100 };

static long ran[QUEUES];
static long global_ran;

static void count_item(void *index) { ran[(long)index]++; }  // serial queue: no race
static void count_global(void *semaphore) {
    __atomic_fetch_add(&global_ran, 1, __ATOMIC_RELAXED);
    dispatch_semaphore_signal(semaphore);
}
static void nothing(void *unused) { (void)unused; }

int main(void) {
    dispatch_queue_t *queues = calloc(QUEUES, sizeof *queues);
    for (long i = 0; i < QUEUES; i++) {
        char label[32];
        snprintf(label, sizeof label, "many.%ld", i);
        queues[i] = dispatch_queue_create(label, DISPATCH_QUEUE_SERIAL);
    }
    for (int round = 0; round < ROUNDS; round++)
        for (long i = 0; i < QUEUES; i++) {
            dispatch_async_f(queues[i], (void *)i, count_item);
            dispatch_async(queues[i], ^{ count_item((void *)i); });
        }
    long total = 0;
    for (long i = 0; i < QUEUES; i++) {
        dispatch_sync_f(queues[i], NULL, nothing);  // a serial queue: every item before it has run
        total += ran[i];
    }
    dispatch_semaphore_t done = dispatch_semaphore_create(0);
    dispatch_queue_t global = dispatch_get_global_queue(DISPATCH_QUEUE_PRIORITY_LOW, 0);
    for (int i = 0; i < GLOBAL_ITEMS; i++) dispatch_async_f(global, done, count_global);
    for (int i = 0; i < GLOBAL_ITEMS; i++) dispatch_semaphore_wait(done, DISPATCH_TIME_FOREVER);
    printf("queues %d, items %ld, global items %ld\n", QUEUES, total, global_ran);
    return 0;
}
