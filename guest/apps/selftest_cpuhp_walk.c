// SPDX-License-Identifier: MIT
/*
 * CPU hotplug self-tests that drive CPUs through the states (names start with "cpuhp"):
 * every resting state walked down and up, a failure injected at every state in both
 * directions (the CPU must end where it started and stay usable), dynamic states, serial
 * against parallel bring-up, and a down/up cycle benchmark.
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

CMDLINE_PARAM(bench_cycles, .name = "cpuhp.bench_cycles", .kind = CMDLINE_UINT, .min = 1,
	      .max = 1000000);

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

/* ---- cpuhp_walk: every resting state, down and up, then random targets ------------------------ */

static int walk_to(unsigned cpu, int target)
{
	int err = cpuhp_set_target(cpu, target);

	if (err)
		return selftest_fail("cpu %u: %s -> %s failed: %d", cpu,
				     cpuhp_name(cpuhp_state(cpu)), cpuhp_name(target), err);
	return selftest_cpuhp_check_cpu(cpu, target, "after a walk");
}

static int test_cpuhp_walk(void)
{
	unsigned cpus[NR_CPUS], n = selftest_cpuhp_present(cpus), cpu, steps = 0;
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
	if (selftest_cpuhp_check_cpu(cpu, from, "after a failed transition"))
		return -1;
	return 0;
}

static int test_cpuhp_fail(void)
{
	unsigned cpus[NR_CPUS], n = selftest_cpuhp_present(cpus), cpu, up_fails = 0, down_fails = 0;
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
	unsigned cpus[NR_CPUS], n = selftest_cpuhp_present(cpus), cpu, online = 0;
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
		if (selftest_cpuhp_check_cpu(cpus[i], target, "after a bring-up") ||
		    check_usable(cpus[i]))
			return -1;
	return 0;
}

static int test_cpuhp_parallel(void)
{
	unsigned cpus[NR_CPUS], n = selftest_cpuhp_present(cpus);
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
	unsigned cpus[NR_CPUS], n = selftest_cpuhp_present(cpus), cycles, i, cpu;
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
