// SPDX-License-Identifier: MIT
/*
 * guest/kernel/cpuhp_engine.c: the CPU hotplug state engine walking the guest's own table
 * (guest/kernel/cpuhp_table.c), with a fake arch layer that plays the arriving CPU and its
 * hotplug thread synchronously. Every callback (a fake, tests/unit/cpuhp_fakes.c) is logged
 * as (cpu, state, up); the tests check, for every pair of resting states and every injected
 * failure point, the exact callback sequence, the final state, and that every startup is
 * matched by its teardown in reverse order (the log is a well-nested stack).
 */
#include "unit.h"

#include "kernel/cpuhp.h"
#include "tests/unit/cpuhp_fakes.h"

#define NCPU	4
#define LOG_MAX 4096

struct rec {
	unsigned cpu;
	int state;
	bool up;
	bool failed; /* the callback returned an error: nothing to undo */
};

static struct rec log_[LOG_MAX];
static unsigned nlog;
/*
 * Whether the callbacks now run as the arriving or dying CPU (its STARTING section and its
 * hotplug thread), or on the control CPU. A STARTING callback run on the control CPU acts
 * on that CPU: tick:starting's teardown stops its clock event, arch:starting's masks its
 * LAPIC timer, sched:starting's takes its run queue offline.
 */
static bool as_ap;
/* fake_wait_up: the arriving CPU stops after this STARTING state and times out (-1: no). */
static int stall_after = -1;
static int real_fail_state = -1; /* a callback that really fails (not injected) */
static uint64_t fake_clock;
static unsigned kicks, waits, serial_depth, serial_max;
/* Interleaving check for parallel bring-up: the log index of each kick. */
static unsigned kick_at[NCPU];

/* Every callback of the guest's table (tests/unit/cpuhp_fakes.c) lands here. */
int cpuhp_fake(unsigned int cpu, int state, bool up)
{
	assert_true(nlog < LOG_MAX);
	if (cpuhp_section_of(state) == CPUHP_SECTION_STARTING && !as_ap)
		fail_msg("cpu %u: STARTING state %d %s ran on the control CPU", cpu, state,
			 up ? "up" : "down");
	log_[nlog++] = (struct rec){ cpu, state, up, up && state == real_fail_state };
	return log_[nlog - 1].failed ? -ENOMEM : 0;
}

static uint64_t now_ns(void)
{
	return fake_clock += 10;
}

/* The fake arriving CPU: STARTING, then (if they passed) its thread's ONLINE walk. */
static int kicked[NCPU];

static int fake_kick(struct cpuhp_engine *e, unsigned cpu)
{
	(void)e;
	kicks++;
	kicked[cpu] = 1;
	kick_at[cpu] = nlog;
	return 0;
}

static int fake_wait_up(struct cpuhp_engine *e, unsigned cpu)
{
	int ret;

	waits++;
	assert_true(kicked[cpu]);
	kicked[cpu] = 0;
	as_ap = true;
	if (stall_after >= 0) {
		/*
		 * The CPU runs its STARTING steps up to stall_after, then stalls (a loaded host
		 * does not run its vCPU, or its hotplug thread, for the bring-up's 10 s): the
		 * control side's wait times out with the CPU alive in its atomic section.
		 */
		int s;

		e->cpus[cpu].state = CPUHP_BRINGUP_CPU;
		for (s = CPUHP_BRINGUP_CPU + 1; s <= stall_after; s++) {
			assert_int_equal(cpuhp_invoke(e, cpu, s, true), 0);
			e->cpus[cpu].state = s;
		}
		as_ap = false;
		return -ETIMEDOUT;
	}
	ret = cpuhp_ap_starting(e, cpu);
	if (ret) {
		as_ap = false;
		assert_int_equal(e->cpus[cpu].state, CPUHP_BRINGUP_CPU);
		return ret;
	}
	assert_int_equal(e->cpus[cpu].state, CPUHP_AP_ONLINE);
	ret = cpuhp_ap_walk_online(e, cpu);
	as_ap = false;
	return ret;
}

