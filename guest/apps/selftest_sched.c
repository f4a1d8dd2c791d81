// SPDX-License-Identifier: MIT
/*
 * Scheduler self-tests: many threads over all CPUs, wake-up preemption from an interrupt
 * and across CPUs (latency in TSC cycles), preemption between thread_prepare_sleep() and
 * the condition check, sleeping while atomic, migration off a CPU with pinned threads
 * parked. The locks' tests and the scheduler's costs are in selftest_lock.c.
 */
#include "apps/selftest.h"
#include "arch.h"
#include "kernel/bug.h"
#include "kernel/cpu.h"
#include "kernel/local_lock.h"
#include "kernel/lockdep.h"
#include "kernel/mm.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/spinlock.h"
#include "kernel/string.h"
#include "kernel/wait.h"

/* ---- helpers ------------------------------------------------------------------------------- */

struct lat {
	uint64_t min, max, sum;
	unsigned n;
};

static void lat_add(struct lat *l, uint64_t v)
{
	if (!l->n || v < l->min)
		l->min = v;
	if (v > l->max)
		l->max = v;
	l->sum += v;
	l->n++;
}

static void lat_report(const char *what, const struct lat *l)
{
	uint64_t avg = l->n ? l->sum / l->n : 0;

	selftest_report("%s_cycles min=%lu avg=%lu max=%lu n=%u (avg %lu ns)", what,
			(unsigned long)l->min, (unsigned long)avg, (unsigned long)l->max, l->n,
			(unsigned long)arch_tsc_to_ns(avg));
}

/* Busy-wait until *flag becomes non-zero or `ns` pass; returns whether it did. */
static bool spin_until(volatile int *flag, uint64_t ns)
{
	uint64_t end = arch_now_ns() + ns;

	while (!*flag) {
		if (arch_now_ns() > end)
			return false;
		arch_cpu_relax();
	}
	return true;
}

/* ---- sched_threads ------------------------------------------------------------------------- */

struct worker {
	struct thread *t;
	unsigned id;
	uint64_t result;
	uint64_t cpus_seen; /* bit per CPU (first 64) */
	struct completion *prev_done, *done;
};

static int worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t sum = 0;
	unsigned i, round;

	/* A chain: every worker but the first waits for its predecessor's first round. */
	for (round = 0; round < 4; round++) {
		for (i = 0; i < 200; i++)
			sum += (uint64_t)w->id * 1000 + round * 200 + i;
		w->cpus_seen |= 1ull << (raw_smp_processor_id() % 64);
		if (round == 0) {
			if (w->done)
				complete_all(w->done);
			if (w->prev_done)
				wait_for_completion(w->prev_done);
		}
		thread_yield();
	}
	w->result = sum;
	return (int)(w->id + 1);
}

static uint64_t worker_expect(unsigned id)
{
	uint64_t sum = 0;
	unsigned i, round;

	for (round = 0; round < 4; round++)
		for (i = 0; i < 200; i++)
			sum += (uint64_t)id * 1000 + round * 200 + i;
	return sum;
}

static int test_sched_threads(void)
{
	unsigned ncpu = cpumask_weight(&cpu_online_mask), n = 4 * ncpu, i, cpu;
	struct worker *w = kzalloc(n * sizeof(*w));
	struct completion *c = kzalloc(n * sizeof(*c));
	uint64_t seen = 0;
	int ret = 0;

	if (n > 128)
		n = 128;
	if (!w || !c) {
		kfree(w);
		kfree(c);
		return selftest_fail("out of memory");
	}
	cpu = cpumask_next(&cpu_online_mask, 0);
	for (i = 0; i < n; i++) {
		char name[16];
		int pin = THREAD_ANY_CPU;

		completion_init(&c[i]);
		w[i].id = i;
		w[i].done = &c[i];
		w[i].prev_done = i ? &c[i - 1] : NULL;
		if (i % 2) { /* every other worker pinned, round-robin over the CPUs */
			pin = (int)cpu;
			cpu = cpumask_next(&cpu_online_mask, cpu + 1);
			if (cpu >= NR_CPUS)
				cpu = cpumask_next(&cpu_online_mask, 0);
		}
		snprintf(name, sizeof(name), "worker%u", i);
		w[i].t = thread_run(name, worker_main, &w[i], 1 + (int)(i % 40), pin);
		if (!w[i].t) {
			ret = selftest_fail("thread_run %u failed", i);
			n = i;
			break;
		}
	}
	for (i = 0; i < n; i++) {
		int code = thread_join(w[i].t);

		if (code != (int)i + 1 && !ret)
			ret = selftest_fail("worker %u exited with %d", i, code);
		if (w[i].result != worker_expect(i) && !ret)
			ret = selftest_fail("worker %u computed %lu, expected %lu", i,
					    (unsigned long)w[i].result,
					    (unsigned long)worker_expect(i));
		seen |= w[i].cpus_seen;
	}
	if (!ret && ncpu > 1 && popcount64(seen) < 2)
		ret = selftest_fail("%u threads all ran on one CPU", n);
	if (!ret)
		selftest_report("threads=%u cpus=%u cpus_used=%d", n, ncpu, popcount64(seen));
	kfree(w);
	kfree(c);
	return ret;
}
SELFTEST("sched_threads", test_sched_threads);

