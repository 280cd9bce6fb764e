// qt_swift_self_call(fn, self): calls a Swift method that takes only `self` (Swift's calling
// convention passes it in r13, which gcc cannot express) and returns its result registers
// rax and rdx as a C struct of two words. shim_foundation.c reads Operation properties with it.
// r13 and r12 (Swift's self and error registers) are saved: the C caller expects them kept.
#if defined(__x86_64__) && defined(QTRACE_PRELOAD)
#include "shim_asm_frame.h"
    .text
    .globl qt_swift_self_call
    .hidden qt_swift_self_call
    .type qt_swift_self_call, @function
qt_swift_self_call:
    QT_FRAME_ENTER
    push %r13
    push %r12
    .cfi_offset %r13, -24
    .cfi_offset %r12, -32
    mov %rsi, %r13
    call *%rdi
    pop %r12
    pop %r13
    pop %rbp
    .cfi_def_cfa %rsp, 8
    ret
    .cfi_endproc
    .size qt_swift_self_call, .-qt_swift_self_call
#endif
    .section .note.GNU-stack, "", @progbits
