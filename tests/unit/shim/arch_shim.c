// SPDX-License-Identifier: MIT
/* Host implementations of the shim arch.h functions. */
#include "arch.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__thread bool shim_irqs_on = true;
__thread struct cpu *shim_this_cpu;
__thread struct shim_ipi_log shim_ipis;
static uint64_t fixed_ns;

void shim_set_cpu(struct cpu *c)
{
	shim_this_cpu = c;
}

void shim_set_time_ns(uint64_t ns)
{
	fixed_ns = ns;
}

uint64_t arch_now_ns(void)
{
	struct timespec ts;

	if (fixed_ns)
		return fixed_ns;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint32_t arch_tsc_khz(void)
{
	return 1000000;
}

const char *arch_tsc_source(void)
{
	return "host";
}

uint64_t arch_tsc_to_ns(uint64_t tsc)
{
	return tsc;
}

__thread uint64_t shim_timer_deadline;

uint64_t arch_ns_to_tsc(uint64_t ns)
{
	return ns;
}

void arch_timer_init_cpu(void)
{
	shim_timer_deadline = 0;
}

void arch_timer_set_deadline(uint64_t tsc)
{
	shim_timer_deadline = tsc ? tsc : 1;
}

void arch_timer_stop(void)
{
	shim_timer_deadline = 0;
}

const char *arch_timer_mode(void)
{
	return "shim";
}

uint32_t arch_timer_khz(void)
{
	return 1000000;
}

void arch_udelay(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

uint32_t arch_apic_id(void)
{
	return 0;
}

uint32_t arch_cpuid_apic_id(void)
{
	return 0;
}

uint64_t arch_percpu_base(void)
{
	return (uint64_t)(uintptr_t)shim_this_cpu;
}

bool arch_x2apic(void)
{
	return true;
}

uint32_t arch_tsc_khz_by(const char *method)
{
	(void)method;
	return 0;
}

void arch_send_ipi(uint32_t apic_id, unsigned vector)
{
	shim_ipis.count++;
	shim_ipis.last_apic_id = apic_id;
	shim_ipis.last_vector = vector;
}

int arch_set_irq_handler(unsigned vector, arch_irq_handler fn, void *arg)
{
	(void)vector;
	(void)fn;
	(void)arg;
	return 0;
}

void arch_poweroff(int status)
{
	fprintf(stderr, "shim: arch_poweroff(%d)\n", status);
	exit(status ? 100 + status : 0);
}

void arch_backtrace(void)
{
}

void arch_stop_other_cpus(void)
{
}

void arch_halt_forever(void)
{
	fprintf(stderr, "shim: arch_halt_forever\n");
	abort();
}

void arch_crash(const char *kind, size_t len)
{
	(void)kind;
	(void)len;
}

void arch_context_switch(struct arch_context *prev, struct arch_context *next)
{
	(void)prev;
	(void)next;
	fprintf(stderr, "shim: arch_context_switch is not available in host tests\n");
	abort();
}

void arch_context_init(struct arch_context *ctx, void *stack_top, void (*entry)(void *), void *arg)
{
	(void)entry;
	(void)arg;
	ctx->rsp = (uint64_t)(uintptr_t)stack_top;
}

/* kernel/cpu.h's DEBUG_PREEMPT check: host tests have no threads to check against. */
void debug_this_cpu_preemptible(const char *what);
void debug_this_cpu_preemptible(const char *what)
{
	(void)what;
}

/*
 * The scheduler's preemption hook, which spinlocks and printk call when the count drops to
 * zero: host tests without a scheduler (printk, lockdep, mm, ACPI) have nothing to switch
 * to. A test that links the scheduler brings the real one.
 */
void preempt_schedule(void);
__attribute__((weak)) void preempt_schedule(void)
{
}
