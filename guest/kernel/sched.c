// SPDX-License-Identifier: MIT
/*
 * The scheduler: per-CPU run queues, context switches, wake-ups, preemption, migration.
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
#include "kernel/errno.h"
#include "kernel/local_lock.h"
#include "kernel/mm.h"
#include "kernel/printk.h"
#include "kernel/smp.h"
#include "kernel/spinlock.h"
#include "kernel/string.h"
#include "kernel/timer.h"

enum sched_mode {
	SCHED_MODE_SLEEP, /* voluntary: sleep, exit, or plain schedule() */
	SCHED_MODE_YIELD, /* voluntary: to the tail of the priority */
	SCHED_MODE_PREEMPT, /* involuntary: stays at the head of its priority */
};

#define RR_SLICE_TICKS 10

static struct spinlock parked_lock = SPINLOCK_INIT("sched.parked");
static struct list_head parked = LIST_HEAD_INIT(parked); /* guarded by parked_lock */
/* Every thread from creation to join, for sched_dump_threads(). */
static struct spinlock all_lock = SPINLOCK_INIT("sched.all");
static struct list_head all_threads = LIST_HEAD_INIT(all_threads); /* guarded by all_lock */
static struct thread boot_idle;
uint64_t sched_atomic_sleep_bugs;

static struct rq *this_rq(void)
{
	return &this_cpu()->rq;
}

static struct rq *cpu_rq(unsigned cpu)
{
	struct cpu *c = cpu < NR_CPUS ? READ_ONCE(cpu_table[cpu]) : NULL;

	return c ? &c->rq : NULL;
}

static bool cpu_active(unsigned cpu)
{
	struct rq *rq = cpu_rq(cpu);

	return rq && __atomic_load_n(&rq->active, __ATOMIC_ACQUIRE);
}

/* Would `cpu` take t now? Per-CPU threads from STARTING on, all others once active. */
static bool cpu_takes(const struct thread *t, unsigned cpu)
{
	struct rq *rq = cpu_rq(cpu);

	if (!rq)
		return false;
	if (t->percpu && t->pinned == (int)cpu)
		return __atomic_load_n(&rq->online, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&rq->active, __ATOMIC_ACQUIRE);
}

/* Interrupts off, then the run-queue lock. */
static struct rq *rq_lock_irqsave(unsigned long *flags)
{
	struct rq *rq;

	*flags = arch_irq_save();
	rq = this_rq();
	local_lock_irqs_off(&rq->lock);
	return rq;
}

static void rq_unlock_irqrestore(struct rq *rq, unsigned long flags)
{
	local_unlock_irqs_off(&rq->lock);
	arch_irq_restore(flags);
	preempt_check_resched();
}

static void set_need_resched(void)
{
	this_cpu()->need_resched = 1;
}

/* ---- run-queue bookkeeping (rq lock held) --------------------------------------------- */

static void update_curr(struct rq *rq)
{
	WRITE_ONCE(rq->curr_prio, rq->curr->is_idle ? -1 : rq->curr->rq.prio);
}

static void enqueue(struct rq *rq, struct thread *t, bool head)
{
	prioq_add(&rq->queue, &t->rq, head);
	WRITE_ONCE(rq->nr_running, rq->nr_running + 1);
}

static void dequeue(struct rq *rq, struct thread *t)
{
	prioq_del(&rq->queue, &t->rq);
	WRITE_ONCE(rq->nr_running, rq->nr_running - 1);
}

/* May t run on cpu now? */
static bool cpu_allowed(const struct thread *t, unsigned cpu)
{
	if (t->pinned >= 0)
		return (unsigned)t->pinned == cpu;
	if (t->migrate_disabled)
		return t->cpu == cpu;
	return cpu_active(cpu);
}

static void park(struct thread *t)
{
	unsigned long flags = spin_lock_irqsave(&parked_lock);

	__atomic_store_n(&t->state, THREAD_PARKED, __ATOMIC_RELEASE);
	list_add_tail(&t->park_node, &parked);
	spin_unlock_irqrestore(&parked_lock, flags);
}

/*
 * The CPU for a thread about to become runnable: its pinned CPU; its last CPU if idle
 * there; else an idle active CPU; else the active CPU running the lowest priority.
 * Reads other CPUs' run queues racily: a hint, corrected by preemption.
 */
static unsigned select_cpu(const struct thread *t)
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

static void hand_over(struct thread *t, unsigned cpu);

