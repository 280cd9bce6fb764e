// function_items.c: dispatch_async_f and dispatch_barrier_async_f items for the shim's path
// without a context slot (a stub per function; the reader pairs START with the oldest pending
// ENQUEUE of the same function, context and queue). Prints its own ground truth, one line per
// phase, which must read the same traced and untraced:
//   serial: one (function, context) pending 200 times on a suspended serial queue, enqueued
//     alternately from two call sites (their sites tell the items apart in the trace).
//   two-queues: the same (function, context) pending 100 times on each of two suspended serial
//     queues; the first drains completely before the second is resumed.
//   concurrent: 50 items, a barrier, 50 items, all of one (function, context), on a concurrent
//     queue; the barrier checks that it ran alone.
//   functions: 600 distinct functions, more than the shim's 256 stubs, once each.
#include <dispatch/dispatch.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static atomic_int ran, before_barrier, barrier_saw;
static int shared_context;

static void count(void *ctx) {
    (void)ctx;
    atomic_fetch_add(&ran, 1);
}

static void concurrent_item(void *ctx) {
    (void)ctx;
    usleep(100);
    atomic_fetch_add(&before_barrier, 1);
}

static void barrier(void *ctx) {
    (void)ctx;
    atomic_store(&barrier_saw, atomic_load(&before_barrier));
}

// 600 functions f_ABC (A 0..5, B and C 0..9), each adding its own number to `sum`.
static atomic_long sum;
#define F(a, b, c) static void f_##a##b##c(void *ctx) { (void)ctx; atomic_fetch_add(&sum, a * 100 + b * 10 + c); }
#define F10(a, b) F(a, b, 0) F(a, b, 1) F(a, b, 2) F(a, b, 3) F(a, b, 4) F(a, b, 5) F(a, b, 6) F(a, b, 7) F(a, b, 8) F(a, b, 9)
#define F100(a) F10(a, 0) F10(a, 1) F10(a, 2) F10(a, 3) F10(a, 4) F10(a, 5) F10(a, 6) F10(a, 7) F10(a, 8) F10(a, 9)
F100(0) F100(1) F100(2) F100(3) F100(4) F100(5)
#define N(a, b, c) f_##a##b##c,
#define N10(a, b) N(a, b, 0) N(a, b, 1) N(a, b, 2) N(a, b, 3) N(a, b, 4) N(a, b, 5) N(a, b, 6) N(a, b, 7) N(a, b, 8) N(a, b, 9)
#define N100(a) N10(a, 0) N10(a, 1) N10(a, 2) N10(a, 3) N10(a, 4) N10(a, 5) N10(a, 6) N10(a, 7) N10(a, 8) N10(a, 9)
static void (*const functions[600])(void *) = { N100(0) N100(1) N100(2) N100(3) N100(4) N100(5) };

static void serial_phase(void) {
    dispatch_queue_t q = dispatch_queue_create("fx.f.serial", NULL);
    dispatch_suspend(q);
    for (int i = 0; i < 100; i++) {
        dispatch_async_f(q, &shared_context, count); // SITE: serial-even
        dispatch_async_f(q, &shared_context, count); // SITE: serial-odd
    }
    usleep(20 * 1000); // every item waits at least this long
    dispatch_resume(q);
    dispatch_sync(q, ^{});
    printf("serial: %d items\n", atomic_exchange(&ran, 0));
}

static void two_queues_phase(void) {
    dispatch_queue_t a = dispatch_queue_create("fx.f.first", NULL);
    dispatch_queue_t b = dispatch_queue_create("fx.f.second", NULL);
    dispatch_suspend(a);
    dispatch_suspend(b);
    for (int i = 0; i < 100; i++) {
        dispatch_async_f(a, &shared_context, count);
        dispatch_async_f(b, &shared_context, count);
    }
    dispatch_resume(a);
    dispatch_sync(a, ^{});
    int first = atomic_exchange(&ran, 0);
    dispatch_resume(b);
    dispatch_sync(b, ^{});
    printf("two-queues: %d then %d items\n", first, atomic_exchange(&ran, 0));
}

static void concurrent_phase(void) {
    dispatch_queue_t q = dispatch_queue_create("fx.f.concurrent", DISPATCH_QUEUE_CONCURRENT);
    for (int i = 0; i < 50; i++) dispatch_async_f(q, &shared_context, concurrent_item);
    dispatch_barrier_async_f(q, &shared_context, barrier);
    for (int i = 0; i < 50; i++) dispatch_async_f(q, &shared_context, concurrent_item);
    dispatch_barrier_sync(q, ^{});
    printf("concurrent: %d items, the barrier after %d\n", atomic_load(&before_barrier), atomic_load(&barrier_saw));
}

static void functions_phase(void) {
    dispatch_queue_t q = dispatch_queue_create("fx.f.functions", NULL);
    for (int i = 0; i < 600; i++) dispatch_async_f(q, NULL, functions[i]);
    dispatch_sync(q, ^{});
    printf("functions: sum %ld\n", atomic_load(&sum));
}

int main(void) {
    serial_phase();
    two_queues_phase();
    concurrent_phase();
    functions_phase();
    return 0;
}
