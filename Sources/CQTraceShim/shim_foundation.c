// Foundation's operations (docs/trace-format.md, "Operations"). OperationQueue on Linux
// (swift-corelibs-foundation) wraps each Operation in a DispatchWorkItem whose body is a
// closure of `OperationQueue._addOperations(_:barrier:)`, `{ self._schedule(op) }`: every
// operation would otherwise show as that one closure. When such a body starts, the shim reads
// the operation from the closure's captures and records its name (Operation.name, by the
// exported getter), its type (swift_getTypeName) and its dependencies (by the exported getter)
// in OPERATION and OPERATION_DEP records.
//
// The closures are local symbols: they are found once in libFoundation.so's own symbol table
// (.symtab), by their mangled names, which encode what they are. A libFoundation without a
// symbol table, or with other closures, leaves operations unnamed: nothing else changes.
#define _GNU_SOURCE
#include "shim_internal.h"

#if defined(__x86_64__) && defined(QTRACE_PRELOAD)
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/// Foundation's local symbols the shim uses, by QT_FND_SYM_*: both closures of _addOperations
/// (with and without a QoS; they capture (self, op)), and for shim_runloop.c __NSFireTimer's C
/// entry point and the variable holding Timer._fire's field offset.
static const char *const k_local_symbols[QT_FND_SYMBOLS] = {
    "$s10Foundation14OperationQueueC14_addOperations_7barrierySayAA0B0CG_SbtFyycfU_TA",
    "$s10Foundation14OperationQueueC14_addOperations_7barrierySayAA0B0CG_SbtFyycfU0_TA",
    "$s10Foundation13__NSFireTimer_4infoySo09CFRunLoopC3RefaSg_SvSgtFTo",
    "$s10Foundation5TimerC5_fireyyACYbcvpWvd",
};
static uintptr_t g_local_symbols[QT_FND_SYMBOLS];
static pthread_once_t g_local_symbols_once = PTHREAD_ONCE_INIT;
/// The closure context (a Swift box): metadata, refcount, then the captures self and op.
#define QT_OP_CONTEXT_WORD 3
#define QT_OP_DEPS_MAX 64

typedef struct { uint64_t a, b; } qt_pair_t;
QT_HIDDEN qt_pair_t qt_swift_self_call(void *fn, const void *self);
typedef struct { const char *data; uintptr_t length; } qt_fnd_type_name_t;

enum { QT_FND_UNKNOWN, QT_FND_READY, QT_FND_ABSENT };
static int g_state = QT_FND_UNKNOWN;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static void *g_name_getter, *g_deps_getter;
static qt_fnd_type_name_t (*g_type_name)(const void *, int);
static void (*g_bridge_release)(uint64_t);
static void (*g_release)(const void *);

/// The addresses of `count` local symbols (`names`) from the library file's .symtab (each left
/// 0 when absent), read through a read-only mapping.
static void find_local_symbols(const char *path, uintptr_t base, const char *const *names, uintptr_t *out, int count) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    void *map = fstat(fd, &st) == 0 ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (map == MAP_FAILED) return;
    const char *file = map;
    const Elf64_Ehdr *eh = map;
    size_t size = (size_t)st.st_size;
    if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
        goto done;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(file + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        if (sh[i].sh_offset + sh[i].sh_size > size || strs->sh_offset + strs->sh_size > size) continue;
        const Elf64_Sym *syms = (const Elf64_Sym *)(file + sh[i].sh_offset);
        for (size_t s = 0; s < sh[i].sh_size / sizeof(Elf64_Sym); s++) {
            if (syms[s].st_name >= strs->sh_size || syms[s].st_value == 0) continue;
            const char *name = file + strs->sh_offset + syms[s].st_name;
            size_t room = strs->sh_size - syms[s].st_name;
            for (int c = 0; c < count; c++)
                if (strnlen(name, room) < room && strcmp(name, names[c]) == 0)
                    out[c] = base + syms[s].st_value;
        }
    }
done:
    munmap(map, size);
}

/// One scan of libFoundation's .symtab (~2.5 MB) for every local symbol, the first time one is
/// needed (a work item starts, a Timer is made): a few ms, paid once per process.
static void scan_local_symbols(void) {
    void *anchor = dlsym(RTLD_DEFAULT, "$s10Foundation9OperationC4nameSSSgvg");  // any symbol of libFoundation
    Dl_info info;
    if (anchor && dladdr(anchor, &info) && info.dli_fname)
        find_local_symbols(info.dli_fname, (uintptr_t)info.dli_fbase, k_local_symbols, g_local_symbols, QT_FND_SYMBOLS);
}

uintptr_t qt_foundation_symbol(int which) {
    pthread_once(&g_local_symbols_once, scan_local_symbols);
    return g_local_symbols[which];
}