/* ---- sched_wake_irq / sched_wake_ipi: wake-up preemption latency ---------------------------- */

struct wake_test {
	struct thread *high;
	volatile int ran; /* set by the high thread when it runs */
	volatile int stop;
	unsigned wakes; /* wake-ups posted for the high thread */
	int lost; /* rounds the high thread did not run within the bound */
	uint64_t t_wake; /* TSC when the wake-up was issued */
	uint64_t t_run; /* TSC when the high thread ran */
	unsigned on_cpu;
	int from_irq; /* the low thread raises the interrupt itself */
	unsigned rounds;
	struct lat lat;
	struct completion go;
};

static int high_main(void *arg)
{
	struct wake_test *wt = arg;
	unsigned seen = 0;

	for (;;) {
		/* Sleep until a new wake-up is posted (a spurious return just sleeps again). */
		thread_wait_until(wt->stop ||
				  __atomic_load_n(&wt->wakes, __ATOMIC_ACQUIRE) != seen);
		if (wt->stop)
			break;
		seen = __atomic_load_n(&wt->wakes, __ATOMIC_ACQUIRE);
		wt->t_run = arch_tsc();
		wt->on_cpu = raw_smp_processor_id();
		__atomic_store_n(&wt->ran, 1, __ATOMIC_RELEASE);
	}
	return 0;
}

/* Post a wake-up for the high thread and wake it. */
static void post_wake(struct wake_test *wt)
{
	wt->t_wake = arch_tsc();
	__atomic_add_fetch(&wt->wakes, 1, __ATOMIC_RELEASE);
	thread_wake(wt->high);
}

static void wake_from_irq(void *arg)
{
	post_wake(arg);
}

/* The low-priority thread on the measured CPU: busy, and (from_irq) the interrupt source. */
static int low_main(void *arg)
{
	struct wake_test *wt = arg;
	unsigned i;

	complete(&wt->go);
	for (i = 0; i < wt->rounds && !wt->stop; i++) {
		if (!wt->from_irq) {
			while (!wt->ran && !wt->stop)
				arch_cpu_relax(); /* busy: the waker is elsewhere */
			continue;
		}
		wt->ran = 0;
		selftest_irq_raise();
		if (!spin_until(&wt->ran, 10000000000ull)) {
			wt->lost = (int)i + 1;
			break;
		}
		if (wt->t_run >= wt->t_wake)
			lat_add(&wt->lat, wt->t_run - wt->t_wake);
	}
	return 0;
}

