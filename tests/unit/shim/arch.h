/* SPDX-License-Identifier: MIT */
/*
 * Host stand-in for guest/arch/x86/arch.h, so guest/kernel code compiles unchanged into
 * host unit tests. "CPUs" are host threads: each test thread sets its struct cpu with
 * shim_set_cpu(); interrupts are a thread-local flag; time is CLOCK_MONOTONIC unless a
 * test drives it with shim_set_time_ns(). IPIs are recorded, not delivered.
 */
#ifndef PLUGVM_TEST_SHIM_ARCH_H
#define PLUGVM_TEST_SHIM_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

struct cpu;

struct arch_context {
	uint64_t rsp;
};

void arch_context_switch(struct arch_context *prev, struct arch_context *next);
void arch_context_init(struct arch_context *ctx, void *stack_top, void (*entry)(void *), void *arg);

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
uint64_t arch_tsc(void);
uint32_t arch_tsc_khz(void);
const char *arch_tsc_source(void);
uint64_t arch_now_ns(void);
uint64_t arch_tsc_to_ns(uint64_t tsc);
void arch_udelay(uint64_t us);
uint64_t arch_ns_to_tsc(uint64_t ns);
void arch_timer_init_cpu(void);
void arch_timer_set_deadline(uint64_t tsc);
void arch_timer_stop(void);
const char *arch_timer_mode(void);
uint32_t arch_timer_khz(void);
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

uint32_t arch_apic_id(void);
uint32_t arch_cpuid_apic_id(void);
uint64_t arch_percpu_base(void);
bool arch_x2apic(void);
uint32_t arch_tsc_khz_by(const char *method);
void arch_send_ipi(uint32_t apic_id, unsigned vector);

typedef void (*arch_irq_handler)(unsigned vector, void *arg);
int arch_set_irq_handler(unsigned vector, arch_irq_handler fn, void *arg);

/* ---- power, panic ---- */
__attribute__((noreturn)) void arch_poweroff(int status);
void arch_backtrace(void);
void arch_stop_other_cpus(void);
__attribute__((noreturn)) void arch_halt_forever(void);
void arch_crash(const char *kind, size_t len);
void arch_start_secondary_cpus(void);

/* ---- CPU hotplug steps (kernel/cpuhp_table.c; faked by tests/unit/cpuhp_fakes.c) ---- */
int arch_cpu_prepare(unsigned int cpu);
int arch_cpu_unprepare(unsigned int cpu);
int arch_cpu_starting(unsigned int cpu);
int arch_cpu_dying(unsigned int cpu);

#endif
