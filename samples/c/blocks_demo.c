// blocks_demo.c: libdispatch's C API with blocks, for checking that qtrace records C programs
// (which call dispatch_* directly, not through the Swift overlay) the same way.
//
// Build and run (from the package root):
//   /opt/swift/usr/bin/clang -fblocks -I/opt/swift/usr/lib/swift -L/opt/swift/usr/lib/swift/linux \
//     -Wl,-rpath,/opt/swift/usr/lib/swift/linux samples/c/blocks_demo.c -ldispatch -lBlocksRuntime \
//     -o /tmp/blocks_demo
//   /tmp/blocks_demo
//
// Output is the same on every run; it ends by itself in about 0.2 s with status 0.
#include <dispatch/dispatch.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#define MSEC (1000 * 1000ull)  // nanoseconds per millisecond

// A serial queue as a lock: async appends run in order, and a sync read sees all of them.
static void serial_queue_demo(dispatch_queue_t serial) {
    int storage[5];
    int *squares = storage;  // blocks cannot capture arrays; they capture this pointer
    __block int count = 0;
    for (int i = 1; i <= 5; i++) {
        dispatch_async(serial, ^{ squares[count++] = i * i; });
    }
    __block int sum = 0;
    dispatch_sync(serial, ^{
        for (int i = 0; i < count; i++) sum += squares[i];
    });
    printf("serial queue: %d async items, then sync read: sum of squares %d\n", count, sum);
}

// Readers on a private concurrent queue, a barrier writer between them, all tracked by a group
// whose notify block reports on the serial queue.
static void barrier_and_group_demo(dispatch_queue_t serial, dispatch_queue_t concurrent) {
    dispatch_group_t readers = dispatch_group_create();
    dispatch_semaphore_t reported = dispatch_semaphore_create(0);
    static atomic_int reads_done;
    __block int setting = 1;
    __block int reads_seen_by_barrier = -1;
    __block int setting_seen_after_barrier = -1;

    for (int i = 0; i < 4; i++) {
        dispatch_group_async(readers, concurrent, ^{
            usleep(10 * 1000);  // reading takes a while; the four overlap
            atomic_fetch_add(&reads_done, 1);
        });
    }
    dispatch_barrier_async(concurrent, ^{
        reads_seen_by_barrier = atomic_load(&reads_done);  // waits for all four reads
        setting = 2;
    });
    dispatch_group_async(readers, concurrent, ^{
        setting_seen_after_barrier = setting;  // queued behind the barrier
    });
    dispatch_group_notify(readers, serial, ^{
        printf("barrier ran after %d reads; the read queued after it saw setting=%d\n",
               reads_seen_by_barrier, setting_seen_after_barrier);
        dispatch_semaphore_signal(reported);
    });
    dispatch_semaphore_wait(reported, DISPATCH_TIME_FOREVER);
    dispatch_release(reported);
    dispatch_release(readers);
}

// dispatch_apply: 16 iterations spread over the workers; each writes its own slot.
static void apply_demo(void) {
    long storage[16];
    long *cubes = storage;  // blocks cannot capture arrays; they capture this pointer
    dispatch_apply(16, dispatch_get_global_queue(DISPATCH_QUEUE_PRIORITY_DEFAULT, 0), ^(size_t i) {
        cubes[i] = (long)(i * i * i);
    });
    long sum = 0;
    for (int i = 0; i < 16; i++) sum += cubes[i];
    printf("dispatch_apply: 16 iterations, sum of cubes %ld\n", sum);
}

// dispatch_after: a block enqueued on the serial queue 50 ms from now.
static void after_demo(dispatch_queue_t serial) {
    dispatch_semaphore_t fired = dispatch_semaphore_create(0);
    dispatch_after(dispatch_time(DISPATCH_TIME_NOW, (int64_t)(50 * MSEC)), serial, ^{
        printf("dispatch_after: ran after 50 ms\n");
        dispatch_semaphore_signal(fired);
    });
    dispatch_semaphore_wait(fired, DISPATCH_TIME_FOREVER);
    dispatch_release(fired);
}

// A 20 ms repeating timer source, cancelled from its own handler after 3 runs.
static void timer_demo(dispatch_queue_t serial) {
    dispatch_semaphore_t cancelled = dispatch_semaphore_create(0);
    dispatch_source_t timer = dispatch_source_create(DISPATCH_SOURCE_TYPE_TIMER, 0, 0, serial);
    __block int runs = 0;
    dispatch_source_set_timer(timer, dispatch_time(DISPATCH_TIME_NOW, (int64_t)(20 * MSEC)),
                              20 * MSEC, 1 * MSEC);
    dispatch_source_set_event_handler(timer, ^{
        if (++runs == 3) dispatch_source_cancel(timer);
    });
    dispatch_source_set_cancel_handler(timer, ^{
        printf("timer source: %d handler runs, then cancelled\n", runs);
        dispatch_semaphore_signal(cancelled);
    });
    dispatch_resume(timer);  // sources are created suspended
    dispatch_semaphore_wait(cancelled, DISPATCH_TIME_FOREVER);
    dispatch_release(timer);
    dispatch_release(cancelled);
}

int main(void) {
    dispatch_queue_t serial = dispatch_queue_create("com.example.c.serial", DISPATCH_QUEUE_SERIAL);
    dispatch_queue_t concurrent = dispatch_queue_create("com.example.c.concurrent", DISPATCH_QUEUE_CONCURRENT);

    serial_queue_demo(serial);
    barrier_and_group_demo(serial, concurrent);
    apply_demo();
    after_demo(serial);
    timer_demo(serial);

    dispatch_release(concurrent);
    dispatch_release(serial);
    printf("done\n");
    return 0;
}
