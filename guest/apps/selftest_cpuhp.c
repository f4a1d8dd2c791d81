// SPDX-License-Identifier: MIT
/*
 * CPU hotplug self-tests (names start with "cpuhp"): the state table, CPUs cycled offline
 * and online under load (threads and timers must survive, each timer firing or cancelled
 * exactly once and never early), every resting state walked down and up, a failure
 * injected at every state in both directions (the CPU must end where it started and stay
 * usable), dynamic states, serial against parallel bring-up, and a down/up cycle benchmark.
 */
#include "apps/selftest.h"
#include "arch.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/cpuhp.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/string.h"
#include "kernel/timer.h"

CMDLINE_PARAM(bench_cycles, .name = "cpuhp.bench_cycles", .kind = CMDLINE_UINT, .min = 1,
	      .max = 1000000);
CMDLINE_PARAM(cycle_rounds, .name = "cpuhp.cycle_rounds", .kind = CMDLINE_UINT, .min = 1,
	      .max = 100000);

static const char *const section_names[] = { "prepare", "starting", "online" };

/* The non-boot CPUs that are present, in `list`; returns how many. */
static unsigned hotpluggable(unsigned *list)
{
	unsigned cpu, n = 0;

	for_each_cpu(cpu, &cpu_present_mask)
		if (cpu != 0)
			list[n++] = cpu;
	return n;
}

/* Does the CPU look like what its state says: online mask, state, target. */
static int check_cpu(unsigned cpu, int state, const char *when)
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

/* Run a thread pinned to `cpu` and check it ran there. */
static int ran_on(void *arg)
{
	(void)arg;
	return (int)smp_processor_id();
}