/* t (RUNNABLE) arrives on this CPU. rq lock held, interrupts off. */
static void activate(struct rq *rq, struct thread *t)
{
	unsigned self = smp_processor_id();

	if (!cpu_allowed(t, self) || (t->pinned == (int)self && !cpu_takes(t, self))) {
		if (t->pinned >= 0 && (unsigned)t->pinned == self) {
			park(t); /* pinned here, and this CPU is not (or no longer) taking it */
			return;
		}
		hand_over(t, select_cpu(t));
		return;
	}
	if (t->cpu != self) {
		rq->stats.migrations_in++;
		t->cpu = self;
	}
	enqueue(rq, t, false);
	if (t->rq.prio > rq->curr_prio) {
		set_need_resched();
		if (!rq->urgent_tsc)
			rq->urgent_tsc = arch_tsc(); /* the soft-lockup check's clock */
	}
}

/* Give a RUNNABLE thread to `cpu` (maybe this one). Interrupts off. */
static void hand_over(struct thread *t, unsigned cpu)
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
	rq = cpu_rq(cpu);
	if (!rq || !cpu_takes(t, cpu)) {
		if (t->pinned >= 0 || t->migrate_disabled) {
			park(t);
			return;
		}
		cpu = select_cpu(t);
		rq = cpu_rq(cpu);
		if (!rq || !cpu_active(cpu)) {
			park(t); /* no active CPU at all: only while the system shuts down */
			return;
		}
	}
	if (llist_add(&t->wake_node, &rq->wake_list))
		arch_send_ipi(cpu_apic_ids[cpu], VEC_RESCHEDULE);
}

/* Take the wake-ups other CPUs handed us. rq lock held, interrupts off. */
static void drain_wake_list(struct rq *rq)
{
	struct llist_node *n = llist_reverse(llist_del_all(&rq->wake_list));

	while (n) {
		struct thread *t = container_of(n, struct thread, wake_node);

		n = n->next;
		rq->stats.wakeups_remote++;
		activate(rq, t);
	}
}

static void resched_ipi(unsigned vector, void *arg)
{
	struct rq *rq = this_rq();

	(void)vector;
	(void)arg;
	local_lock_irqs_off(&rq->lock);
	rq->stats.resched_ipis++;
	drain_wake_list(rq);
	local_unlock_irqs_off(&rq->lock);
}

/* ---- the switch ------------------------------------------------------------------------ */

/* The resumed thread's half of a switch: release the one we switched away from. */
static void finish_switch(void)
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

static void __schedule(enum sched_mode mode)
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
	drain_wake_list(rq);

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
			enqueue(rq, prev, mode == SCHED_MODE_PREEMPT && !prev->rr_expired);
		} else {
			/* Re-pinned, or its CPU is going down: the next CPU takes it once our
			 * switch away from it is complete (it waits for on_cpu). */
			rq->stats.migrations_out++;
			hand_over(prev, select_cpu(prev));
		}
	}
	e = prioq_peek(&rq->queue);
	next = e ? container_of(e, struct thread, rq) : rq->idle;
	if (e)
		dequeue(rq, next);
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
	update_curr(rq);

	while (__atomic_load_n(&next->on_cpu, __ATOMIC_ACQUIRE))
		arch_cpu_relax();
	next->on_cpu = 1;
	next->cpu = smp_processor_id();
	arch_context_switch(&prev->ctx, &next->ctx);
	/* prev runs again here, maybe on another CPU. */
	finish_switch();
out:
	preempt_count_add(-1);
	if (prev->saved_preempt) {
		preempt_count_add(prev->saved_preempt);
		prev->saved_preempt = 0;
	}
	arch_irq_restore(flags);
}