static int fake_ap_walk(struct cpuhp_engine *e, unsigned cpu)
{
	int ret;

	as_ap = true;
	ret = cpuhp_ap_walk_online(e, cpu);
	if (!ret && e->cpus[cpu].target < CPUHP_AP_ONLINE) {
		assert_int_equal(e->cpus[cpu].state, CPUHP_AP_ONLINE);
		cpuhp_ap_dying(e, cpu);
		assert_int_equal(e->cpus[cpu].state, CPUHP_AP_OFFLINE);
	}
	as_ap = false;
	return ret;
}

static int fake_ap_invoke(struct cpuhp_engine *e, unsigned cpu, int state, bool up)
{
	int ret;

	as_ap = true;
	ret = cpuhp_invoke(e, cpu, state, up);
	as_ap = false;
	return ret;
}

static void serial_lock(enum cpuhp_section s)
{
	(void)s;
	serial_depth++;
	if (serial_depth > serial_max)
		serial_max = serial_depth;
}

static void serial_unlock(enum cpuhp_section s)
{
	(void)s;
	serial_depth--;
}

static unsigned ntrace;
static void trace(unsigned cpu, int state, bool up, uint64_t ns, int ret)
{
	(void)cpu;
	(void)state;
	(void)up;
	(void)ret;
	assert_true(ns > 0);
	ntrace++;
}

static const struct cpuhp_ops ops = {
	.now_ns = now_ns,
	.kick = fake_kick,
	.wait_up = fake_wait_up,
	.ap_walk = fake_ap_walk,
	.ap_invoke = fake_ap_invoke,
	.serial_lock = serial_lock,
	.serial_unlock = serial_unlock,
	.trace = trace,
};

static struct cpuhp_engine eng;
static struct cpuhp_cpu cpus[NCPU];

static int setup(void **state)
{
	(void)state;
	cpuhp_engine_init(&eng, cpuhp_table, &ops, cpus, NCPU);
	nlog = 0;
	real_fail_state = -1;
	stall_after = -1;
	as_ap = false;
	kicks = waits = serial_depth = serial_max = ntrace = 0;
	memset(kicked, 0, sizeof(kicked));
	return 0;
}

static bool has_cb(int s, bool up)
{
	return up ? cpuhp_table[s].startup != NULL : cpuhp_table[s].teardown != NULL;
}

/* Expected log of a clean walk from `from` to `to` on cpu. */
static unsigned expect_walk(struct rec *out, unsigned n, unsigned cpu, int from, int to)
{
	int s;

	if (to > from) {
		for (s = from + 1; s <= to; s++)
			if (has_cb(s, true))
				out[n++] = (struct rec){ cpu, s, true };
	} else {
		for (s = from; s > to; s--)
			if (has_cb(s, false))
				out[n++] = (struct rec){ cpu, s, false };
	}
	return n;
}

static void assert_log(const struct rec *want, unsigned n)
{
	unsigned i;

	if (nlog != n) {
		for (i = 0; i < nlog; i++)
			print_message("  got %u: cpu %u state %d %s\n", i, log_[i].cpu,
				      log_[i].state, log_[i].up ? "up" : "down");
		fail_msg("log has %u callbacks, expected %u", nlog, n);
	}
	for (i = 0; i < n; i++)
		if (log_[i].cpu != want[i].cpu || log_[i].state != want[i].state ||
		    log_[i].up != want[i].up)
			fail_msg("callback %u: got cpu %u state %d %s, expected state %d %s", i,
				 log_[i].cpu, log_[i].state, log_[i].up ? "up" : "down",
				 want[i].state, want[i].up ? "up" : "down");
}

