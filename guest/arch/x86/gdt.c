// SPDX-License-Identifier: MIT
/*
 * Per-CPU descriptor tables: each CPU copies the boot GDT into its struct cpu, adds its
 * own TSS (IST stacks for double faults and NMIs), loads them, and points GS at itself.
 */
#include "arch.h"
#include "asm.h"
#include "kernel/cpu.h"
#include "kernel/string.h"
#include "setup.h"
#include "x86.h"

extern uint64_t boot_gdt[];

void gdt_init_cpu(struct cpu *c, bool set_gs)
{
	struct arch_cpu *a = &c->arch;
	uint64_t tss = (uint64_t)(uintptr_t)&a->tss, limit = sizeof(a->tss) - 1;
	struct desc_ptr d = { sizeof(a->gdt) - 1, (uint64_t)(uintptr_t)a->gdt };
	uint64_t ist_top = (uint64_t)(uintptr_t)a->ist_stack + IST_STACK_SIZE;

	memcpy(a->gdt, boot_gdt, 4 * sizeof(uint64_t));
	memset(&a->tss, 0, sizeof(a->tss));
	/* IST1 (double fault) and IST2 (NMI) share one stack, halves apart. */
	a->tss.ist[0] = ist_top;
	a->tss.ist[1] = ist_top - IST_STACK_SIZE / 2;
	a->tss.iomap_base = sizeof(a->tss);
	a->gdt[GDT_TSS / 8] = (limit & 0xffff) | ((tss & 0xffffff) << 16) | (0x89ull << 40) |
			      (((limit >> 16) & 0xf) << 48) | (((tss >> 24) & 0xff) << 56);
	a->gdt[GDT_TSS / 8 + 1] = tss >> 32;
	lgdt(&d);
	ltr(GDT_TSS);
	c->self = c;
	if (set_gs)
		wrmsr(MSR_GS_BASE, (uint64_t)(uintptr_t)c);
}
