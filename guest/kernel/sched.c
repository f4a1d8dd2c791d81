// SPDX-License-Identifier: MIT
/*
 * The scheduler: per-CPU run queues, placement, context switches, wake-ups, preemption,
 * priorities, the idle loop. A thread's life (create, exit, join) is in thread.c, the run
 * queues of CPUs that come and go in sched_hotplug.c, diagnostics in sched_debug.c; what
 * they share is sched_internal.h.
 *
 * Locking: a run queue is touched only by its own CPU, under rq->lock (a local_lock) with
 * interrupts off. Another CPU hands a woken thread over by pushing it on the target's
 * wake_list (lock-free) and sending VEC_RESCHEDULE; the target enqueues it itself. A
 * thread's `state` changes with atomics; `on_cpu` says its registers are still live on a
 * CPU, and a CPU about to run a thread waits for it to drop (the previous CPU is finishing
 * its switch away).
 *
 * Sleeping is two-step: thread_prepare_sleep() says SLEEPING, schedule() commits BLOCKED
 * under the run-queue lock. A wake-up that lands before the commit just turns SLEEPING
 * back into RUNNABLE; one that finds BLOCKED enqueues the thread.
 */
#include "kernel/sched.h"

#include "kernel/bug.h"
#include "kernel/cpuhp.h"
#include "kernel/printk.h"
#include "kernel/sched_internal.h"
#include "kernel/timer.h"

struct spinlock sched_parked_lock = SPINLOCK_INIT("sched.parked");
struct list_head sched_parked = LIST_HEAD_INIT(sched_parked);
uint64_t sched_atomic_sleep_bugs;
struct plugvm_load_latch *sched_load_area;
uint32_t sched_load_nr;

void sched_load_set_area(struct plugvm_load_latch *area, uint32_t nr)
{
	__atomic_store_n(&sched_load_nr, nr, __ATOMIC_RELAXED);
	__atomic_store_n(&sched_load_area, area, __ATOMIC_RELEASE);
}

/* ---- placement (interrupts off) ----------------------------------------------------------- */

/* May t run on cpu now? */
static bool cpu_allowed(const struct thread *t, unsigned cpu)
{
	if (t->pinned >= 0)
		return (unsigned)t->pinned == cpu;
	if (t->migrate_disabled)
		return t->cpu == cpu;
	return cpu_active(cpu);
}

void sched_park(struct thread *t)
{
	unsigned long flags = spin_lock_irqsave(&sched_parked_lock);

	__atomic_store_n(&t->state, THREAD_PARKED, __ATOMIC_RELEASE);
	__atomic_store_n(&t->nr_parks, t->nr_parks + 1, __ATOMIC_RELAXED);
	list_add_tail(&t->park_node, &sched_parked);
	spin_unlock_irqrestore(&sched_parked_lock, flags);
}

/*
 * The CPU for a thread about to become runnable: its pinned CPU; its last CPU if idle
 * there; else an idle active CPU; else the active CPU running the lowest priority.
 * Reads other CPUs' run queues racily: a hint, corrected by preemption.
 */
unsigned sched_select_cpu(const struct thread *t)
{
	unsigned cpu, best, self = smp_processor_id();
	int best_prio;

	if (t->pinned >= 0)
		return (unsigned)t->pinned;
	if (t->migrate_disabled)
		return t->cpu;
	if (cpu_active(t->cpu) && READ_ONCE(cpu_rq(t->cpu)->curr_prio) < 0 &&
	    READ_ONCE(cpu_rq(t->cpu)->nr_running) == 0)
		return t->cpu;
	best = cpu_active(t->cpu) ? t->cpu : self;
	for (cpu = cpumask_next(&cpu_online_mask, 0); !cpu_active(best) && cpu < NR_CPUS;
	     cpu = cpumask_next(&cpu_online_mask, cpu + 1))
		best = cpu;
	best_prio = cpu_active(best) ? READ_ONCE(cpu_rq(best)->curr_prio) : SCHED_PRIO_MAX + 1;
	for_each_cpu(cpu, &cpu_online_mask) {
		struct rq *rq = cpu_rq(cpu);
		int p;

		if (!rq || !cpu_active(cpu))
			continue;
		p = READ_ONCE(rq->curr_prio);
		if (p < 0 && READ_ONCE(rq->nr_running) == 0)
			return cpu;
		if (p < best_prio) {
			best = cpu;
			best_prio = p;
		}
	}
	return best;
}

void sched_hand_over(struct thread *t, unsigned cpu);

