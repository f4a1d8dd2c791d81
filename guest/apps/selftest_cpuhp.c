// SPDX-License-Identifier: MIT
/*
 * CPU hotplug self-tests (names start with "cpuhp"): the state table, and CPUs cycled
 * offline and online under load (threads and timers must survive, each timer firing or
 * cancelled exactly once and never early). The tests that drive one CPU through the states
 * are in selftest_cpuhp_walk.c.
 */
#include "apps/selftest.h"
#include "apps/selftest_cpuhp.h"
#include "arch.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/cpuhp.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/string.h"
#include "kernel/timer.h"

CMDLINE_PARAM(cycle_rounds, .name = "cpuhp.cycle_rounds", .kind = CMDLINE_UINT, .min = 1,
	      .max = 100000);

static const char *const section_names[] = { "prepare", "starting", "online" };

unsigned selftest_cpuhp_present(unsigned *list)
{
	unsigned cpu, n = 0;

	for_each_cpu(cpu, &cpu_present_mask)
		if (cpu != 0)
			list[n++] = cpu;
	return n;
}

int selftest_cpuhp_check_cpu(unsigned cpu, int state, const char *when)
{
	bool in_mask = cpumask_test(&cpu_online_mask, cpu);

	if (cpuhp_state(cpu) != state)
		return selftest_fail("cpu %u %s: state %s, expected %s", cpu, when,
				     cpuhp_name(cpuhp_state(cpu)), cpuhp_name(state));
	if (in_mask != (state >= CPUHP_AP_ONLINE_MASK))
		return selftest_fail("cpu %u %s: state %s but %sin the online mask", cpu, when,
				     cpuhp_name(state), in_mask ? "" : "not ");
	return 0;
}

/* ---- cpuhp_states ----------------------------------------------------------------------------- */

static int test_cpuhp_states(void)
{
	struct cpuhp_state_info in;
	int id, last_section = 0, n = 0, per[3] = { 0, 0, 0 };
	unsigned cpu;

	for (id = 0; id < CPUHP_NR_STATES; id++) {
		if (!cpuhp_state_info(id, &in))
			continue;
		selftest_report("state id=%d name=%s section=%s target=%d serialize=%d", in.id,
				in.name, section_names[in.section], in.can_rest, in.serialize);
		if ((int)in.section < last_section)
			return selftest_fail("state %s (%s) after a later section", in.name,
					     section_names[in.section]);
		last_section = in.section;
		if (cpuhp_state_id(in.name) != id)
			return selftest_fail("state %s does not map back to id %d", in.name, id);
		if (in.can_rest == cpuhp_state_atomic(id))
			return selftest_fail("state %s: target=%d", in.name, in.can_rest);
		per[in.section]++;
		n++;
	}
	if (!per[0] || !per[1] || !per[2])
		return selftest_fail("a section is empty");
	if (cpuhp_state_id("no-such-state") != -1 || cpuhp_set_target(0, CPUHP_OFFLINE) >= 0 ||
	    cpuhp_set_target(1, CPUHP_AP_ARCH_STARTING) >= 0 || cpuhp_set_target(1, 999) >= 0)
		return selftest_fail("a bad name, the boot CPU or a bad target was accepted");
	for_each_cpu(cpu, &cpu_online_mask)
		if (selftest_cpuhp_check_cpu(cpu, CPUHP_ONLINE, "after boot"))
			return -1;
	selftest_report("states=%d prepare=%d starting=%d online=%d", n, per[0], per[1], per[2]);
	return 0;
}
SELFTEST("cpuhp_states", test_cpuhp_states);

/* ---- cpuhp_cycle: CPUs leave and come back while threads and timers run ----------------------- */

#define CYCLE_TIMERS  96
#define CYCLE_WORKERS 6

/*
 * How late a cycle timer may fire: the wheel's own granularity for its timeout (the level it
 * lands on; timer_wheel.h: at most 12.7% of the timeout) plus CYCLE_SLACK_MS for everything
 * else: its CPU may be going down (its timers wait for the teardown to move them), the
 * expiry runs in a softirq or a thread, and a loaded host leaves vCPUs waiting for a
 * physical CPU. A bound against lost expiries (the watchdog's 10 s), not a latency target:
 * how late they were is reported.
 */
#define CYCLE_SLACK_MS 10000

struct cycle_timer {
	struct timer_list t;
	uint64_t armed; /* jiffy it was armed at */
	uint64_t expires;
	uint64_t fired_at;
	int fired; /* callback runs */
	bool cancelled; /* timer_delete() found it pending */
};

struct cycle_pinned {
	struct thread *t;
	unsigned cpu;
	unsigned iterations;
	unsigned strays; /* ran anywhere but its CPU */
};

struct cycle_worker {
	struct thread *t;
	unsigned id;
	uint64_t cpus_seen;
	uint64_t sum;
};

static struct cycle_timer ctimers[CYCLE_TIMERS];
static struct cycle_pinned cpinned[NR_CPUS];
static struct cycle_worker cworkers[CYCLE_WORKERS];
static volatile int cycle_stop;

