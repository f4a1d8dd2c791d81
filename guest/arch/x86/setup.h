/* SPDX-License-Identifier: MIT */
/* Functions the x86 arch files share among themselves (not part of arch.h). */
#ifndef PLUGVM_GUEST_X86_SETUP_H
#define PLUGVM_GUEST_X86_SETUP_H

#include <stdbool.h>
#include <stdint.h>

struct cpu;

/* gdt.c: load this CPU's GDT and TSS, and set GS base to c when `set_gs` (an AP's entry
 * set it already). */
void gdt_init_cpu(struct cpu *c, bool set_gs);

/* tsc.c: find the TSC frequency (see the order in tsc.c). Boot CPU, once. */
void tsc_init(void);

/* The arrival points of an AP (called from entry.S on its own stack): after the trampoline,
 * and after plugvm's direct start. */
void ap_entry(struct cpu *c);
void ap_entry_direct(struct cpu *c);

/* Memory-map lookup: true if [pa, pa+len) lies in one E820 entry of any type. */
bool memmap_covers(uint64_t pa, uint64_t len);

#endif
