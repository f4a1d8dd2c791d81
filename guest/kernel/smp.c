// SPDX-License-Identifier: MIT
/*
 * smp_call_on_cpu(): one request slot per target CPU, serialized by the slot's lock; the
 * caller publishes the request, sends VEC_CALL_FUNC and spins until the target clears it.
 */
#include "kernel/smp.h"

#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/printk.h"
#include "kernel/spinlock.h"

struct call_request {
	void (*fn)(void *);
	void *arg;
	int done;
};

struct call_slot {
	struct spinlock lock; /* one caller at a time */
	struct call_request *req; /* published by the caller, cleared by the target */
};

static struct call_slot slots[NR_CPUS] = {
	[0 ... NR_CPUS - 1] = { .lock = SPINLOCK_INIT("call_slot") },
};

static void call_func_ipi(unsigned vector, void *arg)
{
	struct call_slot *s = &slots[smp_processor_id()];
	struct call_request *req = __atomic_load_n(&s->req, __ATOMIC_ACQUIRE);

	(void)vector;
	(void)arg;
	if (!req)
		return;
	req->fn(req->arg);
	__atomic_store_n(&s->req, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&req->done, 1, __ATOMIC_RELEASE);
}

void smp_init(void)
{
	arch_set_irq_handler(VEC_CALL_FUNC, call_func_ipi, NULL);
}

int smp_call_on_cpu(unsigned cpu, void (*fn)(void *), void *arg)
{
	struct call_request req = { fn, arg, 0 };
	struct call_slot *s;
	unsigned long flags;
	uint64_t warn_at;

	if (!cpumask_test(&cpu_online_mask, cpu))
		return -1;
	if (!arch_irqs_enabled())
		pr_warn("smp_call_on_cpu(%u) with interrupts off may deadlock\n", cpu);
	preempt_disable();
	if (cpu == smp_processor_id()) {
		flags = arch_irq_save();
		fn(arg);
		arch_irq_restore(flags);
		preempt_enable();
		return 0;
	}
	s = &slots[cpu];
	spin_lock(&s->lock);
	__atomic_store_n(&s->req, &req, __ATOMIC_RELEASE);
	arch_send_ipi(cpu_apic_ids[cpu], VEC_CALL_FUNC);
	warn_at = arch_now_ns() + 5000000000ull;
	while (!__atomic_load_n(&req.done, __ATOMIC_ACQUIRE)) {
		if (warn_at && arch_now_ns() > warn_at) {
			pr_warn("smp_call_on_cpu: cpu %u has not answered for 5 s\n", cpu);
			warn_at = 0;
		}
		arch_cpu_relax();
	}
	spin_unlock(&s->lock);
	preempt_enable();
	return 0;
}