/* A new thread's first instructions, on its own stack (arch_context_init's entry). */
static void thread_entry(void *arg)
{
	struct thread *t = arg;

	finish_switch();
	preempt_count_add(-1); /* the count __schedule() took for the switch to us */
	arch_irq_enable();
	thread_exit(t->fn(t->arg));
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
	hand_over(t, select_cpu(t));
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
		dequeue(rq, t);
		t->rq.prio = prio;
		enqueue(rq, t, true);
		if (prio > rq->curr_prio)
			set_need_resched();
	} else {
		t->rq.prio = prio;
		if (t == rq->curr) {
			update_curr(rq);
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
	flags = spin_lock_irqsave(&parked_lock);
	if (__atomic_load_n(&t->state, __ATOMIC_ACQUIRE) == THREAD_PARKED &&
	    (cpu < 0 || cpu_active((unsigned)cpu))) {
		list_del(&t->park_node);
		__atomic_store_n(&t->state, THREAD_RUNNABLE, __ATOMIC_RELEASE);
		unpark = true;
	}
	spin_unlock_irqrestore(&parked_lock, flags);
	if (unpark) {
		flags = arch_irq_save();
		hand_over(t, select_cpu(t));
		arch_irq_restore(flags);
	}
	/* Racy but safe: once `pinned` is set, the scheduler only ever places us there. */
	if (t == current_thread() && cpu >= 0 && (unsigned)cpu != raw_smp_processor_id())
		thread_yield(); /* __schedule() hands us to the new CPU */
}

/* ---- threads ------------------------------------------------------------------------------ */

struct thread *thread_create(const char *name, int (*fn)(void *), void *arg, int prio, int cpu)
{
	struct thread *t = kzalloc(sizeof(*t));

	if (!t)
		return NULL;
	t->stack = page_alloc(THREAD_STACK_SIZE / PAGE_SIZE);
	if (!t->stack) {
		kfree(t);
		return NULL;
	}
	if (prio < SCHED_PRIO_MIN)
		prio = SCHED_PRIO_MIN;
	if (prio > SCHED_PRIO_MAX)
		prio = SCHED_PRIO_MAX;
	prioq_node_init(&t->rq, prio);
	t->base_prio = prio;
	t->state = THREAD_NEW;
	t->policy = SCHED_FIFO;
	t->slice_left = RR_SLICE_TICKS;
	t->pinned = cpu;
	t->cpu = cpu >= 0 ? (unsigned)cpu : raw_smp_processor_id(); /* a hint */
	t->fn = fn;
	t->arg = arg;
	list_init(&t->park_node);
	list_init(&t->pi_node);
	lockdep_task_init(&t->lockdep);
	snprintf(t->name, sizeof(t->name), "%s", name);
	arch_context_init(&t->ctx, (char *)t->stack + THREAD_STACK_SIZE, thread_entry, t);
	{
		unsigned long flags = spin_lock_irqsave(&all_lock);

		list_add_tail(&t->all_node, &all_threads);
		spin_unlock_irqrestore(&all_lock, flags);
	}
	return t;
}

void thread_start(struct thread *t)
{
	__atomic_store_n(&t->state, THREAD_BLOCKED, __ATOMIC_RELEASE);
	thread_wake(t);
}

struct thread *thread_run(const char *name, int (*fn)(void *), void *arg, int prio, int cpu)
{
	struct thread *t = thread_create(name, fn, arg, prio, cpu);

	if (t)
		thread_start(t);
	return t;
}

struct thread *kthread_run_on_cpu(const char *name, int (*fn)(void *), void *arg, int prio,
				  unsigned cpu)
{
	struct thread *t = thread_create(name, fn, arg, prio, (int)cpu);

	if (t) {
		t->percpu = true;
		thread_start(t);
	}
	return t;
}

__noreturn void thread_exit(int code)
{
	struct thread *t = current_thread(), *joiner;

	if (lockdep_depth() > 0) {
		pr_bug("thread %s exits holding %u locks\n", t->name, lockdep_depth());
		lockdep_print_held_locks();
	}
	t->exit_code = code;
	arch_irq_disable();
	/*
	 * Store DEAD, then read the joiner; thread_join() stores the joiner, then reads the
	 * state: one of us sees the other. The joiner cannot return (nor be freed) before our
	 * switch away is complete, so waking it here, with interrupts off, is safe.
	 */
	__atomic_store_n(&t->state, THREAD_DEAD, __ATOMIC_SEQ_CST);
	joiner = __atomic_load_n(&t->joiner, __ATOMIC_SEQ_CST);
	if (joiner)
		thread_wake(joiner);
	__schedule(SCHED_MODE_SLEEP);
	panic("dead thread %s ran again", t->name);
}

int thread_join(struct thread *t)
{
	struct thread *me = current_thread();
	int code;

	__atomic_store_n(&t->joiner, me, __ATOMIC_SEQ_CST);
	for (;;) {
		thread_prepare_sleep();
		if (__atomic_load_n(&t->state, __ATOMIC_SEQ_CST) == THREAD_DEAD)
			break;
		thread_sleep();
	}
	thread_cancel_sleep();
	/* Dead, maybe still switching away on its CPU (interrupts off there: a short wait). */
	while (__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE))
		arch_cpu_relax();
	code = t->exit_code;
	{
		unsigned long flags = spin_lock_irqsave(&all_lock);

		list_del(&t->all_node);
		spin_unlock_irqrestore(&all_lock, flags);
	}
	page_free(t->stack, THREAD_STACK_SIZE / PAGE_SIZE);
	kfree(t);
	return code;
}

