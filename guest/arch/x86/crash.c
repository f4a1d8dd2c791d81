// SPDX-License-Identifier: MIT
/* Deliberate faults for the crash-path tests (`crash=KIND` on the command line). */
#include "arch.h"
#include "kernel/string.h"
#include "x86.h"

static bool is(const char *kind, size_t len, const char *name)
{
	return strlen(name) == len && !memcmp(kind, name, len);
}

void arch_crash(const char *kind, size_t len)
{
	if (is(kind, len, "ud")) {
		__asm__ volatile("ud2");
	} else if (is(kind, len, "gp")) {
		/* A non-canonical address. */
		(void)*(volatile uint64_t *)0x8000000000000000ull;
	} else if (is(kind, len, "pf")) {
		/* Above the 4 GiB identity map: not present. */
		(void)*(volatile uint64_t *)0x4000000000ull;
	} else if (is(kind, len, "bp")) {
		/* #BP on hardware KVM; an emulation failure where guest CPL0 code is emulated. */
		__asm__ volatile("int3");
	} else if (is(kind, len, "de")) {
		uint32_t zero = 0;

		__asm__ volatile("xorl %%edx, %%edx; movl $1, %%eax; divl %0"
				 :
				 : "r"(zero)
				 : "eax", "edx");
	} else if (is(kind, len, "df")) {
		/* A page fault with an unusable stack cannot be delivered: #DF, on its IST stack. */
		__asm__ volatile("movabsq $0x4000000000, %%rsp; pushq $0" : : : "memory");
	} else if (is(kind, len, "triple")) {
		struct desc_ptr none = { 0, 0 };

		arch_irq_disable();
		lidt(&none);
		__asm__ volatile("ud2");
	}
}