static int wake_latency(int from_irq)
{
	unsigned self = smp_processor_id();
	unsigned target = from_irq ? selftest_other_cpu(self) : selftest_other_cpu(self);
	struct wake_test *wt = kzalloc(sizeof(*wt));
	struct thread *low;
	int ret = 0;
	unsigned i;

	if (!wt)
		return selftest_fail("out of memory");
	if (!from_irq && target == self) {
		kfree(wt);
		selftest_report("skipped=needs 2 CPUs");
		return 0;
	}
	wt->from_irq = from_irq;
	wt->rounds = 40;
	completion_init(&wt->go);
	selftest_irq_set(wake_from_irq, wt);
	wt->high = thread_run("wake-high", high_main, wt, 90, (int)target);
	low = thread_run("wake-low", low_main, wt, 5, (int)target);
	if (!wt->high || !low)
		return selftest_fail("thread_run failed");
	wait_for_completion(&wt->go);
	if (!from_irq) {
		/* Cross-CPU: this thread wakes the high one on `target` while low spins there. */
		for (i = 0; i < wt->rounds; i++) {
			while (wt->high->state != THREAD_BLOCKED)
				thread_yield();
			wt->ran = 0;
			post_wake(wt);
			if (!spin_until(&wt->ran, 10000000000ull)) {
				ret = selftest_fail(
				    "high thread did not run within 10 s (round %u)", i);
				break;
			}
			if (wt->on_cpu != target && !ret)
				ret = selftest_fail("high thread ran on cpu %u, pinned to %u",
						    wt->on_cpu, target);
			lat_add(&wt->lat, wt->t_run - wt->t_wake);
		}
	}
	if (from_irq) {
		thread_join(low); /* it drives the rounds */
		wt->stop = 1;
	} else {
		wt->stop = 1;
		thread_join(low);
	}
	thread_wake(wt->high);
	thread_join(wt->high);
	selftest_irq_set(NULL, NULL);
	if (!ret && wt->lost)
		ret =
		    selftest_fail("high thread did not run within 10 s of the interrupt (round %d)",
				  wt->lost - 1);
	if (!ret && wt->lat.n < wt->rounds)
		ret = selftest_fail("only %u of %u wake-ups measured", wt->lat.n, wt->rounds);
	if (!ret) {
		selftest_report("cpu=%u", target);
		lat_report(from_irq ? "irq_to_thread" : "ipi_wake_to_thread", &wt->lat);
	}
	kfree(wt);
	return ret;
}

SELFTEST_ARG("sched_wake_irq", wake_latency, 1);
SELFTEST_ARG("sched_wake_ipi", wake_latency, 0);

/* ---- sched_preempt_sleep: preempted between prepare_sleep and the check, still wakes ----------- */

struct ps_test {
	struct thread *high;
	volatile int cond; /* the sleeper's condition: true before it ever sleeps */
	volatile int irq_ran;
	volatile int done; /* the sleeper saw its condition */
};

static int ps_high(void *arg)
{
	(void)arg;
	thread_prepare_sleep();
	thread_sleep();
	return 0;
}

static void ps_irq(void *arg)
{
	struct ps_test *ps = arg;

	thread_wake(ps->high); /* higher priority on this CPU: preempts at interrupt exit */
	ps->irq_ran = 1;
}

static int ps_low(void *arg)
{
	struct ps_test *ps = arg;

	/* Nobody will wake us: the condition was made true before we ever said SLEEPING. */
	for (;;) {
		thread_prepare_sleep();
		selftest_irq_raise(); /* an interrupt in the window between saying and checking */
		while (!ps->irq_ran)
			arch_cpu_relax();
		if (ps->cond)
			break;
		thread_sleep();
	}
	thread_cancel_sleep();
	ps->done = 1;
	return 0;
}

static int test_sched_preempt_sleep(void)
{
	unsigned target = selftest_other_cpu(smp_processor_id());
	struct ps_test *ps = kzalloc(sizeof(*ps));
	struct thread *low;
	int ret = 0;

	if (!ps)
		return selftest_fail("out of memory");
	ps->cond = 1;
	selftest_irq_set(ps_irq, ps);
	ps->high = thread_run("ps-high", ps_high, ps, 90, (int)target);
	if (!ps->high) {
		kfree(ps);
		return selftest_fail("thread_run failed");
	}
	while (__atomic_load_n(&ps->high->state, __ATOMIC_ACQUIRE) != THREAD_BLOCKED)
		thread_yield();
	/* Above init's priority, so it runs even when target is this CPU. */
	low = thread_run("ps-low", ps_low, ps, 20, (int)target);
	if (!low) {
		thread_wake(ps->high);
		thread_join(ps->high);
		kfree(ps);
		return selftest_fail("thread_run failed");
	}
	if (!spin_until(&ps->done, 2000000000ull)) {
		ret = selftest_fail("preempted before checking its condition, it never ran again");
		thread_wake(low); /* let it finish */
	}
	thread_join(low);
	thread_join(ps->high);
	selftest_irq_set(NULL, NULL);
	kfree(ps);
	return ret;
}
SELFTEST("sched_preempt_sleep", test_sched_preempt_sleep);

/* ---- sched_atomic_sleep: sleeping with preemption disabled is reported ------------------------ */

static struct completion atomic_go;

static int atomic_sleeper(void *arg)
{
	(void)arg;
	bug_expect(true);
	preempt_disable();
	wait_for_completion(&atomic_go); /* the bug on purpose */
	preempt_enable();
	bug_expect(false);
	return preempt_count();
}

