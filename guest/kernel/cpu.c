// SPDX-License-Identifier: MIT
/*
 * CPU numbering and masks, and the online count's time integral: every change of
 * cpu_online_mask after boot goes through cpu_set_online(), which accounts the time spent
 * at the old count first, under one lock.
 */
#include "kernel/cpu.h"

#include "kernel/spinlock.h"

unsigned nr_cpu_ids = 1;
uint32_t cpu_apic_ids[NR_CPUS];
struct cpu *cpu_table[NR_CPUS];
struct cpumask cpu_possible_mask;
struct cpumask cpu_present_mask;
struct cpumask cpu_online_mask;

int cpu_from_apic_id(uint32_t apic_id)
{
	unsigned i;

	for (i = 0; i < nr_cpu_ids; i++)
		if (cpu_apic_ids[i] == apic_id)
			return (int)i;
	return -1;
}

static struct spinlock online_lock = SPINLOCK_INIT("cpu.online");
/* Guarded by online_lock: */
static unsigned nr_online; /* cpu_online_mask's weight at the last change */
static uint64_t online_changed_ns; /* the last change */
static uint64_t online_cpu_ns; /* the integral of nr_online up to online_changed_ns */

/* Account the time at the old count up to now. online_lock held. */
static uint64_t __online_advance(void)
{
	uint64_t now = arch_now_ns();

	if (now > online_changed_ns) {
		online_cpu_ns += (uint64_t)nr_online * (now - online_changed_ns);
		online_changed_ns = now;
	}
	return online_cpu_ns;
}

void cpu_set_online(unsigned cpu, bool online)
{
	unsigned long flags = spin_lock_irqsave(&online_lock);

	__online_advance();
	if (online)
		cpumask_set(&cpu_online_mask, cpu);
	else
		cpumask_clear(&cpu_online_mask, cpu);
	nr_online = cpumask_weight(&cpu_online_mask);
	spin_unlock_irqrestore(&online_lock, flags);
}

uint64_t cpu_online_integral_ns(unsigned *nr)
{
	unsigned long flags = spin_lock_irqsave(&online_lock);
	uint64_t v = __online_advance();

	if (nr)
		*nr = nr_online;
	spin_unlock_irqrestore(&online_lock, flags);
	return v;
}
