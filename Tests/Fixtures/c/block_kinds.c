// block_kinds.c: every kind of block that can reach dispatch_async and its relatives, for
// the shim's zero-allocation path (a block's heap copy carries its item id): stack blocks
// (the shim makes the copy), a global block (shared: takes a context slot), one heap block
// pending many times at once on two queues (only one submission at a time can carry the id),
// and that heap block through barrier_async, group_async, group_notify and after.
// Prints one line that must read the same traced and untraced.
#include <Block/Block.h>
#include <dispatch/dispatch.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static atomic_int ran;
static void (^global_block)(void) = ^{ atomic_fetch_add(&ran, 1); };

int main(void) {
    dispatch_queue_t a = dispatch_queue_create("fx.c.a", NULL);
    dispatch_queue_t b = dispatch_queue_create("fx.c.b", NULL);
    int one = 1;
    for (int i = 0; i < 1000; i++) dispatch_async(a, ^{ atomic_fetch_add(&ran, one); });
    for (int i = 0; i < 1000; i++) dispatch_async(a, global_block);

    void (^heap)(void) = Block_copy(^{ atomic_fetch_add(&ran, one); });
    dispatch_suspend(a);
    dispatch_suspend(b);
    for (int i = 0; i < 500; i++) {
        dispatch_async(a, heap);
        dispatch_async(b, heap);
    }
    dispatch_resume(a);
    dispatch_resume(b);

    dispatch_group_t group = dispatch_group_create();
    dispatch_barrier_async(a, heap);
    dispatch_group_async(group, b, heap);
    dispatch_group_notify(group, a, heap);
    dispatch_after(dispatch_time(DISPATCH_TIME_NOW, 1000 * 1000), b, heap);
    Block_release(heap);

    const int expected = 1000 + 1000 + 1000 + 4;
    for (int waited = 0; atomic_load(&ran) < expected && waited < 10000; waited++) usleep(1000);
    dispatch_sync(a, ^{});
    dispatch_sync(b, ^{});
    printf("ran %d of %d\n", atomic_load(&ran), expected);
    return atomic_load(&ran) == expected ? 0 : 1;
}
