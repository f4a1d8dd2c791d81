// SPDX-License-Identifier: MIT
/*
 * smp_call_on_cpu(): one request slot per target CPU, serialized by the slot's lock; the
 * caller publishes the request, sends VEC_CALL_FUNC and spins until the target clears it.
 */
#include "kernel/smp.h"

#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/preempt.h"
#include "kernel/printk.h"
#include "kernel/spinlock.h"

struct call_request {
	void (*fn)(void *);
	void *arg;
	int done;
};

struct call_slot {
	struct spinlock lock; /* one caller at a time */
	struct call_request *req; /* published by the caller, claimed by the target */
	bool open; /* guarded by lock: the target takes calls (online, not dying) */
};

static struct call_slot slots[NR_CPUS] = {
	[0 ... NR_CPUS - 1] = { .lock = SPINLOCK_INIT("call_slot") },
};

/* Claim and run the request in this CPU's slot, if any (interrupts off). */
static void run_pending(struct call_slot *s)
{
	struct call_request *req = __atomic_exchange_n(&s->req, NULL, __ATOMIC_ACQ_REL);

	if (!req)
		return;
	req->fn(req->arg);
	__atomic_store_n(&req->done, 1, __ATOMIC_RELEASE);
}

static void call_func_ipi(unsigned vector, void *arg)
{
	unsigned self = smp_processor_id();

	(void)vector;
	(void)arg;
	run_pending(&slots[self]);
}

void smp_init(void)
{
	arch_set_irq_handler(VEC_CALL_FUNC, call_func_ipi, NULL);
	smp_cpu_online(smp_processor_id()); /* the boot CPU: already in the mask */
}

int smp_cpu_online(unsigned int cpu)
{
	struct call_slot *s = &slots[cpu];
	unsigned long flags = spin_lock_irqsave(&s->lock);

	s->open = true;
	spin_unlock_irqrestore(&s->lock, flags);
	cpu_set_online(cpu, true);
	return 0;
}

int smp_cpu_offline(unsigned int cpu)
{
	struct call_slot *s = &slots[cpu];

	cpu_set_online(cpu, false); /* after this nobody can wait on a call to us */

	/*
	 * A caller that saw us open holds the slot lock and waits for its request to run:
	 * keep serving until we get the lock, then close. Later callers see it closed.
	 */
	for (;;) {
		run_pending(s);
		if (spin_trylock(&s->lock))
			break;
		arch_cpu_relax();
	}
	run_pending(s);
	s->open = false;
	spin_unlock(&s->lock);
	return 0;
}

int smp_call_on_cpu(unsigned cpu, void (*fn)(void *), void *arg)
{
	struct call_request req = { fn, arg, 0 };
	struct call_slot *s;
	unsigned long flags;
	uint64_t warn_at;

	if (!cpumask_test(&cpu_online_mask, cpu))
		return -ENODEV;
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
	if (!s->open) {
		spin_unlock(&s->lock);
		preempt_enable();
		return -ENODEV;
	}
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
