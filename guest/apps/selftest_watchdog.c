// SPDX-License-Identifier: MIT
/*
 * watchdog: each detector of kernel/watchdog.c fires on a hang provoked on purpose, with the
 * bound lowered to 2 s for the test: a lost wake-up (hung task), an operation that never
 * ends, a CPU that does not schedule while a more urgent thread waits (soft lockup), and a
 * CPU with interrupts off (hard lockup, seen by its buddy). The reports say "expected BUG:".
 * Explicit only: it spins CPUs for seconds.
 */
#include "apps/selftest.h"
#include "arch.h"
#include "kernel/bug.h"
#include "kernel/cpu.h"
#include "kernel/cpuhp.h"
#include "kernel/hrtimer.h"
#include "kernel/sched.h"
#include "kernel/watchdog.h"

#define TEST_BOUND_NS 2000000000ull
#define PROVOKE_NS    (3 * TEST_BOUND_NS) /* bound, a period, and slack for a slow host */

static int lost_wakeup(void *arg)
{
	(void)arg;
	bug_expect(true);
	/* A deadline that has passed and nothing armed to wake us: the bug on purpose. */
	WRITE_ONCE(current_thread()->sleep_deadline_ns, arch_now_ns());
	thread_prepare_sleep();
	thread_sleep();
	WRITE_ONCE(current_thread()->sleep_deadline_ns, 0);
	bug_expect(false);
	return 0;
}

static int urgent(void *arg)
{
	(void)arg;
	return 0;
}

/* On its CPU: hold it without scheduling (preemption off) while a more urgent thread waits. */
static int soft_hog(void *arg)
{
	unsigned cpu = (unsigned)(uintptr_t)arg;
	struct thread *u;
	uint64_t end;

	u = thread_create("wd-urgent", urgent, NULL, 40, (int)cpu);
	if (!u)
		return -1;
	bug_expect(true);
	preempt_disable();
	thread_start(u); /* queued behind us, more urgent: we should give way, and do not */
	end = arch_now_ns() + PROVOKE_NS;
	while (arch_now_ns() < end)
		arch_cpu_relax();
	preempt_enable();
	bug_expect(false);
	return thread_join(u);
}

/* On its CPU: interrupts off, so its heartbeat stops. */
static int hard_hog(void *arg)
{
	unsigned long flags;
	uint64_t end;

	(void)arg;
	bug_expect(true);
	flags = arch_irq_save();
	end = arch_now_ns() + PROVOKE_NS;
	while (arch_now_ns() < end)
		arch_cpu_relax();
	arch_irq_restore(flags);
	bug_expect(false);
	return 0;
}

/*
 * A CPU that goes down and comes back faster than its heartbeat period never beats in any
 * one life: that is no lockup (its buddy once reported one, found by the soak).
 */
static int quick_cycles(unsigned cpu)
{
	uint64_t end = arch_now_ns() + PROVOKE_NS, before = bug_count();
	unsigned n = 0;

	while (arch_now_ns() < end) {
		if (cpu_down(cpu) || cpu_up(cpu))
			return selftest_fail("cpu %u: a quick offline/online cycle failed", cpu);
		n++;
		sleep_ns(100000000);
	}
	if (bug_count() != before)
		return selftest_fail("%u quick cycles of cpu %u were reported as a lockup", n, cpu);
	selftest_report("quick_cycles=%u", n);
	return 0;
}

/* Run fn on `cpu` (or anywhere) and wait; how many expected reports appeared meanwhile. */
static uint64_t provoke(const char *name, int (*fn)(void *), void *arg, int cpu)
{
	uint64_t before = bug_expected_count();
	struct thread *t = thread_run(name, fn, arg, 20, cpu);

	if (!t)
		return 0;
	if (fn == lost_wakeup) {
		sleep_ns(PROVOKE_NS);
		thread_wake(t);
	}
	thread_join(t);
	return bug_expected_count() - before;
}

static int test_watchdog(void)
{
	uint64_t saved = watchdog_bound_ns(), hung, stuck, soft = 0, hard = 0, before;
	struct watchdog_op op = { 0 };
	unsigned cpu, other = 0;
	int ret = 0;

	if (!saved)
		return selftest_fail("the watchdog is off (watchdog.bound_s=0)");
	for_each_cpu(cpu, &cpu_online_mask)
		if (cpu)
			other = cpu;
	watchdog_set_bound_ns(TEST_BOUND_NS);
	/* An operation begun after the checker read its clock is young, not 2^64 ns old. */
	bug_expect(true);
	watchdog_op_begin(&op, TEST_BOUND_NS / 4, "selftest watchdog's young operation", 0, 0);
	if (watchdog_check_ops(op.start_ns - 1000000, TEST_BOUND_NS))
		ret = selftest_fail("an operation begun 1 ms after the check was reported");
	watchdog_op_end(&op);
	bug_expect(false);
	hung = provoke("wd-lost-wakeup", lost_wakeup, NULL, THREAD_ANY_CPU);
	before = bug_expected_count();
	bug_expect(true);
	watchdog_op_begin(&op, TEST_BOUND_NS / 4, "selftest watchdog's operation", 0, 0);
	sleep_ns(PROVOKE_NS);
	watchdog_op_end(&op);
	bug_expect(false);
	stuck = bug_expected_count() - before;
	if (!ret && other && quick_cycles(other))
		ret = -1;
	if (other) {
		soft = provoke("wd-soft-hog", soft_hog, (void *)(uintptr_t)other, (int)other);
		hard = provoke("wd-hard-hog", hard_hog, NULL, (int)other);
	}
	watchdog_set_bound_ns(saved);
	if (ret)
		;
	else if (!hung)
		ret = selftest_fail("a thread blocked past its deadline was not reported");
	else if (!stuck)
		ret = selftest_fail("an operation past its bound was not reported");
	else if (!other)
		selftest_report("lockups=skipped (needs 2 CPUs)");
	else if (!soft)
		ret = selftest_fail("a CPU that did not schedule for %lu ms was not reported",
				    (unsigned long)(PROVOKE_NS / 1000000));
	else if (!hard)
		ret = selftest_fail("a CPU with interrupts off for %lu ms was not reported",
				    (unsigned long)(PROVOKE_NS / 1000000));
	selftest_report("hung=%lu stuck_op=%lu soft=%lu hard=%lu", (unsigned long)hung,
			(unsigned long)stuck, (unsigned long)soft, (unsigned long)hard);
	return ret;
}
SELFTEST_EXPLICIT("watchdog", test_watchdog);