/* Every teardown undoes the most recent unmatched startup (of states with both). */
static void assert_nested(unsigned cpu, int base_state)
{
	int stack[CPUHP_NR_STATES * 4], sp = 0, s;
	unsigned i;

	for (s = 1; s <= base_state; s++)
		if (has_cb(s, true) && has_cb(s, false))
			stack[sp++] = s;
	for (i = 0; i < nlog; i++) {
		if (log_[i].cpu != cpu)
			continue;
		s = log_[i].state;
		if (!has_cb(s, true) || !has_cb(s, false) || log_[i].failed)
			continue;
		if (log_[i].up) {
			stack[sp++] = s;
		} else {
			assert_true(sp > 0);
			assert_int_equal(stack[sp - 1], s);
			sp--;
		}
	}
	/* What is left is exactly the states up to where the CPU now is. */
	for (s = 1, i = 0; s <= eng.cpus[cpu].state; s++)
		if (has_cb(s, true) && has_cb(s, false))
			assert_int_equal(stack[i++], s);
	assert_int_equal((int)i, sp);
}

static void test_names_and_targets(void **state)
{
	int s, n = 0;

	(void)state;
	assert_int_equal(cpuhp_state_by_name(&eng, "sched:active"), CPUHP_AP_SCHED_ACTIVE);
	assert_int_equal(cpuhp_state_by_name(&eng, "nope"), -1);
	assert_string_equal(cpuhp_state_name(&eng, CPUHP_ONLINE), "online");
	assert_null(cpuhp_state_name(&eng, CPUHP_NR_STATES));
	for (s = 0; s < CPUHP_NR_STATES; s++)
		n += cpuhp_valid_target(&eng, s);
	/* offline, 4 prepare, ap:online-idle, timers:online, watchdog:online, sched:active,
	 * online */
	assert_int_equal(n, 10);
	assert_false(cpuhp_valid_target(&eng, CPUHP_BRINGUP_CPU));
	assert_false(cpuhp_valid_target(&eng, CPUHP_AP_TICK_STARTING));
	assert_false(cpuhp_valid_target(&eng, CPUHP_BP_PREPARE_DYN)); /* free slot */
	assert_int_equal(cpuhp_engine_set_target(&eng, 1, CPUHP_AP_TICK_STARTING), -EINVAL);
	assert_int_equal(cpuhp_engine_set_target(&eng, NCPU, CPUHP_ONLINE), -EINVAL);
	assert_int_equal(cpuhp_engine_inject_fail(&eng, 1, CPUHP_AP_ONLINE), -EINVAL);
	assert_int_equal(cpuhp_engine_inject_fail(&eng, 1, CPUHP_OFFLINE), -EINVAL);
	assert_int_equal(cpuhp_engine_inject_fail(&eng, 1, CPUHP_BP_PREPARE_DYN), -EINVAL);
	assert_int_equal(cpuhp_engine_inject_fail(&eng, 1, CPUHP_BRINGUP_CPU), 0);
	assert_int_equal(nlog, 0);
}

/* Every (from, to) pair of resting states: exact sequence, final state, nesting. */
static void test_every_pair(void **state)
{
	int from, to;

	(void)state;
	for (from = 0; from < CPUHP_NR_STATES; from++) {
		if (!cpuhp_valid_target(&eng, from))
			continue;
		for (to = 0; to < CPUHP_NR_STATES; to++) {
			struct rec want[LOG_MAX];
			unsigned n;

			if (!cpuhp_valid_target(&eng, to))
				continue;
			setup(NULL);
			assert_int_equal(cpuhp_engine_set_target(&eng, 1, from), 0);
			assert_int_equal(eng.cpus[1].state, from);
			nlog = 0;
			kicks = 0;
			assert_int_equal(cpuhp_engine_set_target(&eng, 1, to), 0);
			assert_int_equal(eng.cpus[1].state, to);
			n = expect_walk(want, 0, 1, from, to);
			assert_log(want, n);
			assert_nested(1, from);
			assert_int_equal(eng.cpus[1].error, 0);
			assert_int_equal(eng.cpus[1].failed_state, -1);
			/* Crossing the kick means a kick and a wait; nobody else moved. */
			assert_int_equal(kicks,
					 from <= CPUHP_BRINGUP_CPU - 1 && to > CPUHP_BRINGUP_CPU);
			assert_int_equal(eng.cpus[0].state, CPUHP_OFFLINE);
			assert_int_equal(serial_depth, 0);
		}
	}
}

