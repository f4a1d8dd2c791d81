// SPDX-License-Identifier: MIT
/*
 * What the scheduler tells diagnostics: the per-CPU check of kernel/cpu.h, the lock
 * validator's current context, run-queue statistics, the hung-task and soft-lockup checks
 * (kernel/watchdog.c) and the thread dump (the console's `threads`, hang reports).
 */
#include "kernel/sched.h"

#include "kernel/bug.h"
#include "kernel/printk.h"
#include "kernel/sched_internal.h"
#include "kernel/string.h"

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
	unsigned long flags = spin_lock_irqsave(&sched_threads_lock);
	struct thread *t;

	list_for_each_entry(t, &sched_threads, all_node) {
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
	spin_unlock_irqrestore(&sched_threads_lock, flags);
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

/* Milliseconds from a TSC stamp to now (-1: never). */
static long ms_ago(uint64_t tsc, uint64_t now)
{
	return !tsc ? -1L : tsc > now ? 0L : (long)(arch_tsc_to_ns(now - tsc) / 1000000);
}

void sched_dump_threads(void)
{
	uint64_t now;
	static const char *const states[] = { "new",	 "runnable", "sleeping",
					      "blocked", "parked",   "dead" };
	unsigned long flags = spin_lock_irqsave(&sched_threads_lock);
	struct thread *t;

	now = arch_tsc();
	/* Racy reads of other CPUs' threads: a snapshot for a human (or a hang report). */
	list_for_each_entry(t, &sched_threads, all_node) {
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
		printk("thread %s: %s cpu %u pinned %d prio %d/%d on_cpu %d queued %d "
		       "(ran %ld ms ago, woken %ld ms ago, %lu switches):%s\n",
		       t->name, s >= 0 && s <= THREAD_DEAD ? states[s] : "?", t->cpu, t->pinned,
		       t->rq.prio, t->base_prio, READ_ONCE(t->on_cpu), t->rq.queued,
		       ms_ago(READ_ONCE(t->switch_in_tsc), now),
		       ms_ago(READ_ONCE(t->wakeup_tsc), now),
		       (unsigned long)READ_ONCE(t->nr_switches), bt);
	}
	spin_unlock_irqrestore(&sched_threads_lock, flags);
}