/* ---- CPUs ------------------------------------------------------------------------------------ */

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
	arch_set_irq_handler(VEC_RESCHEDULE, resched_ipi, NULL);
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
		hand_over(t, select_cpu(t));
		arch_irq_restore(flags);
	}
	return 0;
}

int sched_starting_cpu(unsigned int cpu)
{
	struct rq *rq = this_rq(); /* `cpu`'s: we are that CPU */

	(void)cpu;
	rq->curr->on_cpu = 1;
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
	local_lock_irqs_off(&rq->lock);
	drain_wake_list(rq);
	while ((e = prioq_peek(&rq->queue))) {
		struct thread *t = container_of(e, struct thread, rq);

		dequeue(rq, t);
		if (t->pinned == (int)cpu || t->migrate_disabled) {
			park(t);
		} else {
			rq->stats.migrations_out++;
			hand_over(t, select_cpu(t));
		}
	}
	local_unlock_irqs_off(&rq->lock);
	return 0;
}

void sched_park_current(void)
{
	park(current_thread());
	__schedule(SCHED_MODE_SLEEP);
}

static void unpark(unsigned cpu, bool percpu_only)
{
	struct list_head resume = LIST_HEAD_INIT(resume);
	struct thread *t, *tmp;
	unsigned long flags;

	flags = spin_lock_irqsave(&parked_lock);
	list_for_each_entry_safe(t, tmp, &parked, park_node) {
		bool mine = t->pinned == (int)cpu || (t->migrate_disabled && t->cpu == cpu);

		if (percpu_only ? (mine && t->percpu)
				: (mine || (t->pinned < 0 && !t->migrate_disabled))) {
			list_del(&t->park_node);
			list_add_tail(&t->park_node, &resume);
		}
	}
	spin_unlock_irqrestore(&parked_lock, flags);
	list_for_each_entry_safe(t, tmp, &resume, park_node) {
		list_del(&t->park_node);
		/* It parked itself or was parked off the CPU: wait until it is switched out. */
		while (__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE))
			arch_cpu_relax();
		__atomic_store_n(&t->state, THREAD_RUNNABLE, __ATOMIC_RELEASE);
		flags = arch_irq_save();
		hand_over(t, select_cpu(t));
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
		hand_over(t, select_cpu(t));
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

	__atomic_store_n(&rq->active, false, __ATOMIC_SEQ_CST);
	/*
	 * Hand-overs run with interrupts off: once every other CPU has taken an IPI, none
	 * is still between reading `active` and pushing to our wake_list.
	 */
	smp_sync_others();
	do {
		struct prioq percpu;
		struct prioq_node *e;

		prioq_init(&percpu);
		stuck = false;
		rq = rq_lock_irqsave(&flags);
		drain_wake_list(rq);
		while ((e = prioq_peek(&rq->queue))) {
			struct thread *t = container_of(e, struct thread, rq);

			if (t->migrate_disabled) {
				/* Must leave its section here first: let it run before us. */
				stuck = true;
				if (!warned && arch_now_ns() - since > 1000000000ull)
					warned = warn_deactivate_stuck(cpu, t);
				break;
			}
			dequeue(rq, t);
			if (t->percpu && t->pinned == (int)cpu) {
				/* Stays until the CPU dies; set aside and requeued below. */
				prioq_add(&percpu, &t->rq, false);
				continue;
			}
			rq->stats.evacuated++;
			if (t->pinned == (int)cpu) {
				park(t);
			} else {
				rq->stats.migrations_out++;
				hand_over(t, select_cpu(t));
			}
		}
		while ((e = prioq_peek(&percpu))) {
			prioq_del(&percpu, e);
			enqueue(rq, container_of(e, struct thread, rq), false);
		}
		rq_unlock_irqrestore(rq, flags);
		if (stuck)
			thread_yield_to_lower(); /* it goes at its next switch */
	} while (stuck);
	return 0;
}

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
			tick_idle_enter(); /* no tick while nothing is due */
			arch_safe_halt();
			arch_irq_disable();
			tick_idle_exit();
			arch_irq_enable();
		} else {
			arch_irq_enable();
		}
		if (need_resched() || !llist_empty(&this_rq()->wake_list))
			__schedule(SCHED_MODE_PREEMPT);
	}
}

#ifdef CONFIG_LOCKDEP
uint64_t debug_preempt_bugs;