static int test_sched_atomic_sleep(void)
{
	uint64_t before = sched_atomic_sleep_bugs;
	struct thread *t;
	int code;

	completion_init(&atomic_go);
	t = thread_run("atomic-sleeper", atomic_sleeper, NULL, 20, THREAD_ANY_CPU);
	if (!t)
		return selftest_fail("thread_run failed");
	while (t->state != THREAD_BLOCKED && t->state != THREAD_DEAD)
		thread_yield();
	complete(&atomic_go);
	code = thread_join(t);
	if (sched_atomic_sleep_bugs == before)
		return selftest_fail("sleeping with preemption disabled was not reported");
	if (code != 0)
		return selftest_fail("preempt count %d after the sleeper re-enabled preemption",
				     code);
	selftest_report("reports=%lu", (unsigned long)(sched_atomic_sleep_bugs - before));
	return 0;
}
SELFTEST("sched_atomic_sleep", test_sched_atomic_sleep);

/* ---- sched_migrate: move threads off a CPU, park the pinned ones ------------------------------ */

struct mig_test {
	struct completion release;
	volatile unsigned ran_on;
	volatile int ran;
};

static int mig_main(void *arg)
{
	struct mig_test *m = arg;

	wait_for_completion(&m->release);
	m->ran_on = raw_smp_processor_id();
	m->ran = 1;
	return 7;
}

struct mig_ctl {
	unsigned cpu;
	struct thread *movable, *pinned;
	struct mig_test *mm, *mp;
	unsigned moved;
	int movable_state, pinned_state;
	int ret;
};

/* Runs pinned on the CPU under test. */
static int mig_controller(void *arg)
{
	struct mig_ctl *c = arg;
	struct sched_stats before, after;

	/* Release both: they become runnable on this CPU, queued behind us (we run at a
	 * higher priority here), so deactivation finds them on the run queue. */
	complete(&c->mm->release);
	complete(&c->mp->release);
	thread_set_cpu(c->movable, THREAD_ANY_CPU);
	sched_get_stats(c->cpu, &before);
	sched_deactivate_cpu(c->cpu);
	sched_get_stats(c->cpu, &after);
	c->moved = (unsigned)(after.evacuated - before.evacuated);
	c->pinned_state = c->pinned->state;
	sched_activate_cpu(c->cpu);
	return 0;
}

static int test_sched_migrate(void)
{
	unsigned cpu = selftest_other_cpu(0);
	struct mig_test mm, mp;
	struct mig_ctl c;
	struct thread *ctl;
	int ret = 0;

	if (cpu == 0) {
		selftest_report("skipped=needs 2 CPUs");
		return 0;
	}
	memset(&mm, 0, sizeof(mm));
	memset(&mp, 0, sizeof(mp));
	memset(&c, 0, sizeof(c));
	completion_init(&mm.release);
	completion_init(&mp.release);
	c.cpu = cpu;
	c.mm = &mm;
	c.mp = &mp;
	/* Both start on `cpu` (created pinned) and block on their completions. */
	c.movable = thread_run("mig-movable", mig_main, &mm, 20, (int)cpu);
	c.pinned = thread_run("mig-pinned", mig_main, &mp, 20, (int)cpu);
	if (!c.movable || !c.pinned)
		return selftest_fail("thread_run failed");
	while (c.movable->state != THREAD_BLOCKED || c.pinned->state != THREAD_BLOCKED)
		thread_yield();
	ctl = thread_run("mig-ctl", mig_controller, &c, 60, (int)cpu);
	if (!ctl)
		return selftest_fail("thread_run failed");
	thread_join(ctl);
	if (thread_join(c.movable) != 7 || thread_join(c.pinned) != 7)
		ret = selftest_fail("a migrated or parked thread did not finish");
	else if (c.moved != 2)
		ret = selftest_fail("deactivate moved or parked %u threads, expected 2", c.moved);
	else if (c.pinned_state != THREAD_PARKED)
		ret = selftest_fail("pinned thread state %d while its CPU was inactive, expected "
				    "parked",
				    c.pinned_state);
	else if (mm.ran_on == cpu)
		ret = selftest_fail("movable thread still ran on the deactivated cpu %u", cpu);
	else if (mp.ran_on != cpu)
		ret = selftest_fail("pinned thread ran on cpu %u, pinned to %u", mp.ran_on, cpu);
	if (!ret)
		selftest_report("cpu=%u moved_to=%u parked_then_ran_on=%u", cpu, mm.ran_on,
				mp.ran_on);
	return ret;
}
SELFTEST("sched_migrate", test_sched_migrate);

