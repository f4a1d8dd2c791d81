// SPDX-License-Identifier: MIT
/*
 * Lockup and hang detectors (see watchdog.h). Per-CPU state is written by its own CPU's
 * heartbeat interrupt; the buddy and the hung-task thread read other CPUs' counters racily
 * (a stale read only delays a report by one beat). Watched operations sit on one list under
 * ops_lock.
 */
#include "kernel/watchdog.h"

#include "kernel/bug.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/hrtimer.h"
#include "kernel/nmi.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/spinlock.h"
#include "kernel/string.h"
#include "kernel/timer.h"

CMDLINE_PARAM(bound, .name = "watchdog.bound_s", .kind = CMDLINE_UINT, .max = 3600);

#define WATCHDOG_MIN_PERIOD_NS 1000000000ull
#define WATCHDOG_DEFAULT_S     10
#define WATCHDOG_THREAD_PRIO   95 /* above workloads, below the hotplug threads */
#define WATCHDOG_DUMP_GAP_NS   30000000000ull /* at most one thread dump per 30 s */

struct wd_cpu {
	struct hrtimer beat;
	uint64_t beats; /* heartbeats taken (this CPU writes) */
	int armed; /* the heartbeat runs (this CPU writes; the buddy reads) */
	unsigned life; /* times the heartbeat was started: a new life is not a stopped one */
	/* Soft lockup and tick checks of this CPU: */
	bool soft_reported;
	uint64_t ticks_seen, idle_seen, quiet_since_ns;
	bool quiet_reported;
	/* This CPU watching its buddy: */
	int buddy;
	unsigned buddy_life;
	uint64_t buddy_beats, buddy_since_ns;
	bool buddy_reported;
	uint64_t clock_reported_ns; /* the buddy's deadline last reported as never taken */
};

static struct wd_cpu wd[NR_CPUS];
static uint64_t bound_ns;
static uint64_t nr_reports;
static uint64_t last_dump_ns;

static struct spinlock ops_lock = SPINLOCK_INIT("watchdog.ops");
static struct list_head ops = LIST_HEAD_INIT(ops); /* guarded by ops_lock */

uint64_t watchdog_bound_ns(void)
{
	return READ_ONCE(bound_ns);
}

void watchdog_set_bound_ns(uint64_t ns)
{
	WRITE_ONCE(bound_ns, ns);
}

/* Heartbeats and checks come every quarter bound (at least 1 s): a report within 1.25 bounds. */
static uint64_t period_ns(void)
{
	uint64_t p = watchdog_bound_ns() / 4;

	return p > WATCHDOG_MIN_PERIOD_NS ? p : WATCHDOG_MIN_PERIOD_NS;
}

uint64_t watchdog_reports(void)
{
	return __atomic_load_n(&nr_reports, __ATOMIC_RELAXED);
}