void debug_this_cpu_preemptible(const char *what)
{
	struct thread *t = current_thread();

	/* Threads that cannot leave this CPU: idle, pinned here, migration disabled (RT). */
	if (!t || t->is_idle || t->migrate_disabled || t->pinned == (int)raw_smp_processor_id())
		return;
	if (__atomic_fetch_add(&debug_preempt_bugs, 1, __ATOMIC_RELAXED) < 20) {
		pr_bug("using %s in preemptible code: thread %s, caller %p\n", what, t->name,
		       __builtin_return_address(0));
		arch_backtrace();
	}
}
#endif

struct lockdep_task *lockdep_current(void)
{
	struct thread *t;

	/* In interrupt context we cannot migrate; a thread is found with one load. */
	if (in_interrupt())
		return &raw_this_cpu()->irq_lockdep;
	t = current_thread();
	return t ? &t->lockdep : NULL;
}

unsigned lockdep_cpu_id(void)
{
	return smp_processor_id();
}

void sched_get_stats(unsigned cpu, struct sched_stats *st)
{
	struct rq *rq = cpu_rq(cpu);

	if (rq)
		*st = rq->stats; /* racy snapshot of counters, good enough for reports */
	else
		memset(st, 0, sizeof(*st));
}

/* ---- diagnostics ----------------------------------------------------------------------------- */

struct hung {
	char name[THREAD_NAME_LEN];
	unsigned cpu;
	uint64_t late_ns;
	bool expected;
};

unsigned sched_check_hung(uint64_t now_ns, uint64_t bound_ns)
{
	struct hung found[8];
	unsigned n = 0, i;
	unsigned long flags = spin_lock_irqsave(&all_lock);
	struct thread *t;

	list_for_each_entry(t, &all_threads, all_node) {
		uint64_t deadline = READ_ONCE(t->sleep_deadline_ns);

		if (!deadline || READ_ONCE(t->state) != THREAD_BLOCKED ||
		    now_ns < deadline + bound_ns || t->hung_reported_ns == deadline)
			continue;
		t->hung_reported_ns = deadline;
		if (n < ARRAY_SIZE(found)) {
			memcpy(found[n].name, t->name, sizeof(found[n].name));
			found[n].cpu = t->cpu;
			found[n].late_ns = now_ns - deadline;
			found[n].expected = t->bug_expected;
			n++;
		}
	}
	spin_unlock_irqrestore(&all_lock, flags);
	for (i = 0; i < n; i++)
		pr_bug_for(found[i].expected,
			   "hung task: thread %s (cpu %u) is still blocked %lu ms after its sleep "
			   "deadline: a lost wake-up\n",
			   found[i].name, found[i].cpu,
			   (unsigned long)(found[i].late_ns / 1000000));
	return n;
}

uint64_t sched_stuck_ns(uint64_t now_tsc, struct thread **curr)
{
	struct rq *rq = this_rq();
	uint64_t since = rq->urgent_tsc;

	*curr = rq->curr;
	if (!since || prioq_top_prio(&rq->queue) <= rq->curr_prio || now_tsc < since)
		return 0;
	return arch_tsc_to_ns(now_tsc - since);
}

void sched_dump_threads(void)
{
	static const char *const states[] = { "new",	 "runnable", "sleeping",
					      "blocked", "parked",   "dead" };
	unsigned long flags = spin_lock_irqsave(&all_lock);
	struct thread *t;

	/* Racy reads of other CPUs' threads: a snapshot for a human (or a hang report). */
	list_for_each_entry(t, &all_threads, all_node) {
		int s = READ_ONCE(t->state);
		uint64_t pcs[8];
		unsigned n = 0, i;
		char bt[8 * 18 + 1];
		size_t len = 0;

		if (t != current_thread() && !READ_ONCE(t->on_cpu))
			n = arch_context_backtrace(&t->ctx, t->stack, THREAD_STACK_SIZE, pcs, 8);
		bt[0] = 0;
		for (i = 0; i < n; i++)
			len += (size_t)snprintf(bt + len, sizeof(bt) - len, " %lx",
						(unsigned long)pcs[i]);
		printk("thread %s: %s cpu %u pinned %d prio %d/%d on_cpu %d queued %d:%s\n",
		       t->name, s >= 0 && s <= THREAD_DEAD ? states[s] : "?", t->cpu, t->pinned,
		       t->rq.prio, t->base_prio, READ_ONCE(t->on_cpu), t->rq.queued, bt);
	}
	spin_unlock_irqrestore(&all_lock, flags);
}