/*
 * ---- sched_deactivate_starve: a deactivation waiting for a migrate-disabled thread moves
 * everything else off first ----------------------------------------------------------------
 *
 * A thread below a migrate-disabled one on the run queue of a CPU going down must leave with
 * the first pass: once the deactivating thread yields (to let the migrate-disabled one leave
 * its section), a CPU-bound FIFO thread left behind would run on the inactive CPU and starve
 * it for good (RT under the locks stress and churn: `sched:active` stuck going down).
 */
#define STARVE_HOLD_NS	100000000ull /* the migrate-disabled section */
#define STARVE_BOUND_NS 3000000000ull /* the hog gives up after this */
#define STARVE_LIMIT_NS 1500000000ull /* a deactivation slower than this starved */

struct starve_test {
	unsigned cpu;
	struct thread *md, *hog;
	volatile int md_spinning, hog_spinning, deactivating, stop;
	volatile int hog_ran_inactive;
	uint64_t deactivate_ns;
};

static int starve_md(void *arg)
{
	struct starve_test *st = arg;
	uint64_t end;

	migrate_disable();
	thread_set_cpu(current_thread(), THREAD_ANY_CPU); /* held here by migrate_disable only */
	st->md_spinning = 1;
	end = arch_now_ns() + STARVE_HOLD_NS;
	while (arch_now_ns() < end)
		arch_cpu_relax();
	migrate_enable();
	return 0;
}

static int starve_hog(void *arg)
{
	struct starve_test *st = arg;
	uint64_t end = arch_now_ns() + STARVE_BOUND_NS;

	thread_set_cpu(current_thread(), THREAD_ANY_CPU);
	st->hog_spinning = 1;
	while (!st->stop && arch_now_ns() < end) {
		if (st->deactivating && raw_smp_processor_id() == st->cpu)
			st->hog_ran_inactive = 1;
		arch_cpu_relax();
	}
	return 0;
}

/* Pinned on the CPU under test, above both. */
static int starve_controller(void *arg)
{
	struct starve_test *st = arg;
	uint64_t t0;

	st->deactivating = 1;
	t0 = arch_now_ns();
	sched_deactivate_cpu(st->cpu);
	st->deactivate_ns = arch_now_ns() - t0;
	st->stop = 1;
	sched_activate_cpu(st->cpu);
	return 0;
}

static int test_sched_deactivate_starve(void)
{
	unsigned cpu = selftest_other_cpu(0);
	struct thread *me = current_thread(), *ctl;
	int old_prio = me->base_prio, ret = 0;
	struct starve_test st;

	if (cpu == 0) {
		selftest_report("skipped=needs 2 CPUs");
		return 0;
	}
	memset(&st, 0, sizeof(st));
	st.cpu = cpu;
	/* Above the hog once it is moved to our CPU: we still have to join it. */
	thread_set_prio(me, 25);
	st.hog = thread_run("starve-hog", starve_hog, &st, 20, (int)cpu);
	if (!st.hog)
		return selftest_fail("thread_run failed");
	while (!st.hog_spinning)
		thread_yield();
	st.md = thread_run("starve-md", starve_md, &st, 30, (int)cpu);
	if (!st.md)
		return selftest_fail("thread_run failed");
	while (!st.md_spinning)
		thread_yield();
	ctl = thread_run("starve-ctl", starve_controller, &st, 60, (int)cpu);
	if (!ctl)
		return selftest_fail("thread_run failed");
	thread_join(ctl);
	thread_join(st.md);
	st.stop = 1;
	thread_join(st.hog);
	thread_set_prio(me, old_prio);
	if (st.hog_ran_inactive || st.deactivate_ns > STARVE_LIMIT_NS)
		ret = selftest_fail("a FIFO thread left on cpu %u ran there while it went down "
				    "(%d) and its deactivation took %lu ms",
				    cpu, st.hog_ran_inactive,
				    (unsigned long)(st.deactivate_ns / 1000000));
	else
		selftest_report("cpu=%u deactivate_ms=%lu", cpu,
				(unsigned long)(st.deactivate_ns / 1000000));
	return ret;
}
SELFTEST("sched_deactivate_starve", test_sched_deactivate_starve);