static int check_usable(unsigned cpu)
{
	struct thread *t = thread_run("cpuhp-probe", ran_on, NULL, 20, (int)cpu);
	int where;

	if (!t)
		return selftest_fail("cannot create a thread on cpu %u", cpu);
	where = thread_join(t);
	if (where != (int)cpu)
		return selftest_fail("a thread pinned to cpu %u ran on cpu %d", cpu, where);
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
		if (check_cpu(cpu, CPUHP_ONLINE, "after boot"))
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

static int test_cpuhp_cycle(void)
{
	unsigned cpus[NR_CPUS], n = hotpluggable(cpus), i, r, rounds;
	uint32_t seed = 42;
	int ret = 0;

	rounds = (unsigned)cmdline_uint("cpuhp.cycle_rounds", 2);
	if (!n) {
		selftest_report("cpus=1: nothing to unplug");
		return 0;
	}
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
	arm_cycle_timers(&seed, cpus, n);

	for (r = 0; r < rounds && !ret; r++) {
		for (i = 0; i < n && !ret; i++) {
			unsigned cpu = cpus[(i + r) % n];
			int err = cpu_down(cpu);

			if (err)
				ret = selftest_fail("round %u: cpu_down(%u) = %d", r, cpu, err);
			else if (!check_cpu(cpu, CPUHP_OFFLINE, "after cpu_down"))
				err = cpu_up(cpu);
			else
				ret = -1;
			if (!ret && err)
				ret = selftest_fail("round %u: cpu_up(%u) = %d", r, cpu, err);
			if (!ret)
				ret = check_cpu(cpu, CPUHP_ONLINE, "after cpu_up");
			/* Cancel a few timers wherever they are now. */
			if (!ret) {
				unsigned k = selftest_rand(&seed) % CYCLE_TIMERS;

				if (timer_delete(&ctimers[k].t))
					ctimers[k].cancelled = true;
			}
		}
	}

	/* Everything finishes, every timer fires or was cancelled, exactly once. */
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
	{
		uint64_t last = 0, slack = ns_to_jiffies(CYCLE_SLACK_MS * 1000000ull), late_max = 0;
		unsigned fired = 0, cancelled = 0;

		/* Until every timer that must fire has fired, or is past its bound. */
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
		/* Deferrable ones may wait for a busy tick: nudge every CPU's wheel a little. */
		sleep_ns(50000000);
		for (i = 0; i < CYCLE_TIMERS; i++) {
			struct cycle_timer *c = &ctimers[i];
			bool deferrable = c->t.wt.flags & TIMER_DEFERRABLE;

			if (timer_pending(&c->t) && deferrable)
				timer_delete_sync(&c->t); /* waits for a busy CPU: allowed */
			else if (!ret && timer_pending(&c->t))
				ret = selftest_fail(
				    "timer %u (armed %lu for %lu) still pending at %lu", i,
				    (unsigned long)c->armed, (unsigned long)c->expires,
				    (unsigned long)cycle_bound(c, slack));
			else if (!ret && c->fired && !deferrable &&
				 c->fired_at > cycle_bound(c, slack))
				ret = selftest_fail(
				    "timer %u (armed %lu for %lu) fired at %lu, after "
				    "its bound %lu",
				    i, (unsigned long)c->armed, (unsigned long)c->expires,
				    (unsigned long)c->fired_at,
				    (unsigned long)cycle_bound(c, slack));
			else if (!ret && c->fired + (int)c->cancelled != 1)
				ret = selftest_fail("timer %u fired %d times, cancelled %d", i,
						    c->fired, c->cancelled);
			else if (!ret && c->fired && c->fired_at < c->expires)
				ret = selftest_fail("timer %u fired at jiffy %lu, before %lu", i,
						    (unsigned long)c->fired_at,
						    (unsigned long)c->expires);
			if (c->fired && c->fired_at > c->expires &&
			    c->fired_at - c->expires > late_max)
				late_max = c->fired_at - c->expires;
			fired += c->fired;
			cancelled += c->cancelled;
		}
		selftest_report("cpus=%u rounds=%u cycles=%u timers=%u fired=%u cancelled=%u "
				"workers=%u pinned=%u late_max_jiffies=%lu",
				n + 1, rounds, rounds * n, CYCLE_TIMERS, fired, cancelled,
				CYCLE_WORKERS, n, (unsigned long)late_max);
	}
	return ret;
}
SELFTEST("cpuhp_cycle", test_cpuhp_cycle);

/* ---- cpuhp_walk: every resting state, down and up, then random targets ------------------------ */

static int walk_to(unsigned cpu, int target)
{
	int err = cpuhp_set_target(cpu, target);

	if (err)
		return selftest_fail("cpu %u: %s -> %s failed: %d", cpu,
				     cpuhp_name(cpuhp_state(cpu)), cpuhp_name(target), err);
	return check_cpu(cpu, target, "after a walk");
}

static int test_cpuhp_walk(void)
{
	unsigned cpus[NR_CPUS], n = hotpluggable(cpus), cpu, steps = 0;
	int rest[CPUHP_NR_STATES], nrest = 0, id, i;
	uint32_t seed = 7;

	if (!n) {
		selftest_report("cpus=1: nothing to unplug");
		return 0;
	}
	cpu = cpus[n - 1];
	for (id = 0; id < CPUHP_NR_STATES; id++)
		if (cpuhp_name(id) && !cpuhp_state_atomic(id))
			rest[nrest++] = id;
	for (i = nrest - 2; i >= 0; i--, steps++) /* down one state at a time */
		if (walk_to(cpu, rest[i]))
			return -1;
	for (i = 1; i < nrest; i++, steps++) /* and up again */
		if (walk_to(cpu, rest[i]))
			return -1;
	for (i = 0; i < 24; i++, steps++) /* random jumps */
		if (walk_to(cpu, rest[selftest_rand(&seed) % nrest]))
			return -1;
	if (walk_to(cpu, CPUHP_ONLINE) || check_usable(cpu))
		return -1;
	selftest_report("cpu=%u resting_states=%d transitions=%u", cpu, nrest, steps + 1);
	return 0;
}
SELFTEST("cpuhp_walk", test_cpuhp_walk);

/* ---- cpuhp_fail: a failure at every state, both directions ------------------------------------ */

static int fail_once(unsigned cpu, int from, int to, int at)
{
	int err, failed = -1;
	if (walk_to(cpu, from))
		return -1;
	if (cpuhp_fail(cpu, at))
		return 1; /* no callback there: nothing to fail */
	err = cpuhp_set_target(cpu, to);
	if (!err)
		return selftest_fail("cpu %u: %s -> %s succeeded with a failure at %s", cpu,
				     cpuhp_name(from), cpuhp_name(to), cpuhp_name(at));
	if (cpuhp_last_error(cpu, &failed) != err || failed != at)
		return selftest_fail("cpu %u: failure reported at %s, injected at %s", cpu,
				     cpuhp_name(failed), cpuhp_name(at));
	if (check_cpu(cpu, from, "after a failed transition"))
		return -1;
	return 0;
}

static int test_cpuhp_fail(void)
{
	unsigned cpus[NR_CPUS], n = hotpluggable(cpus), cpu, up_fails = 0, down_fails = 0;
	int id, r;

	if (!n) {
		selftest_report("cpus=1: nothing to unplug");
		return 0;
	}
	cpu = cpus[0];
	for (id = CPUHP_OFFLINE + 1; id < CPUHP_ONLINE; id++) {
		r = fail_once(cpu, CPUHP_OFFLINE, CPUHP_ONLINE, id);
		if (r < 0)
			return -1;
		if (r == 0) {
			up_fails++;
			if (walk_to(cpu, CPUHP_ONLINE) || check_usable(cpu))
				return -1;
		}
	}
	/* Down: a tear-down can fail in PREPARE (on the control CPU) and ONLINE; a dying
	 * CPU's STARTING steps and the report of its death cannot turn back. */
	for (id = CPUHP_ONLINE - 1; id > CPUHP_OFFLINE; id--) {
		enum cpuhp_section s = cpuhp_section_of(id);

		if (s == CPUHP_SECTION_STARTING || id == CPUHP_BRINGUP_CPU)
			continue;
		r = fail_once(cpu, CPUHP_ONLINE, CPUHP_OFFLINE, id);
		if (r < 0)
			return -1;
		if (r == 0) {
			down_fails++;
			if (check_usable(cpu))
				return -1;
		}
	}
	if (walk_to(cpu, CPUHP_ONLINE) || check_usable(cpu))
		return -1;
	if (!up_fails || !down_fails)
		return selftest_fail("no failure could be injected (up %u, down %u)", up_fails,
				     down_fails);
	selftest_report("cpu=%u up_failures=%u down_failures=%u rolled_back=%u", cpu, up_fails,
			down_fails, up_fails + down_fails);
	return 0;
}
SELFTEST("cpuhp_fail", test_cpuhp_fail);

/* ---- cpuhp_dyn: states registered at run time ------------------------------------------------- */

static int dyn_up[NR_CPUS], dyn_down[NR_CPUS], dyn_wrong_cpu, dyn_prep_up[NR_CPUS],
    dyn_prep_down[NR_CPUS];

static int dyn_startup(unsigned cpu)
{
	if (smp_processor_id() != cpu || preemptible() == 0)
		__atomic_add_fetch(&dyn_wrong_cpu, 1, __ATOMIC_RELAXED);
	dyn_up[cpu]++;
	return 0;
}

static int dyn_teardown(unsigned cpu)
{
	if (smp_processor_id() != cpu)
		__atomic_add_fetch(&dyn_wrong_cpu, 1, __ATOMIC_RELAXED);
	dyn_down[cpu]++;
	return 0;
}

static int dyn_prep_startup(unsigned cpu)
{
	dyn_prep_up[cpu]++;
	return 0;
}

static int dyn_prep_teardown(unsigned cpu)
{
	dyn_prep_down[cpu]++;
	return 0;
}

static int test_cpuhp_dyn(void)
{
	unsigned cpus[NR_CPUS], n = hotpluggable(cpus), cpu, online = 0;
	int on, prep;

	memset(dyn_up, 0, sizeof(dyn_up));
	memset(dyn_down, 0, sizeof(dyn_down));
	memset(dyn_prep_up, 0, sizeof(dyn_prep_up));
	memset(dyn_prep_down, 0, sizeof(dyn_prep_down));
	dyn_wrong_cpu = 0;
	on = cpuhp_setup_state(CPUHP_SECTION_ONLINE, "selftest:online", dyn_startup, dyn_teardown,
			       true);
	prep = cpuhp_setup_state(CPUHP_SECTION_PREPARE, "selftest:prepare", dyn_prep_startup,
				 dyn_prep_teardown, false);
	if (on < 0 || prep < 0)
		return selftest_fail("cpuhp_setup_state: %d %d", on, prep);
	if (cpuhp_setup_state(CPUHP_SECTION_ONLINE, "selftest:online", NULL, NULL, false) >= 0 ||
	    cpuhp_setup_state(CPUHP_SECTION_STARTING, "selftest:starting", NULL, NULL, false) >= 0)
		return selftest_fail("a duplicate name or a STARTING dynamic state was accepted");
	for_each_cpu(cpu, &cpu_online_mask) {
		online++;
		if (dyn_up[cpu] != 1 || dyn_prep_up[cpu])
			return selftest_fail("cpu %u: startup ran %d/%d times at registration", cpu,
					     dyn_up[cpu], dyn_prep_up[cpu]);
	}
	if (n) {
		cpu = cpus[n - 1];
		if (cpu_down(cpu) || cpu_up(cpu))
			return selftest_fail("cannot cycle cpu %u", cpu);
		if (dyn_down[cpu] != 1 || dyn_up[cpu] != 2 || dyn_prep_down[cpu] != 1 ||
		    dyn_prep_up[cpu] != 1)
			return selftest_fail("cpu %u cycle: online %d/%d prepare %d/%d", cpu,
					     dyn_up[cpu], dyn_down[cpu], dyn_prep_up[cpu],
					     dyn_prep_down[cpu]);
	}
	if (cpuhp_remove_state(on, true) || cpuhp_remove_state(prep, false))
		return selftest_fail("cpuhp_remove_state failed");
	for_each_cpu(cpu, &cpu_online_mask)
		if (dyn_down[cpu] != (n && cpu == cpus[n - 1] ? 2 : 1))
			return selftest_fail("cpu %u: teardown ran %d times at removal", cpu,
					     dyn_down[cpu]);
	if (cpuhp_name(on) || cpuhp_state_id("selftest:online") >= 0)
		return selftest_fail("the removed state is still listed");
	if (dyn_wrong_cpu)
		return selftest_fail("%d ONLINE callbacks ran off their CPU or not preemptible",
				     dyn_wrong_cpu);
	selftest_report("online_state=%d prepare_state=%d cpus=%u", on, prep, online);
	return 0;
}
SELFTEST("cpuhp_dyn", test_cpuhp_dyn);

/* ---- cpuhp_parallel: several CPUs at once against one by one ---------------------------------- */

static int all_to(const unsigned *cpus, unsigned n, int target, bool parallel, uint64_t *ns)
{
	unsigned i, got;

	if (target == CPUHP_OFFLINE) {
		for (i = 0; i < n; i++)
			if (walk_to(cpus[i], CPUHP_OFFLINE))
				return -1;
		return 0;
	}
	got = cpuhp_bringup_cpus(cpus, n, target, parallel, ns);
	if (got != n)
		return selftest_fail("%s bring-up: %u of %u CPUs came up",
				     parallel ? "parallel" : "serial", got, n);
	for (i = 0; i < n; i++)
		if (check_cpu(cpus[i], target, "after a bring-up") || check_usable(cpus[i]))
			return -1;
	return 0;
}

static int test_cpuhp_parallel(void)
{
	unsigned cpus[NR_CPUS], n = hotpluggable(cpus);
	uint64_t serial = 0, parallel = 0;

	if (!n) {
		selftest_report("cpus=1: nothing to bring up");
		return 0;
	}
	if (all_to(cpus, n, CPUHP_OFFLINE, false, NULL) ||
	    all_to(cpus, n, CPUHP_ONLINE, false, &serial) ||
	    all_to(cpus, n, CPUHP_OFFLINE, false, NULL) ||
	    all_to(cpus, n, CPUHP_ONLINE, true, &parallel))
		return -1;
	selftest_report("cpus=%u serial_ns=%lu parallel_ns=%lu speedup_x100=%lu", n,
			(unsigned long)serial, (unsigned long)parallel,
			(unsigned long)(parallel ? serial * 100 / parallel : 0));
	return 0;
}
SELFTEST("cpuhp_parallel", test_cpuhp_parallel);

/* ---- cpuhp_bench: down/up cycles of one CPU ---------------------------------------------------- */

#define BENCH_MAX 2000

static uint64_t bench_down[BENCH_MAX], bench_up[BENCH_MAX];

static void sort_u64(uint64_t *v, unsigned n)
{
	unsigned i, j;

	for (i = 1; i < n; i++) {
		uint64_t x = v[i];

		for (j = i; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

static uint64_t pct(const uint64_t *v, unsigned n, unsigned p)
{
	unsigned i = (unsigned)(((uint64_t)n * p + 99) / 100);

	return v[i ? i - 1 : 0];
}

static int test_cpuhp_bench(void)
{
	unsigned cpus[NR_CPUS], n = hotpluggable(cpus), cycles, i, cpu;
	uint64_t next_report;
	int id;

	cycles = (unsigned)cmdline_uint("cpuhp.bench_cycles", 20);
	if (cycles > BENCH_MAX)
		cycles = BENCH_MAX;
	if (!n || !cycles) {
		selftest_report("cpus=%u cycles=%u: nothing to measure", n + 1, cycles);
		return 0;
	}
	cpu = cpus[n - 1];
	next_report = arch_now_ns() + 10000000000ull;
	for (i = 0; i < cycles; i++) {
		uint64_t t0 = arch_now_ns(), t1, t2;

		if (cpu_down(cpu))
			return selftest_fail("cycle %u: cpu_down failed", i);
		t1 = arch_now_ns();
		if (cpu_up(cpu))
			return selftest_fail("cycle %u: cpu_up failed", i);
		t2 = arch_now_ns();
		bench_down[i] = t1 - t0;
		bench_up[i] = t2 - t1;
		if (t2 > next_report) { /* long runs show progress */
			selftest_report("progress %u/%u cycles", i + 1, cycles);
			next_report = t2 + 10000000000ull;
		}
	}
	/* Where the time of the last cycle went, per state with a callback. */
	for (id = CPUHP_OFFLINE + 1; id < CPUHP_ONLINE; id++) {
		uint64_t u = cpuhp_state_ns(cpu, id, true), d = cpuhp_state_ns(cpu, id, false);

		if (cpuhp_name(id) && (u || d))
			selftest_report("state %s up_us=%lu down_us=%lu", cpuhp_name(id),
					(unsigned long)(u / 1000), (unsigned long)(d / 1000));
	}
	sort_u64(bench_down, cycles);
	sort_u64(bench_up, cycles);
	selftest_report("cpu=%u cycles=%u down_us median=%lu p99=%lu max=%lu up_us median=%lu "
			"p99=%lu max=%lu",
			cpu, cycles, (unsigned long)(pct(bench_down, cycles, 50) / 1000),
			(unsigned long)(pct(bench_down, cycles, 99) / 1000),
			(unsigned long)(bench_down[cycles - 1] / 1000),
			(unsigned long)(pct(bench_up, cycles, 50) / 1000),
			(unsigned long)(pct(bench_up, cycles, 99) / 1000),
			(unsigned long)(bench_up[cycles - 1] / 1000));
	return check_usable(cpu);
}
SELFTEST("cpuhp_bench", test_cpuhp_bench);
