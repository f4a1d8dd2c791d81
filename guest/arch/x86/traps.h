/* SPDX-License-Identifier: MIT */
/* The register frame built by vectors.S, and the arch's trap entry points. */
#ifndef PLUGVM_GUEST_X86_TRAPS_H
#define PLUGVM_GUEST_X86_TRAPS_H

#include <stdint.h>

struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss; /* pushed by the CPU */
};

void trap_dispatch(struct trap_frame *f);
/* Exceptions 0-31: report and panic (NMI: stop if a panic asked for it). */
void trap_exception(struct trap_frame *f);
void idt_init(void);
void idt_load(void);

#endif