/* Every pair and every injected failure point on its path: rollback to the start. */
static void test_every_failure(void **state)
{
	int from, to, f;
	unsigned cases = 0, refused = 0;

	(void)state;
	for (from = 0; from < CPUHP_NR_STATES; from++) {
		if (!cpuhp_valid_target(&eng, from))
			continue;
		for (to = 0; to < CPUHP_NR_STATES; to++) {
			if (!cpuhp_valid_target(&eng, to) || to == from)
				continue;
			for (f = 1; f < CPUHP_ONLINE; f++) {
				struct rec want[LOG_MAX];
				bool upward = to > from, fires;
				unsigned n;
				int ret;

				if (upward ? !(f > from && f <= to) : !(f > to && f <= from))
					continue;
				setup(NULL);
				assert_int_equal(cpuhp_engine_set_target(&eng, 2, from), 0);
				if (cpuhp_engine_inject_fail(&eng, 2, f))
					continue; /* a marker: cannot fail */
				nlog = 0;
				ret = cpuhp_engine_set_target(&eng, 2, to);
				/* STARTING and kick tear-downs cannot fail: the injection waits. */
				fires = upward || (cpuhp_section_of(f) != CPUHP_SECTION_STARTING &&
						   f != CPUHP_BRINGUP_CPU);
				cases++;
				if (!fires) {
					refused++;
					assert_int_equal(ret, 0);
					assert_int_equal(eng.cpus[2].state, to);
					assert_int_equal(eng.cpus[2].fail, f);
					continue;
				}
				assert_int_equal(ret, -EIO);
				assert_int_equal(eng.cpus[2].state, from);
				assert_int_equal(eng.cpus[2].error, -EIO);
				assert_int_equal(eng.cpus[2].failed_state, f);
				assert_int_equal(eng.cpus[2].fail, -1);
				if (upward) {
					n = expect_walk(want, 0, 2, from, f - 1);
					n = expect_walk(want, n, 2, f - 1, from);
				} else {
					n = expect_walk(want, 0, 2, from, f);
					n = expect_walk(want, n, 2, f, from);
				}
				assert_log(want, n);
				assert_nested(2, from);
				/* The CPU is usable afterwards. */
				assert_int_equal(cpuhp_engine_set_target(&eng, 2, to), 0);
				assert_int_equal(eng.cpus[2].state, to);
			}
		}
	}
	assert_true(cases > 300);
	assert_true(refused > 0);
}

/* A callback that really fails (no injection) rolls back the same way. */
static void test_real_failure(void **state)
{
	struct rec want[64];
	unsigned n;

	(void)state;
	real_fail_state = CPUHP_AP_TIMERS_ONLINE;
	assert_int_equal(cpuhp_engine_set_target(&eng, 3, CPUHP_ONLINE), -ENOMEM);
	assert_int_equal(eng.cpus[3].state, CPUHP_OFFLINE);
	n = expect_walk(want, 0, 3, CPUHP_OFFLINE, CPUHP_AP_TIMERS_ONLINE);
	n = expect_walk(want, n, 3, CPUHP_AP_TIMERS_ONLINE - 1, CPUHP_OFFLINE);
	assert_log(want, n);
	assert_nested(3, CPUHP_OFFLINE);
	/* During the rollback, failures are ignored (nothing could undo them). */
	real_fail_state = -1;
	assert_int_equal(cpuhp_engine_set_target(&eng, 3, CPUHP_ONLINE), 0);
}

/*
 * A bring-up that times out while the CPU is alive inside its STARTING section (or done
 * with it, its hotplug thread not run yet): the rollback must not run that CPU's STARTING
 * teardowns here, on the control CPU (under churn on a loaded host CPU 0 then lost its
 * clock event: tick_dying_cpu() stopped CPU 0's TSC deadline behind its hrtimer base's
 * back, arch_cpu_dying() masked CPU 0's LAPIC timer). The CPU stays where it is, refused
 * like any CPU in its atomic section.
 */