/* The last jiffy timer c may fire at: the wheel's bucket for its timeout, plus slack. */
static uint64_t cycle_bound(const struct cycle_timer *c, uint64_t slack)
{
	uint64_t bucket;

	wheel_calc_index(c->armed, c->expires, &bucket);
	return bucket + slack;
}

static void cycle_timer_fn(struct timer_list *t)
{
	struct cycle_timer *c = container_of(t, struct cycle_timer, t);

	c->fired_at = READ_ONCE(jiffies);
	__atomic_add_fetch(&c->fired, 1, __ATOMIC_RELAXED);
}

static int cycle_pinned_main(void *arg)
{
	struct cycle_pinned *p = arg;

	while (!READ_ONCE(cycle_stop)) {
		if (smp_processor_id() != p->cpu)
			p->strays++;
		p->iterations++;
		sleep_ns(500000 + (p->iterations % 7) * 100000);
	}
	return 0;
}

static uint64_t cycle_work(unsigned id, unsigned i)
{
	uint64_t v = 0;
	unsigned k;

	for (k = 0; k < 50; k++)
		v += (uint64_t)id * 7919u + i * 31u + k;
	return v;
}

static int cycle_worker_main(void *arg)
{
	struct cycle_worker *w = arg;
	uint32_t seed = w->id + 1;
	unsigned i;

	for (i = 0; i < 40; i++) {
		w->sum += cycle_work(w->id, i);
		w->cpus_seen |= 1ull << (raw_smp_processor_id() % 64);
		if (i % 3 == 0)
			sleep_ns(200000 + selftest_rand(&seed) % 1500000);
		else
			thread_yield();
	}
	return 0;
}

static void arm_cycle_timers(uint32_t *seed, const unsigned *cpus, unsigned n)
{
	unsigned i;

	for (i = 0; i < CYCLE_TIMERS; i++) {
		struct cycle_timer *c = &ctimers[i];
		unsigned cpu = i % 4 == 0 ? 0 : cpus[i % n];

		memset(c, 0, sizeof(*c));
		timer_setup(&c->t, cycle_timer_fn, i % 8 == 1 ? TIMER_DEFERRABLE : 0);
		c->armed = jiffies;
		c->expires = c->armed + 5 + selftest_rand(seed) % 600;
		if (timer_add_on(&c->t, c->expires, cpu))
			timer_add(&c->t, c->expires); /* that CPU is away right now */
	}
}

/* Start a pinned thread on each of the `n` hotpluggable CPUs and the floating workers. */
static int cycle_start_threads(const unsigned *cpus, unsigned n)
{
	unsigned i;

	cycle_stop = 0;
	for (i = 0; i < n; i++) {
		struct cycle_pinned *p = &cpinned[i];

		memset(p, 0, sizeof(*p));
		p->cpu = cpus[i];
		p->t = thread_run("cycle-pinned", cycle_pinned_main, p, 30, (int)cpus[i]);
		if (!p->t)
			return selftest_fail("cannot create a pinned thread");
	}
	for (i = 0; i < CYCLE_WORKERS; i++) {
		struct cycle_worker *w = &cworkers[i];

		memset(w, 0, sizeof(*w));
		w->id = i;
		w->t = thread_run("cycle-worker", cycle_worker_main, w, 20 + i % 3, -1);
		if (!w->t)
			return selftest_fail("cannot create a worker");
	}
	return 0;
}

/* Take each CPU down and up again, `rounds` times, cancelling a random timer after each. */
static int cycle_rounds(const unsigned *cpus, unsigned n, unsigned rounds, uint32_t *seed)
{
	unsigned i, r;
	int ret = 0;

	for (r = 0; r < rounds && !ret; r++) {
		for (i = 0; i < n && !ret; i++) {
			unsigned cpu = cpus[(i + r) % n];
			int err = cpu_down(cpu);

			if (err)
				ret = selftest_fail("round %u: cpu_down(%u) = %d", r, cpu, err);
			else if (!selftest_cpuhp_check_cpu(cpu, CPUHP_OFFLINE, "after cpu_down"))
				err = cpu_up(cpu);
			else
				ret = -1;
			if (!ret && err)
				ret = selftest_fail("round %u: cpu_up(%u) = %d", r, cpu, err);
			if (!ret)
				ret = selftest_cpuhp_check_cpu(cpu, CPUHP_ONLINE, "after cpu_up");
			/* Cancel a few timers wherever they are now. */
			if (!ret) {
				unsigned k = selftest_rand(seed) % CYCLE_TIMERS;

				if (timer_delete(&ctimers[k].t))
					ctimers[k].cancelled = true;
			}
		}
	}
	return ret;
}

/*
 * Join every thread (always, whatever `ret`); while `ret` is 0, check each worker computed
 * its sum and each pinned thread ran, only on its CPU. Returns `ret` or the first failure.
 */
