// Assembler macros shared by the shim's .S files (x86-64 only; included by the preprocessor).
#ifndef QTRACE_SHIM_ASM_FRAME_H
#define QTRACE_SHIM_ASM_FRAME_H

// QT_FRAME_ENTER: open a function with a frame pointer and its unwind information, so that
// debuggers and the shim's own unwinder walk through the interposed entry.
.macro QT_FRAME_ENTER
    .cfi_startproc
    push %rbp
    .cfi_def_cfa_offset 16
    .cfi_offset %rbp, -16
    mov %rsp, %rbp
    .cfi_def_cfa_register %rbp
.endm

#endif