static void test_timeout_in_starting(void **state)
{
	int at;

	(void)state;
	for (at = CPUHP_BRINGUP_CPU + 1; at <= CPUHP_AP_ONLINE; at++) {
		setup(NULL);
		stall_after = at;
		assert_int_equal(cpuhp_engine_set_target(&eng, 1, CPUHP_ONLINE), -ETIMEDOUT);
		assert_int_equal(eng.cpus[1].state, at);
		assert_int_equal(cpuhp_engine_set_target(&eng, 1, CPUHP_OFFLINE), -EBUSY);
	}
	/* The same in a parallel bring-up. */
	setup(NULL);
	stall_after = CPUHP_AP_ONLINE;
	assert_int_equal(cpuhp_engine_bringup(&eng, (unsigned[]){ 1, 2 }, 2, CPUHP_ONLINE, true),
			 0);
	assert_int_equal(eng.cpus[1].state, CPUHP_AP_ONLINE);
	assert_int_equal(eng.cpus[2].state, CPUHP_AP_ONLINE);
}

static void test_parallel_bringup(void **state)
{
	unsigned list[] = { 1, 2, 3 }, i;
	int s;

	(void)state;
	assert_int_equal(cpuhp_engine_inject_fail(&eng, 2, CPUHP_AP_TICK_STARTING), 0);
	assert_int_equal(cpuhp_engine_bringup(&eng, list, 3, CPUHP_ONLINE, true), 2);
	assert_int_equal(eng.cpus[1].state, CPUHP_ONLINE);
	assert_int_equal(eng.cpus[2].state, CPUHP_OFFLINE);
	assert_int_equal(eng.cpus[2].failed_state, CPUHP_AP_TICK_STARTING);
	assert_int_equal(eng.cpus[3].state, CPUHP_ONLINE);
	assert_int_equal(kicks, 3);
	/* Every CPU's PREPARE steps ran before the first STARTING step of any CPU. */
	for (i = 0; i < nlog && cpuhp_section_of(log_[i].state) == CPUHP_SECTION_PREPARE; i++)
		;
	for (s = 0; i < nlog; i++)
		if (log_[i].up && log_[i].state < CPUHP_BRINGUP_CPU)
			s++;
	assert_int_equal(s, 0);
	/* All three kicks happened before any CPU was waited for (no STARTING step logged
	 * before the last kick). */
	for (i = 0; i < kick_at[3]; i++)
		assert_true(cpuhp_section_of(log_[i].state) == CPUHP_SECTION_PREPARE);
	assert_int_equal(serial_depth, 0);
	assert_true(serial_max >= 1);
	/* Serial mode: one CPU completely, then the next. */
	setup(NULL);
	assert_int_equal(cpuhp_engine_bringup(&eng, list, 3, CPUHP_ONLINE, false), 3);
	for (i = 1; i < nlog; i++)
		assert_true(log_[i].cpu >= log_[i - 1].cpu);
	/* Already-running CPUs are simply walked. */
	assert_int_equal(cpuhp_engine_set_target(&eng, 1, CPUHP_AP_ONLINE_IDLE), 0);
	assert_int_equal(cpuhp_engine_bringup(&eng, list, 3, CPUHP_ONLINE, true), 3);
	assert_int_equal(eng.cpus[1].state, CPUHP_ONLINE);
}

static int dyn_up_calls, dyn_down_calls, dyn_fail_on = -1;
static int dyn_up(unsigned cpu)
{
	dyn_up_calls++;
	return (int)cpu == dyn_fail_on ? -EIO : 0;
}
static int dyn_down(unsigned cpu)
{
	(void)cpu;
	dyn_down_calls++;
	return 0;
}