/// Once, on the first DispatchWorkItem that starts: Foundation's getters, the closures.
static void resolve_foundation(void) {
    pthread_mutex_lock(&g_lock);
    if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == QT_FND_UNKNOWN) {
        g_name_getter = dlsym(RTLD_DEFAULT, "$s10Foundation9OperationC4nameSSSgvg");
        g_deps_getter = dlsym(RTLD_DEFAULT, "$s10Foundation9OperationC12dependenciesSayACGvg");
        g_type_name = (qt_fnd_type_name_t(*)(const void *, int))dlsym(RTLD_DEFAULT, "swift_getTypeName");
        g_bridge_release = (void (*)(uint64_t))dlsym(RTLD_DEFAULT, "swift_bridgeObjectRelease");
        g_release = (void (*)(const void *))dlsym(RTLD_DEFAULT, "swift_release");
        int ready = g_name_getter && g_deps_getter && g_type_name && g_bridge_release && g_release &&
                    (qt_foundation_symbol(QT_FND_SYM_SCHEDULE) || qt_foundation_symbol(QT_FND_SYM_SCHEDULE_QOS));
        __atomic_store_n(&g_state, ready ? QT_FND_READY : QT_FND_ABSENT, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&g_lock);
}

/// Appends a Swift String's UTF-8 (x86_64 layout: a small string's bytes are inline, a native
/// or literal one's are 32 bytes after its object address; a foreign one is left out).
static size_t append_string(char *out, size_t at, size_t cap, uint64_t count_flags, uint64_t object) {
    const char *bytes;
    size_t n;
    char small[16];
    if (object & (1ull << 61)) {
        memcpy(small, &count_flags, 8);
        memcpy(small + 8, &object, 8);
        bytes = small;
        n = (size_t)((object >> 56) & 0xF);
    } else if (!(object & (1ull << 60))) {
        bytes = (const char *)(uintptr_t)((object & 0x0FFFFFFFFFFFFFFFull) + 32);
        n = (size_t)(count_flags & 0x0000FFFFFFFFFFFFull);
    } else {
        return at;
    }
    if (n > cap - at - 1) n = cap - at - 1;
    memcpy(out + at, bytes, n);
    return at + n;
}

/// "Type\tname" (the name empty when nil).
static void describe(const void *op, char *text, size_t cap) {
    qt_fnd_type_name_t type = g_type_name(*(const void *const *)op, 1);
    size_t n = type.data ? (type.length < cap - 2 ? type.length : cap - 2) : 0;
    if (n) memcpy(text, type.data, n);
    text[n++] = '\t';
    qt_pair_t name = qt_swift_self_call(g_name_getter, op);
    if (name.b != 0) {  // Optional<String>.none is all zeros
        n = append_string(text, n, cap, name.a, name.b);
        g_bridge_release(name.b);  // the getter returned it retained
    }
    text[n] = 0;
}

/// The operations `op` depends on (the getter takes op's lock and returns a new array).
static void record_dependencies(qt_thread_t *t, uint64_t id, const void *op) {
    const uint64_t *array = (const uint64_t *)(uintptr_t)qt_swift_self_call(g_deps_getter, op).a;
    if (!array) return;
    uint64_t count = array[2];  // metadata, refcount, count, capacity, elements
    for (uint64_t i = 0; i < count && i < QT_OP_DEPS_MAX; i++)
        qt_rec2(t, QT_OPERATION_DEP, 0, 0, id, array[4 + i]);
    g_release(array);
}

void qt_operation_started(qt_thread_t *t, uint64_t id, const void *body) {
    int state = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
    if (QT_UNLIKELY(state == QT_FND_UNKNOWN)) { resolve_foundation(); state = g_state; }
    if (state != QT_FND_READY) return;
    uintptr_t fn = qt_block_capture(body);
    if (!fn || (fn != g_local_symbols[QT_FND_SYM_SCHEDULE] && fn != g_local_symbols[QT_FND_SYM_SCHEDULE_QOS])) return;
    const void *const *context = (const void *const *)((const uintptr_t *)body)[5];
    const void *op = context ? context[QT_OP_CONTEXT_WORD] : NULL;
    if (!op) return;
    t->depth++;  // Foundation's getters lock and allocate: none of it is the program's Dispatch use
    char text[256];
    describe(op, text, sizeof text);
    uint64_t words[2] = { id, (uint64_t)(uintptr_t)op };
    qt_rec_string(t, QT_OPERATION, 0, words, 2, text);
    record_dependencies(t, id, op);
    t->depth--;
}

void qt_foundation_after_fork_child(void) { pthread_mutex_init(&g_lock, NULL); }

#else
void qt_operation_started(qt_thread_t *t, uint64_t id, const void *body) { (void)t; (void)id; (void)body; }
void qt_foundation_after_fork_child(void) {}
#endif
