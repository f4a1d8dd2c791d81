// SPDX-License-Identifier: MIT
/*
 * The run queues of CPUs that come and go: the scheduler's cpuhp steps (sched:prepare,
 * sched:starting, sched:active; kernel/cpuhp_table.c) and the parking of threads whose CPU
 * is away. A CPU's run queue starts taking its own per-CPU threads at sched:starting
 * (`online`) and every thread at sched:active (`active`); going down, `active` drops first
 * and every movable thread leaves, then `online`, and the last hand-overs are drained once
 * the CPU is dead.
 */
#include "kernel/sched.h"

#include "kernel/bug.h"
#include "kernel/errno.h"
#include "kernel/mm.h"
#include "kernel/printk.h"
#include "kernel/sched_internal.h"

static struct thread boot_idle;
/* Orders each rq->nr_held change against sched_deactivate_cpu()'s check and `active`. */
static struct spinlock hold_lock = SPINLOCK_INIT("sched.hold");

static void rq_init(struct rq *rq, struct thread *idle, unsigned cpu)
{
	local_lock_init(&rq->lock, "rq.lock");
	prioq_init(&rq->queue);
	/* Statistics survive hotplug: the struct cpu is zeroed once, at its first bring-up. */
	rq->wake_list.first = NULL;
	rq->idle = idle;
	rq->curr = idle;
	rq->last = NULL;
	rq->curr_prio = -1;
	rq->nr_running = 0;
	rq->active = false;
	rq->online = false;
	idle->is_idle = true;
	idle->pinned = (int)cpu;
	idle->cpu = cpu;
	idle->state = THREAD_RUNNABLE;
	idle->policy = SCHED_FIFO;
	prioq_node_init(&idle->rq, 0);
	list_init(&idle->park_node);
	lockdep_task_init(&idle->lockdep);
	snprintf(idle->name, sizeof(idle->name), "idle/%u", cpu);
}

void sched_init_boot_cpu(void)
{
	struct rq *rq = this_rq();

	rq_init(rq, &boot_idle, 0);
	boot_idle.stack = this_cpu()->arch.stack;
	boot_idle.on_cpu = 1;
	rq->online = true;
	rq->active = true;
	sched_load_start(&rq->load, arch_now_ns());
	arch_set_irq_handler(VEC_RESCHEDULE, sched_resched_ipi, NULL);
}

int sched_prepare_cpu(unsigned int cpu)
{
	struct thread *idle = kzalloc(sizeof(*idle));
	struct llist_node *stale;

	if (!idle)
		return -ENOMEM;
	idle->stack = arch_cpu_idle_stack(cpu);
	/* Its last life's wake list was drained when it died; anything there now was handed
	 * over too late and would be lost with the list: say so, and place it elsewhere. */
	stale = llist_del_all(&cpu_table[cpu]->rq.wake_list);
	rq_init(&cpu_table[cpu]->rq, idle, cpu);
	while (stale) {
		struct thread *t = container_of(stale, struct thread, wake_node);
		unsigned long flags;

		stale = stale->next;
		pr_bug("cpu %u: thread '%s' was handed to it while it was away\n", cpu, t->name);
		flags = arch_irq_save();
		sched_hand_over(t, sched_select_cpu(t));
		arch_irq_restore(flags);
	}
	return 0;
}

int sched_starting_cpu(unsigned int cpu)
{
	struct rq *rq = this_rq(); /* `cpu`'s: we are that CPU */

	(void)cpu;
	rq->curr->on_cpu = 1;
	sched_load_start(&rq->load, arch_now_ns()); /* busy until its idle loop says */
	__atomic_store_n(&rq->online, true, __ATOMIC_SEQ_CST);
	return 0;
}