/* t (RUNNABLE) arrives on this CPU. rq lock held, interrupts off. */
static void activate(struct rq *rq, struct thread *t)
{
	unsigned self = smp_processor_id();

	if (!cpu_allowed(t, self) || (t->pinned == (int)self && !cpu_takes(t, self))) {
		if (t->pinned >= 0 && (unsigned)t->pinned == self) {
			sched_park(
			    t); /* pinned here, and this CPU is not (or no longer) taking it */
			return;
		}
		sched_hand_over(t, sched_select_cpu(t));
		return;
	}
	if (t->cpu != self) {
		rq->stats.migrations_in++;
		t->cpu = self;
	}
	rq_enqueue(rq, t, false);
	if (t->rq.prio > rq->curr_prio) {
		set_need_resched();
		if (!rq->urgent_tsc)
			rq->urgent_tsc = arch_tsc(); /* the soft-lockup check's clock */
	}
}

/*
 * Push t to cpu's wake list if that CPU takes it (any: it is active), counted in its
 * `handing_over` from before the check to after the push. sched_deactivate_cpu() clears
 * `active` and then waits until the count is 0: after that no hand-over that saw the CPU
 * active is still on its way (the count's increment is a full barrier, and so is the
 * clearing store: one of the two sides sees the other). Interrupts off.
 */
static bool push_to(struct thread *t, unsigned cpu, bool any)
{
	struct rq *rq = cpu_rq(cpu);
	bool ok, first = false;

	if (!rq)
		return false;
	__atomic_add_fetch(&rq->handing_over, 1, __ATOMIC_SEQ_CST);
	ok = any ? __atomic_load_n(&rq->active, __ATOMIC_SEQ_CST) : cpu_takes(t, cpu);
	if (ok)
		first = llist_add(&t->wake_node, &rq->wake_list);
	__atomic_sub_fetch(&rq->handing_over, 1, __ATOMIC_RELEASE);
	if (first)
		arch_send_ipi(cpu_apic_ids[cpu], VEC_RESCHEDULE);
	return ok;
}

/* Give a RUNNABLE thread to `cpu` (maybe this one). Interrupts off. */
void sched_hand_over(struct thread *t, unsigned cpu)
{
	struct rq *rq;

	if (cpu == smp_processor_id() && cpu_takes(t, cpu)) {
		rq = this_rq();
		local_lock_irqs_off(&rq->lock);
		rq->stats.wakeups_local++;
		activate(rq, t);
		local_unlock_irqs_off(&rq->lock);
		return;
	}
	if (push_to(t, cpu, false))
		return;
	if (t->pinned >= 0 || t->migrate_disabled) {
		sched_park(t);
		return;
	}
	if (!push_to(t, sched_select_cpu(t), true))
		sched_park(t); /* no active CPU at all: only while the system shuts down */
}

/* Take the wake-ups other CPUs handed us. rq lock held, interrupts off. */
void rq_drain_wake_list(struct rq *rq)
{
	struct llist_node *n = llist_reverse(llist_del_all(&rq->wake_list));

	while (n) {
		struct thread *t = container_of(n, struct thread, wake_node);

		n = n->next;
		rq->stats.wakeups_remote++;
		activate(rq, t);
	}
}

void sched_resched_ipi(unsigned vector, void *arg)
{
	struct rq *rq = this_rq();

	(void)vector;
	(void)arg;
	local_lock_irqs_off(&rq->lock);
	rq->stats.resched_ipis++;
	rq_drain_wake_list(rq);
	local_unlock_irqs_off(&rq->lock);
}

/* ---- the switch ------------------------------------------------------------------------ */

/* The resumed thread's half of a switch: release the one we switched away from. */
void sched_finish_switch(void)
{
	struct thread *last = this_rq()->last;

	if (!last)
		return;
	this_rq()->last = NULL;
	/*
	 * The last access to `last`: once on_cpu is 0, a dead thread's joiner may free it. The
	 * dead thread woke its joiner itself, before its final switch (thread_exit()).
	 */
	__atomic_store_n(&last->on_cpu, 0, __ATOMIC_RELEASE);
}