static int cycle_join_threads(unsigned n, int ret)
{
	unsigned i;

	for (i = 0; i < CYCLE_WORKERS; i++) {
		thread_join(cworkers[i].t);
		if (!ret) {
			uint64_t want = 0;
			unsigned k;

			for (k = 0; k < 40; k++)
				want += cycle_work(i, k);
			if (cworkers[i].sum != want)
				ret = selftest_fail("worker %u computed %lu, not %lu", i,
						    (unsigned long)cworkers[i].sum,
						    (unsigned long)want);
		}
	}
	WRITE_ONCE(cycle_stop, 1);
	for (i = 0; i < n; i++) {
		thread_join(cpinned[i].t);
		if (!ret && (cpinned[i].strays || !cpinned[i].iterations))
			ret =
			    selftest_fail("pinned thread of cpu %u: %u iterations, %u elsewhere",
					  cpinned[i].cpu, cpinned[i].iterations, cpinned[i].strays);
	}
	return ret;
}

/* Sleep until every pending non-deferrable timer has fired or is past its bound. */
static void cycle_wait_timers(uint64_t slack)
{
	uint64_t last;
	unsigned i;

	do {
		last = 0;
		for (i = 0; i < CYCLE_TIMERS; i++)
			if (timer_pending(&ctimers[i].t) &&
			    !(ctimers[i].t.wt.flags & TIMER_DEFERRABLE) &&
			    cycle_bound(&ctimers[i], slack) > last)
				last = cycle_bound(&ctimers[i], slack);
		if (last)
			sleep_ns(5000000);
	} while (last && ns_to_jiffies(arch_now_ns()) <= last);
}

struct cycle_tally {
	unsigned fired, cancelled;
	uint64_t late_max;
};

/*
 * Every timer fired or was cancelled, exactly once, never early nor past its bound (a
 * deferrable one still pending is deleted: it may wait for a busy CPU). Counts into
 * `tally`; returns `ret` or the first failure.
 */
static int cycle_check_timers(uint64_t slack, int ret, struct cycle_tally *tally)
{
	unsigned i;

	for (i = 0; i < CYCLE_TIMERS; i++) {
		struct cycle_timer *c = &ctimers[i];
		bool deferrable = c->t.wt.flags & TIMER_DEFERRABLE;

		if (timer_pending(&c->t) && deferrable)
			timer_delete_sync(&c->t); /* waits for a busy CPU: allowed */
		else if (!ret && timer_pending(&c->t))
			ret = selftest_fail("timer %u (armed %lu for %lu) still pending at %lu", i,
					    (unsigned long)c->armed, (unsigned long)c->expires,
					    (unsigned long)cycle_bound(c, slack));
		else if (!ret && c->fired && !deferrable && c->fired_at > cycle_bound(c, slack))
			ret = selftest_fail("timer %u (armed %lu for %lu) fired at %lu, after "
					    "its bound %lu",
					    i, (unsigned long)c->armed, (unsigned long)c->expires,
					    (unsigned long)c->fired_at,
					    (unsigned long)cycle_bound(c, slack));
		else if (!ret && c->fired + (int)c->cancelled != 1)
			ret = selftest_fail("timer %u fired %d times, cancelled %d", i, c->fired,
					    c->cancelled);
		else if (!ret && c->fired && c->fired_at < c->expires)
			ret = selftest_fail("timer %u fired at jiffy %lu, before %lu", i,
					    (unsigned long)c->fired_at, (unsigned long)c->expires);
		if (c->fired && c->fired_at > c->expires &&
		    c->fired_at - c->expires > tally->late_max)
			tally->late_max = c->fired_at - c->expires;
		tally->fired += c->fired;
		tally->cancelled += c->cancelled;
	}
	return ret;
}

static int test_cpuhp_cycle(void)
{
	unsigned cpus[NR_CPUS], n = selftest_cpuhp_present(cpus), rounds;
	uint64_t slack = ns_to_jiffies(CYCLE_SLACK_MS * 1000000ull);
	struct cycle_tally tally = { 0 };
	uint32_t seed = 42;
	int ret;

	rounds = (unsigned)cmdline_uint("cpuhp.cycle_rounds", 2);
	if (!n) {
		selftest_report("cpus=1: nothing to unplug");
		return 0;
	}
	ret = cycle_start_threads(cpus, n);
	if (ret)
		return ret;
	arm_cycle_timers(&seed, cpus, n);
	ret = cycle_rounds(cpus, n, rounds, &seed);
	/* Everything finishes, every timer fires or was cancelled, exactly once. */
	ret = cycle_join_threads(n, ret);
	cycle_wait_timers(slack);
	/* Deferrable ones may wait for a busy tick: nudge every CPU's wheel a little. */
	sleep_ns(50000000);
	ret = cycle_check_timers(slack, ret, &tally);
	selftest_report("cpus=%u rounds=%u cycles=%u timers=%u fired=%u cancelled=%u "
			"workers=%u pinned=%u late_max_jiffies=%lu",
			n + 1, rounds, rounds * n, CYCLE_TIMERS, tally.fired, tally.cancelled,
			CYCLE_WORKERS, n, (unsigned long)tally.late_max);
	return ret;
}
SELFTEST("cpuhp_cycle", test_cpuhp_cycle);