int sched_dying_cpu(unsigned int cpu)
{
	struct rq *rq = this_rq(); /* `cpu`'s: we are that CPU */
	struct prioq_node *e;

	/* Hand-overs that read `online` before this are in the wake list by the time the
	 * control CPU's sched_dead_cpu() drains it; the queue we empty now. */
	__atomic_store_n(&rq->online, false, __ATOMIC_SEQ_CST);
	/* Its last word to plugvm: the time up to here, and ONLINE clear. */
	sched_load_stop(&rq->load, arch_now_ns());
	rq_load_publish(rq);
	local_lock_irqs_off(&rq->lock);
	rq_drain_wake_list(rq);
	while ((e = prioq_peek(&rq->queue))) {
		struct thread *t = container_of(e, struct thread, rq);

		rq_dequeue(rq, t);
		if (t->pinned == (int)cpu || t->migrate_disabled) {
			sched_park(t);
		} else {
			rq->stats.migrations_out++;
			sched_hand_over(t, sched_select_cpu(t));
		}
	}
	local_unlock_irqs_off(&rq->lock);
	return 0;
}

void sched_park_current(void)
{
	sched_park(current_thread());
	__schedule(SCHED_MODE_SLEEP);
}

static void unpark(unsigned cpu, bool percpu_only)
{
	struct list_head resume = LIST_HEAD_INIT(resume);
	struct thread *t, *tmp;
	unsigned long flags;

	flags = spin_lock_irqsave(&sched_parked_lock);
	list_for_each_entry_safe(t, tmp, &sched_parked, park_node) {
		bool mine = t->pinned == (int)cpu || (t->migrate_disabled && t->cpu == cpu);

		if (percpu_only ? (mine && t->percpu)
				: (mine || (t->pinned < 0 && !t->migrate_disabled))) {
			list_del(&t->park_node);
			list_add_tail(&t->park_node, &resume);
		}
	}
	spin_unlock_irqrestore(&sched_parked_lock, flags);
	list_for_each_entry_safe(t, tmp, &resume, park_node) {
		list_del(&t->park_node);
		/* It parked itself or was parked off the CPU: wait until it is switched out. */
		while (__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE))
			arch_cpu_relax();
		__atomic_store_n(&t->state, THREAD_RUNNABLE, __ATOMIC_RELEASE);
		flags = arch_irq_save();
		sched_hand_over(t, sched_select_cpu(t));
		arch_irq_restore(flags);
	}
}

void sched_unpark_percpu(unsigned cpu)
{
	unpark(cpu, true);
}

int sched_dead_cpu(unsigned int cpu)
{
	struct rq *rq = cpu_rq(cpu);
	unsigned long flags;
	struct llist_node *n;

	if (!rq)
		return 0;
	/* A wake-up may have been handed over just before the CPU stopped taking them. */
	flags = arch_irq_save();
	n = llist_del_all(&rq->wake_list);
	while (n) {
		struct thread *t = container_of(n, struct thread, wake_node);

		n = n->next;
		sched_hand_over(t, sched_select_cpu(t));
	}
	arch_irq_restore(flags);
	if (rq->queue.nr)
		pr_bug("cpu %u died with %u queued threads\n", cpu, rq->queue.nr);
	kfree(rq->idle);
	rq->idle = NULL;
	return 0;
}

int sched_activate_cpu(unsigned int cpu)
{
	__atomic_store_n(&cpu_rq(cpu)->active, true, __ATOMIC_SEQ_CST);
	unpark(cpu, false);
	return 0;
}

int thread_hold_cpu(unsigned cpu)
{
	struct thread *me = current_thread();
	unsigned long flags;
	struct rq *rq = cpu_rq(cpu);

	if (me->holds_cpu)
		return -EBUSY;
	/* Active under the lock: sched_deactivate_cpu() has not begun, and will see us. */
	flags = spin_lock_irqsave(&hold_lock);
	if (!rq || !cpu_active(cpu)) {
		spin_unlock_irqrestore(&hold_lock, flags);
		return -ENODEV;
	}
	WRITE_ONCE(rq->nr_held, rq->nr_held + 1);
	me->holds_cpu = true;
	spin_unlock_irqrestore(&hold_lock, flags);
	thread_set_cpu(me, (int)cpu); /* moves us there now */
	return 0;
}