void __schedule(enum sched_mode mode)
{
	struct thread *prev, *next;
	struct prioq_node *e;
	unsigned long flags;
	struct rq *rq;
	int excess, s;

	flags = arch_irq_save();
	rq = this_rq();
	prev = rq->curr;
	excess = preempt_count();
	if (excess) {
		/* Only a bug gets here with a count: sleeping with preemption disabled. */
		if (mode != SCHED_MODE_PREEMPT && prev->state != THREAD_DEAD) {
			__atomic_fetch_add(&sched_atomic_sleep_bugs, 1, __ATOMIC_RELAXED);
			pr_bug("scheduling while atomic: thread %s on cpu %u, preempt_count "
			       "%#x\n",
			       prev->name, smp_processor_id(), excess);
		}
		prev->saved_preempt = excess;
		preempt_count_add(-excess);
	}
	preempt_count_add(1);
	local_lock_irqs_off(&rq->lock);
	rq_drain_wake_list(rq);

	/*
	 * Only the thread itself commits a sleep. Preempted between thread_prepare_sleep() and
	 * thread_sleep(), it stays queued: its waker may not be armed yet (sleep_until() sets
	 * the hrtimer after), or may have run already (the condition it is about to check).
	 */
	s = THREAD_SLEEPING;
	if (mode == SCHED_MODE_PREEMPT)
		s = __atomic_load_n(&prev->state, __ATOMIC_ACQUIRE);
	else if (__atomic_compare_exchange_n(&prev->state, &s, THREAD_BLOCKED, false,
					     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		s = THREAD_BLOCKED;
	if ((s == THREAD_RUNNABLE || (s == THREAD_SLEEPING && mode == SCHED_MODE_PREEMPT)) &&
	    !prev->is_idle) {
		if (cpu_allowed(prev, smp_processor_id())) {
			/* Preempted: resume first among equals; yield or expired slice: last. */
			rq_enqueue(rq, prev, mode == SCHED_MODE_PREEMPT && !prev->rr_expired);
		} else {
			/* Re-pinned, or its CPU is going down: the next CPU takes it once our
			 * switch away from it is complete (it waits for on_cpu). */
			rq->stats.migrations_out++;
			sched_hand_over(prev, sched_select_cpu(prev));
		}
	}
	e = prioq_peek(&rq->queue);
	next = e ? container_of(e, struct thread, rq) : rq->idle;
	if (e)
		rq_dequeue(rq, next);
	rq->urgent_tsc = 0; /* the most urgent thread runs now */
	this_cpu()->need_resched = 0;
	prev->rr_expired = false;
	if (next != prev) {
		if (mode == SCHED_MODE_PREEMPT && !prev->is_idle && prev->state == THREAD_RUNNABLE)
			rq->stats.preemptions++;
		rq->stats.switches++;
		next->nr_switches++;
	}
	/*
	 * Unlock before `curr` changes: in the RT build the lock's owner is the current
	 * thread. Interrupts stay off until the switch is done, so nothing on this CPU can
	 * see the run queue in between, and no other CPU ever touches it.
	 */
	local_unlock_irqs_off(&rq->lock);
	if (next == prev)
		goto out;
	rq->curr = next;
	rq->last = prev;
	rq_update_curr(rq);

	while (__atomic_load_n(&next->on_cpu, __ATOMIC_ACQUIRE))
		arch_cpu_relax();
	next->on_cpu = 1;
	next->cpu = smp_processor_id();
	next->switch_in_tsc = arch_tsc();
	arch_context_switch(&prev->ctx, &next->ctx);
	/* prev runs again here, maybe on another CPU. */
	sched_finish_switch();
out:
	preempt_count_add(-1);
	if (prev->saved_preempt) {
		preempt_count_add(prev->saved_preempt);
		prev->saved_preempt = 0;
	}
	arch_irq_restore(flags);
}

void schedule(void)
{
	__schedule(SCHED_MODE_SLEEP);
}

void thread_yield(void)
{
	__schedule(SCHED_MODE_YIELD);
}

void thread_yield_to_lower(void)
{
	struct thread *me = current_thread();
	int prio = me->base_prio;

	/*
	 * Lower the base priority, not just the effective one: the RT build's unlock of the
	 * run-queue lock inside the switch would take a lowered effective priority for a
	 * finished boost and restore it, and we would preempt the others again at once.
	 */
	thread_set_prio(me, SCHED_PRIO_MIN);
	thread_yield();
	thread_set_prio(me, prio);
}

void preempt_schedule(void)
{
	while (need_resched() && preempt_count() == 0 && arch_irqs_enabled())
		__schedule(SCHED_MODE_PREEMPT);
}

void sched_irq_exit(void)
{
	/*
	 * Interrupts are off; the interrupted context had them on (or we would not be here).
	 * The idle thread is never preempted: its loop switches away itself, after
	 * restarting the tick it may have stopped.
	 */
	if (this_rq()->curr->is_idle)
		return;
	while (need_resched() && preempt_count() == 0)
		__schedule(SCHED_MODE_PREEMPT);
}

void sched_tick(void)
{
	struct thread *t = this_rq()->curr;

	if (!t->is_idle)
		rq_load_update(this_rq(), false, true); /* a busy tick: publishes every 10 ms */
	if (t->is_idle || t->policy != SCHED_RR)
		return;
	if (--t->slice_left <= 0) {
		t->slice_left = RR_SLICE_TICKS;
		/* Preempted at the head would run again; an expired slice goes to the tail. */
		if (prioq_top_prio(&this_rq()->queue) >= t->rq.prio) {
			t->rr_expired = true;
			set_need_resched();
		}
	}
}

/* ---- sleeping and waking --------------------------------------------------------------- */

void thread_prepare_sleep(void)
{
	__atomic_store_n(&current_thread()->state, THREAD_SLEEPING, __ATOMIC_SEQ_CST);
}

void thread_sleep(void)
{
	schedule();
	/* A wake-up before the commit left us RUNNABLE; either way we run now. */
}

void thread_cancel_sleep(void)
{
	__atomic_store_n(&current_thread()->state, THREAD_RUNNABLE, __ATOMIC_RELEASE);
}

bool thread_wake(struct thread *t)
{
	unsigned long flags;
	int s;

	for (;;) {
		s = __atomic_load_n(&t->state, __ATOMIC_ACQUIRE);
		if (s == THREAD_SLEEPING) {
			if (__atomic_compare_exchange_n(&t->state, &s, THREAD_RUNNABLE, false,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				return true; /* it had not left the CPU yet: it just keeps running */
			continue;
		}
		if (s != THREAD_BLOCKED)
			return false;
		if (__atomic_compare_exchange_n(&t->state, &s, THREAD_RUNNABLE, false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
	}
	t->wakeup_tsc = arch_tsc();
	flags = arch_irq_save();
	sched_hand_over(t, sched_select_cpu(t));
	arch_irq_restore(flags);
	preempt_check_resched();
	return true;
}

/* ---- priorities and placement ------------------------------------------------------------- */

/* Set t's effective priority, requeueing it if it waits on this CPU's run queue. */
void sched_set_effective_prio(struct thread *t, int prio)
{
	unsigned long flags;
	struct rq *rq = rq_lock_irqsave(&flags);

	if (t->rq.queued && t->cpu == smp_processor_id()) {
		rq_dequeue(rq, t);
		t->rq.prio = prio;
		rq_enqueue(rq, t, true);
		if (prio > rq->curr_prio)
			set_need_resched();
	} else {
		t->rq.prio = prio;
		if (t == rq->curr) {
			rq_update_curr(rq);
			if (prioq_top_prio(&rq->queue) > prio)
				set_need_resched();
		}
	}
	rq_unlock_irqrestore(rq, flags);
}

void thread_set_prio(struct thread *t, int prio)
{
	if (prio < SCHED_PRIO_MIN)
		prio = SCHED_PRIO_MIN;
	if (prio > SCHED_PRIO_MAX)
		prio = SCHED_PRIO_MAX;
	t->base_prio = prio;
	sched_set_effective_prio(t, prio > t->rq.prio || !t->nr_pi_locks ? prio : t->rq.prio);
}

void thread_set_policy(struct thread *t, enum sched_policy policy)
{
	t->policy = policy;
	t->slice_left = RR_SLICE_TICKS;
}

void thread_set_cpu(struct thread *t, int cpu)
{
	unsigned long flags;
	bool unpark = false;

	WRITE_ONCE(t->pinned, cpu);
	flags = spin_lock_irqsave(&sched_parked_lock);
	if (__atomic_load_n(&t->state, __ATOMIC_ACQUIRE) == THREAD_PARKED &&
	    (cpu < 0 || cpu_active((unsigned)cpu))) {
		list_del(&t->park_node);
		__atomic_store_n(&t->state, THREAD_RUNNABLE, __ATOMIC_RELEASE);
		unpark = true;
	}
	spin_unlock_irqrestore(&sched_parked_lock, flags);
	if (unpark) {
		flags = arch_irq_save();
		sched_hand_over(t, sched_select_cpu(t));
		arch_irq_restore(flags);
	}
	/* Racy but safe: once `pinned` is set, the scheduler only ever places us there. */
	if (t == current_thread() && cpu >= 0 && (unsigned)cpu != raw_smp_processor_id())
		thread_yield(); /* __schedule() hands us to the new CPU */
}

/* ---- the idle loop -------------------------------------------------------------------------- */

__noreturn void sched_idle(void)
{
	struct rq *rq;

	for (;;) {
		arch_irq_disable();
		if (READ_ONCE(this_cpu()->dying))
			cpuhp_idle_dead(); /* its hotplug thread finished tearing it down */
		rq = this_rq();
		if (!need_resched() && llist_empty(&rq->wake_list)) {
			rq->stats.idle_entries++;
			rq_load_update(rq, true, false); /* publishes on the way in only */
			/* No tick while nothing is due; a wake-up for nothing leaves it stopped. */
			tick_idle_enter();
			arch_safe_halt();
			continue;
		}
		/* Leaving idle to run a thread: its tick first, with interrupts still off. */
		rq_load_update(rq, false, false);
		tick_idle_exit();
		arch_irq_enable();
		__schedule(SCHED_MODE_PREEMPT);
	}
}