/* After a report: what every thread and timer queue looks like (rate-limited). */
static void dump(void)
{
	uint64_t now = arch_now_ns(), last = __atomic_load_n(&last_dump_ns, __ATOMIC_RELAXED);

	__atomic_add_fetch(&nr_reports, 1, __ATOMIC_RELAXED);
	if (last && now - last < WATCHDOG_DUMP_GAP_NS)
		return;
	if (!__atomic_compare_exchange_n(&last_dump_ns, &last, now, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		return; /* another CPU dumps */
	/* First what each CPU's interrupt state is now (kernel/nmi.h), then the threads. */
	nmi_report_all();
	sched_dump_threads();
	hrtimer_dump_bases();
}

/* ---- the heartbeat --------------------------------------------------------------------- */

/* The next CPU after `cpu` whose heartbeat runs, or -1. */
static int next_buddy(unsigned cpu)
{
	unsigned i;

	for (i = 1; i < NR_CPUS; i++) {
		unsigned c = (cpu + i) % NR_CPUS;

		if (READ_ONCE(wd[c].armed))
			return c == cpu ? -1 : (int)c;
	}
	return -1;
}

/* Soft lockup: this CPU did not schedule while a more urgent thread waited. */
static void check_self(struct wd_cpu *w, unsigned cpu, uint64_t now, uint64_t bound)
{
	struct cpu *c = this_cpu();
	struct thread *curr;
	uint64_t stuck = sched_stuck_ns(arch_tsc(), &curr), ticks, idles;

	if (stuck > bound) {
		if (!w->soft_reported) {
			w->soft_reported = true;
			pr_bug_for(curr->bug_expected,
				   "soft lockup: cpu %u has not scheduled for %lu ms while a "
				   "higher-priority thread waits; running %s\n",
				   cpu, (unsigned long)(stuck / 1000000), curr->name);
			dump();
		}
	} else {
		w->soft_reported = false;
	}
	/* A CPU busy in one thread ticks; one that neither ticks nor idles has stopped. */
	ticks = c->tmr.stats.ticks;
	idles = c->rq.stats.idle_entries;
	if (ticks != w->ticks_seen || idles != w->idle_seen || curr->is_idle) {
		w->ticks_seen = ticks;
		w->idle_seen = idles;
		w->quiet_since_ns = now;
		w->quiet_reported = false;
	} else if (now - w->quiet_since_ns > bound && !w->quiet_reported) {
		w->quiet_reported = true;
		pr_bug_for(curr->bug_expected,
			   "cpu %u has run %s for %lu ms without a tick or an idle entry\n", cpu,
			   curr->name, (unsigned long)((now - w->quiet_since_ns) / 1000000));
		dump();
	}
}

/*
 * The buddy's clock event: its hrtimer base programmed a deadline that passed more than a
 * bound ago, and no hrtimer interrupt came since (the interrupt marks the base unprogrammed
 * first thing). Unlike the heartbeat count this needs no history, so CPUs coming and going
 * (a new buddy is watched afresh) cannot hide a CPU that stopped taking its clock event,
 * and the report comes while it is stopped.
 */
static void check_clock_event(struct wd_cpu *w, int b, uint64_t now, uint64_t bound)
{
	uint64_t due = hrtimer_programmed_ns((unsigned)b);
	struct cpu *c;
	struct thread *t;

	if (due == UINT64_MAX || due >= now || now - due <= bound || due == w->clock_reported_ns)
		return;
	w->clock_reported_ns = due;
	c = READ_ONCE(cpu_table[b]);
	t = c ? READ_ONCE(c->rq.curr) : NULL;
	pr_bug_for(t && t->bug_expected,
		   "clock event: cpu %d programmed its timer for %lu ms ago and has taken no "
		   "timer interrupt since; running %s\n",
		   b, (unsigned long)((now - due) / 1000000), t ? t->name : "?");
	dump();
}

/* Hard lockup of the buddy: its heartbeat stopped (interrupts off, or no clock event). */
static void check_buddy(struct wd_cpu *w, unsigned cpu, uint64_t now, uint64_t bound)
{
	int b = next_buddy(cpu);
	uint64_t beats;

	if (b >= 0)
		check_clock_event(w, b, now, bound);
	/*
	 * Another buddy, or the same one gone and back (a CPU removed and re-added faster than
	 * its period never beats, and is not stopped): watch it afresh.
	 */
	if (b != w->buddy || (b >= 0 && READ_ONCE(wd[b].life) != w->buddy_life)) {
		w->buddy = b;
		w->buddy_life = b >= 0 ? READ_ONCE(wd[b].life) : 0;
		w->buddy_beats = b >= 0 ? READ_ONCE(wd[b].beats) : 0;
		w->buddy_since_ns = now;
		w->buddy_reported = false;
		return;
	}
	if (b < 0)
		return;
	beats = READ_ONCE(wd[b].beats);
	if (beats != w->buddy_beats) {
		w->buddy_beats = beats;
		w->buddy_since_ns = now;
		w->buddy_reported = false;
	} else if (now - w->buddy_since_ns > bound && !w->buddy_reported) {
		struct cpu *c = READ_ONCE(cpu_table[b]);
		struct thread *t = c ? READ_ONCE(c->rq.curr) : NULL;

		w->buddy_reported = true;
		pr_bug_for(t && t->bug_expected,
			   "hard lockup: cpu %d has taken no watchdog interrupt for %lu ms "
			   "(interrupts off, or its clock event stopped); running %s\n",
			   b, (unsigned long)((now - w->buddy_since_ns) / 1000000),
			   t ? t->name : "?");
		dump();
	}
}

static enum hrtimer_restart beat_fn(struct hrtimer *h)
{
	struct wd_cpu *w = container_of(h, struct wd_cpu, beat);
	unsigned cpu = smp_processor_id();
	uint64_t now = arch_now_ns(), bound = watchdog_bound_ns();

	WRITE_ONCE(w->beats, w->beats + 1);
	if (bound) {
		check_self(w, cpu, now, bound);
		check_buddy(w, cpu, now, bound);
	}
	hrtimer_forward(h, now, period_ns());
	return HRTIMER_RESTART;
}

int watchdog_online_cpu(unsigned cpu)
{
	struct wd_cpu *w = &wd[cpu];
	uint64_t now = arch_now_ns();

	/* Runs on `cpu` (its hotplug thread, or the boot CPU): the hrtimer is queued here. */
	hrtimer_init(&w->beat, beat_fn);
	w->soft_reported = w->quiet_reported = w->buddy_reported = false;
	w->quiet_since_ns = now;
	w->buddy = -1;
	WRITE_ONCE(w->life, w->life + 1);
	WRITE_ONCE(w->armed, 1);
	hrtimer_start(&w->beat, now + period_ns(), HRTIMER_ABS);
	return 0;
}

int watchdog_offline_cpu(unsigned cpu)
{
	struct wd_cpu *w = &wd[cpu];

	/* First: the buddy stops watching before the beats stop. */
	WRITE_ONCE(w->armed, 0);
	hrtimer_cancel(&w->beat);
	return 0;
}

/* ---- watched operations and hung tasks ---------------------------------------------------- */

void watchdog_op_begin(struct watchdog_op *op, uint64_t bound, const char *fmt, long a0, long a1)
{
	unsigned long flags;

	flags = spin_lock_irqsave(&ops_lock);
	if (!op->active) {
		op->fmt = fmt;
		op->arg[0] = a0;
		op->arg[1] = a1;
		op->start_ns = arch_now_ns();
		op->bound_ns = bound;
		op->reported = false;
		op->expected = current_thread() && current_thread()->bug_expected;
		op->active = true;
		list_add_tail(&op->node, &ops);
	}
	spin_unlock_irqrestore(&ops_lock, flags);
}

void watchdog_op_end(struct watchdog_op *op)
{
	unsigned long flags = spin_lock_irqsave(&ops_lock);

	if (op->active) {
		list_del(&op->node);
		op->active = false;
	}
	spin_unlock_irqrestore(&ops_lock, flags);
}

unsigned watchdog_check_ops(uint64_t now, uint64_t bound)
{
	char what[4][64];
	uint64_t age[4];
	bool expected[4];
	unsigned n = 0, i;
	struct watchdog_op *op;
	unsigned long flags = spin_lock_irqsave(&ops_lock);

	list_for_each_entry(op, &ops, node) {
		uint64_t b = op->bound_ns ? op->bound_ns : bound;

		/*
		 * Signed: an operation may begin after `now` was read (another CPU, or us
		 * preempted in between), and is young, not 2^64 ns old (selftest=watchdog's
		 * young operation).
		 */
		if (op->reported || (int64_t)(now - op->start_ns) <= (int64_t)b)
			continue;
		op->reported = true;
		if (n < ARRAY_SIZE(what)) {
			snprintf(what[n], sizeof(what[n]), op->fmt, op->arg[0], op->arg[1]);
			expected[n] = op->expected;
			age[n++] = now - op->start_ns;
		}
	}
	spin_unlock_irqrestore(&ops_lock, flags);
	for (i = 0; i < n; i++)
		pr_bug_for(expected[i], "stuck: %s has not finished after %lu ms\n", what[i],
			   (unsigned long)(age[i] / 1000000));
	return n;
}

static int hung_task_thread(void *arg)
{
	(void)arg;
	for (;;) {
		uint64_t bound = watchdog_bound_ns(), now;

		sleep_ns(WATCHDOG_MIN_PERIOD_NS);
		if (!bound)
			continue;
		now = arch_now_ns();
		if (sched_check_hung(now, bound) + watchdog_check_ops(now, bound))
			dump();
	}
	return 0;
}

void watchdog_init(void)
{
	bound_ns = cmdline_uint("watchdog.bound_s", WATCHDOG_DEFAULT_S) * 1000000000ull;
	if (!thread_run("khungtaskd", hung_task_thread, NULL, WATCHDOG_THREAD_PRIO, 0))
		pr_warn("watchdog: cannot start the hung-task thread\n");
	watchdog_online_cpu(0);
}