void thread_release_cpu(void)
{
	struct thread *me = current_thread();
	unsigned long flags;
	struct rq *rq;

	if (!me->holds_cpu)
		return;
	flags = spin_lock_irqsave(&hold_lock);
	rq = cpu_rq((unsigned)me->pinned); /* held: pinned there all along */
	WRITE_ONCE(rq->nr_held, rq->nr_held - 1);
	me->holds_cpu = false;
	spin_unlock_irqrestore(&hold_lock, flags);
}

/* A CPU that cannot go down says which thread keeps it (once). */
static bool warn_deactivate_stuck(unsigned cpu, const struct thread *t)
{
	printk("sched: cpu %u: deactivation has waited 1 s for '%s' (prio %d, state %d, "
	       "migrate_disabled %d, pi locks %u, on_cpu %d, cpu %u, pinned %d)\n",
	       cpu, t->name, t->rq.prio, t->state, t->migrate_disabled, t->nr_pi_locks, t->on_cpu,
	       t->cpu, t->pinned);
	return true;
}

int sched_deactivate_cpu(unsigned int cpu)
{
	struct rq *rq = this_rq();
	unsigned long flags;
	uint64_t since = arch_now_ns();
	bool stuck, warned = false;

	/*
	 * The first teardown step: refused here, while a thread holds this CPU, nothing has
	 * changed yet and the engine's roll-back has nothing to undo (selftest=cpuhp_hold).
	 */
	flags = spin_lock_irqsave(&hold_lock);
	if (rq->nr_held) {
		spin_unlock_irqrestore(&hold_lock, flags);
		return -EBUSY;
	}
	__atomic_store_n(&rq->active, false, __ATOMIC_SEQ_CST);
	spin_unlock_irqrestore(&hold_lock, flags);
	/*
	 * A hand-over that read `active` as true is counted until it pushed to our wake_list
	 * (sched.c push_to(), interrupts off, a few instructions): wait for none, not for an
	 * IPI round to every other CPU (which would wake every halted vCPU on each removal).
	 * The drain below then takes everything pushed.
	 */
	while (__atomic_load_n(&rq->handing_over, __ATOMIC_SEQ_CST))
		arch_cpu_relax();
	do {
		struct prioq stay;
		struct prioq_node *e;

		prioq_init(&stay);
		stuck = false;
		rq = rq_lock_irqsave(&flags);
		rq_drain_wake_list(rq);
		while ((e = prioq_peek(&rq->queue))) {
			struct thread *t = container_of(e, struct thread, rq);

			rq_dequeue(rq, t);
			if (t->migrate_disabled) {
				/*
				 * Must leave its section here first: let it run before us. Everything
				 * else still leaves in this pass: a FIFO thread left queued behind it
				 * would run here once we yield, and starve us
				 * (selftest=sched_deactivate_starve).
				 */
				stuck = true;
				if (!warned && arch_now_ns() - since > 1000000000ull)
					warned = warn_deactivate_stuck(cpu, t);
				prioq_add(&stay, &t->rq, false);
				continue;
			}
			if (t->percpu && t->pinned == (int)cpu) {
				/* Stays until the CPU dies; set aside and requeued below. */
				prioq_add(&stay, &t->rq, false);
				continue;
			}
			rq->stats.evacuated++;
			if (t->pinned == (int)cpu) {
				sched_park(t);
			} else {
				rq->stats.migrations_out++;
				sched_hand_over(t, sched_select_cpu(t));
			}
		}
		while ((e = prioq_peek(&stay))) {
			prioq_del(&stay, e);
			rq_enqueue(rq, container_of(e, struct thread, rq), false);
		}
		rq_unlock_irqrestore(rq, flags);
		if (stuck)
			thread_yield_to_lower(); /* it goes at its next switch */
	} while (stuck);
	return 0;
}
