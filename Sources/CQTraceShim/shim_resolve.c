// The real functions: the `real` table (one field per line of shim_functions.h), filled by
// resolve_all on the first call, and the facts looked up with it: libdispatch's and Swift
// Concurrency's code ranges (to tell user calls from internal ones), the main queue, the
// DispatchWorkItem invoke function and the source types.
#include "shim_internal.h"

#include <dlfcn.h>
#include <link.h>

qt_real_t real;

uintptr_t g_dispatch_lo, g_dispatch_hi;
uintptr_t g_concurrency_lo, g_concurrency_hi;
void *g_special_invoke;
void *g_main_queue;
void *g_attr_concurrent;
const void *g_source_types[QT_SOURCE_TYPE_COUNT];
pthread_once_t g_resolve_once = PTHREAD_ONCE_INIT;

static int find_code_ranges(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size; (void)data;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    uintptr_t *lo = NULL, *hi = NULL;
    if (strstr(name, "/libdispatch.so")) { lo = &g_dispatch_lo; hi = &g_dispatch_hi; }
    else if (strstr(name, "/libswift_Concurrency.so")) { lo = &g_concurrency_lo; hi = &g_concurrency_hi; }
    if (!lo) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
        if (*lo == 0 || start < *lo) *lo = start;
        if (end > *hi) *hi = end;
    }
    return 0;
}

static const char *const g_source_type_names[QT_SOURCE_TYPE_COUNT] = {
    [QT_SOURCE_TYPE_TIMER] = "_dispatch_source_type_timer",
    [QT_SOURCE_TYPE_READ] = "_dispatch_source_type_read",
    [QT_SOURCE_TYPE_WRITE] = "_dispatch_source_type_write",
    [QT_SOURCE_TYPE_SIGNAL] = "_dispatch_source_type_signal",
    [QT_SOURCE_TYPE_DATA_ADD] = "_dispatch_source_type_data_add",
    [QT_SOURCE_TYPE_DATA_OR] = "_dispatch_source_type_data_or",
    [QT_SOURCE_TYPE_DATA_REPLACE] = "_dispatch_source_type_data_replace",
    [QT_SOURCE_TYPE_INTERVAL] = "_dispatch_source_type_interval",
};

void resolve_all(void) {
#define QT_REAL(field, symbol, ret, params) real.field = (__typeof__(real.field))dlsym(RTLD_NEXT, symbol);
#include "shim_functions.h"
#undef QT_REAL

    void **special = dlsym(RTLD_DEFAULT, "_dispatch_block_special_invoke");
    g_special_invoke = special ? *special : NULL;
    g_main_queue = dlsym(RTLD_DEFAULT, "_dispatch_main_q");
    g_attr_concurrent = dlsym(RTLD_DEFAULT, "_dispatch_queue_attr_concurrent");
    for (int i = 1; i < QT_SOURCE_TYPE_COUNT; i++) g_source_types[i] = dlsym(RTLD_DEFAULT, g_source_type_names[i]);
    dl_iterate_phdr(find_code_ranges, NULL);
    qt_sites_init();
    qt_recorder_set_main_queue((uint64_t)(uintptr_t)g_main_queue);
}
