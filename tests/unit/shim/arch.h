/* SPDX-License-Identifier: MIT */
/*
 * Host stand-in for guest/arch/x86/arch.h, so guest/kernel code compiles unchanged into
 * host unit tests: the same functions (arch/arch_api.h, shared with the guest; their host
 * implementations are in arch_shim.c), and in place of x86's constants and inlines, these.
 * "CPUs" are host threads: each test thread sets its struct cpu with shim_set_cpu();
 * interrupts are a thread-local flag; time is CLOCK_MONOTONIC unless a test drives it with
 * shim_set_time_ns(). IPIs are recorded, not delivered.
 */
#ifndef PLUGVM_TEST_SHIM_ARCH_H
#define PLUGVM_TEST_SHIM_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/arch_api.h"

#define ARCH_PAGE_SIZE	    4096ul
#define ARCH_CACHELINE	    64
#define ARCH_CPU_STACK_SIZE 16384ul

#define VEC_IRQ_BASE	0x20
#define VEC_LAPIC_TIMER 0xef
#define VEC_CALL_FUNC	0xf0
#define VEC_RESCHEDULE	0xf1
#define VEC_SPURIOUS	0xff

struct arch_cpu {
	void *stack;
	void *ist_stack;
};

struct arch_context {
	uint64_t rsp;
};

/* ---- test controls ---- */
void shim_set_cpu(struct cpu *c);
/* Freeze time at `ns` (arch_now_ns/arch_tsc follow it); 0 returns to the host clock. */
void shim_set_time_ns(uint64_t ns);
/* IPIs sent since the last reset: count and the last (apic_id, vector). */
struct shim_ipi_log {
	unsigned count;
	uint32_t last_apic_id;
	unsigned last_vector;
};
extern __thread struct shim_ipi_log shim_ipis;

/* ---- interrupts ---- */
extern __thread bool shim_irqs_on;

static inline unsigned long arch_irq_save(void)
{
	unsigned long f = shim_irqs_on ? 0x200 : 0;

	shim_irqs_on = false;
	return f;
}

static inline void arch_irq_restore(unsigned long flags)
{
	if (flags & 0x200)
		shim_irqs_on = true;
}

static inline void arch_irq_enable(void)
{
	shim_irqs_on = true;
}

static inline void arch_irq_disable(void)
{
	shim_irqs_on = false;
}

static inline bool arch_irqs_enabled(void)
{
	return shim_irqs_on;
}

static inline void arch_cpu_relax(void)
{
	__asm__ volatile("pause" : : : "memory");
}

static inline void arch_safe_halt(void)
{
	shim_irqs_on = true;
}

/* ---- time ---- */
/* A 1 GHz "TSC": arch_now_ns(). */
static inline uint64_t arch_tsc(void)
{
	return arch_now_ns();
}

/* The last deadline the code under test programmed (0 = stopped). */
extern __thread uint64_t shim_timer_deadline;

/* ---- CPUs ---- */
extern __thread struct cpu *shim_this_cpu;

static inline struct cpu *arch_this_cpu(void)
{
	return shim_this_cpu;
}

static inline void *arch_percpu_read_ptr(size_t offset)
{
	return *(void **)((char *)shim_this_cpu + offset);
}

static inline int arch_percpu_read_int(size_t offset)
{
	return *(int *)((char *)shim_this_cpu + offset);
}

static inline void arch_percpu_add_int(size_t offset, int v)
{
	*(int *)((char *)shim_this_cpu + offset) += v;
}

#endif
