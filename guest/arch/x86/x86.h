/* SPDX-License-Identifier: MIT */
/* x86 instruction wrappers for the arch layer (not for kernel/ or drivers/: they use arch.h). */
#ifndef PLUGVM_GUEST_X86_H
#define PLUGVM_GUEST_X86_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h" /* port I/O */
#include "plugvm_abi.h"

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t v)
{
	__asm__ volatile("wrmsr"
			 :
			 : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32))
			 : "memory");
}

struct cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

static inline struct cpuid_regs cpuid(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid_regs r;

	__asm__ volatile("cpuid"
			 : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
			 : "a"(leaf), "c"(subleaf));
	return r;
}

/*
 * plugvm's info leaf (EAX ABI, EBX TSC kHz, ECX LAPIC kHz, EDX features) into *info: true
 * only under plugvm with this ABI major. Elsewhere no plugvm extension may be used.
 */
static inline bool plugvm_info(struct cpuid_regs *info)
{
	struct cpuid_regs r = cpuid(PLUGVM_CPUID_BASE, 0);

	if (r.ebx != PLUGVM_CPUID_SIG_EBX || r.ecx != PLUGVM_CPUID_SIG_ECX ||
	    r.edx != PLUGVM_CPUID_SIG_EDX || r.eax < PLUGVM_CPUID_INFO)
		return false;
	*info = cpuid(PLUGVM_CPUID_INFO, 0);
	return (info->eax >> 16) == PLUGVM_ABI_MAJOR;
}

/* A PLUGVM_FEATURE_* bit of the info leaf (false off plugvm). */
static inline bool plugvm_feature(uint32_t bit)
{
	struct cpuid_regs r;

	return plugvm_info(&r) && (r.edx & bit);
}

/* read_cr0(), read_cr2(), read_cr3(), read_cr4(): a control register. */
#define DEFINE_READ_CR(n)                                         \
	static inline uint64_t read_cr##n(void)                   \
	{                                                         \
		uint64_t v;                                       \
                                                                  \
		__asm__ volatile("mov %%cr" #n ", %0" : "=r"(v)); \
		return v;                                         \
	}
DEFINE_READ_CR(0)
DEFINE_READ_CR(2)
DEFINE_READ_CR(3)
DEFINE_READ_CR(4)

struct desc_ptr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

static inline void lgdt(const struct desc_ptr *d)
{
	__asm__ volatile("lgdt %0" : : "m"(*d));
}

static inline void lidt(const struct desc_ptr *d)
{
	__asm__ volatile("lidt %0" : : "m"(*d));
}

static inline void ltr(uint16_t sel)
{
	__asm__ volatile("ltr %0" : : "r"(sel));
}

static inline __attribute__((noreturn)) void halt_forever(void)
{
	for (;;)
		__asm__ volatile("cli; hlt");
}

#endif