static void test_dynamic_states(void **state)
{
	static char names[16][16];
	int s, i;

	(void)state;
	assert_int_equal(cpuhp_engine_set_target(&eng, 1, CPUHP_ONLINE), 0);
	assert_int_equal(cpuhp_engine_set_target(&eng, 2, CPUHP_AP_ONLINE_IDLE), 0);
	s = cpuhp_engine_setup_state(&eng, CPUHP_SECTION_ONLINE, "work:online", dyn_up, dyn_down,
				     true);
	assert_int_equal(s, CPUHP_AP_ONLINE_DYN);
	assert_int_equal(dyn_up_calls, 1); /* cpu 1 only: cpu 2 is below the slot */
	assert_int_equal(cpuhp_engine_setup_state(&eng, CPUHP_SECTION_ONLINE, "work:online", dyn_up,
						  NULL, false),
			 -EINVAL);
	assert_int_equal(
	    cpuhp_engine_setup_state(&eng, CPUHP_SECTION_STARTING, "x", dyn_up, NULL, false),
	    -EINVAL);
	/* It now runs in transitions, and is a valid target. */
	assert_true(cpuhp_valid_target(&eng, s));
	assert_int_equal(cpuhp_engine_set_target(&eng, 2, CPUHP_ONLINE), 0);
	assert_int_equal(dyn_up_calls, 2);
	assert_int_equal(cpuhp_engine_set_target(&eng, 1, CPUHP_OFFLINE), 0);
	assert_int_equal(dyn_down_calls, 1);
	/* Failing on one CPU undoes it on the others and frees the slot. */
	dyn_fail_on = 2;
	dyn_up_calls = dyn_down_calls = 0;
	assert_int_equal(
	    cpuhp_engine_setup_state(&eng, CPUHP_SECTION_ONLINE, "bad", dyn_up, dyn_down, true),
	    -EIO);
	assert_int_equal(cpuhp_state_by_name(&eng, "bad"), -1);
	dyn_fail_on = -1;
	/* Removal runs teardowns where the state is up. */
	dyn_down_calls = 0;
	assert_int_equal(cpuhp_engine_remove_state(&eng, s, true), 0);
	assert_int_equal(dyn_down_calls, 1); /* cpu 2 */
	assert_int_equal(cpuhp_engine_remove_state(&eng, s, true), -EINVAL);
	assert_int_equal(cpuhp_engine_remove_state(&eng, CPUHP_AP_SCHED_ACTIVE, true), -EINVAL);
	/* Slots run out. */
	for (i = 0; i < CPUHP_AP_DYN_SLOTS; i++) {
		snprintf(names[i], sizeof(names[i]), "d%d", i);
		assert_true(cpuhp_engine_setup_state(&eng, CPUHP_SECTION_ONLINE, names[i], NULL,
						     NULL, false) >= 0);
	}
	assert_int_equal(
	    cpuhp_engine_setup_state(&eng, CPUHP_SECTION_ONLINE, "more", NULL, NULL, false),
	    -ENOSPC);
	s = cpuhp_engine_setup_state(&eng, CPUHP_SECTION_PREPARE, "bp:dyn", dyn_up, dyn_down, true);
	assert_int_equal(s, CPUHP_BP_PREPARE_DYN);
}

static void test_timings_and_trace(void **state)
{
	int s;

	(void)state;
	assert_int_equal(cpuhp_engine_set_target(&eng, 1, CPUHP_ONLINE), 0);
	for (s = 1; s < CPUHP_ONLINE; s++)
		if (has_cb(s, true))
			assert_true(eng.cpus[1].up_ns[s] > 0);
	assert_int_equal(cpuhp_engine_set_target(&eng, 1, CPUHP_OFFLINE), 0);
	assert_true(eng.cpus[1].down_ns[CPUHP_AP_SCHED_ACTIVE] > 0);
	assert_true(ntrace > 20);
}

UNIT_MAIN(NULL, NULL, cmocka_unit_test_setup(test_names_and_targets, setup),
	  cmocka_unit_test_setup(test_every_pair, setup),
	  cmocka_unit_test_setup(test_every_failure, setup),
	  cmocka_unit_test_setup(test_real_failure, setup),
	  cmocka_unit_test_setup(test_timeout_in_starting, setup),
	  cmocka_unit_test_setup(test_parallel_bringup, setup),
	  cmocka_unit_test_setup(test_dynamic_states, setup),
	  cmocka_unit_test_setup(test_timings_and_trace, setup))
