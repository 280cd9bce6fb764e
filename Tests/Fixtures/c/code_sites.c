// code_sites.c: C blocks and `_f` functions reach Dispatch from known lines (marked `SITE:`,
// found by CodeIdentityRecordTests). Built with clang -g -fblocks.
#include <dispatch/dispatch.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static atomic_int ran;

static void work_fn(void *context) {
    (void)context;
    usleep(2000);
    atomic_fetch_add(&ran, 1);
}

static void submit_blocks(dispatch_queue_t q) {
    for (int i = 0; i < 4; i++) dispatch_async(q, ^{ usleep(1000); atomic_fetch_add(&ran, i); });  // SITE: c-block
}

static void submit_functions(dispatch_queue_t q) {
    for (int i = 0; i < 3; i++) dispatch_async_f(q, NULL, work_fn);  // SITE: c-function
}

int main(void) {
    dispatch_queue_t q = dispatch_queue_create("fx.c.sites", NULL);
    submit_blocks(q);
    submit_functions(q);
    dispatch_sync_f(q, NULL, work_fn);  // SITE: c-sync
    dispatch_semaphore_t s = dispatch_semaphore_create(0);
    dispatch_after(dispatch_time(DISPATCH_TIME_NOW, 5000000), q, ^{ dispatch_semaphore_signal(s); });
    dispatch_semaphore_wait(s, DISPATCH_TIME_FOREVER);  // SITE: c-semaphore-wait
    printf("ran %d\n", atomic_load(&ran));
    return 0;
}
