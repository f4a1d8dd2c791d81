// SPDX-License-Identifier: MIT
/*
 * selftest=cpuhp_hold: a thread that holds its CPU keeps it. A thread holding the highest
 * non-boot CPU (thread_hold_cpu()) makes cpu_down() of it fail with -EBUSY at sched:active,
 * its first teardown step, and leaves it fully online with the thread still there; once the
 * thread ended, the down succeeds (and the CPU comes back up). The same again through the
 * agent's hold workload (PLUGVM_AGENT_WORK_HOLD), stopped instead of ended.
 */
#include "apps/selftest.h"
#include "apps/selftest_cpuhp.h"
#include "apps/workload.h"
#include "kernel/compiler.h"
#include "kernel/cpu.h"
#include "kernel/cpuhp.h"
#include "kernel/errno.h"
#include "kernel/hrtimer.h"
#include "kernel/sched.h"

struct holder {
	unsigned cpu;
	int err; /* thread_hold_cpu()'s answer */
	volatile int held; /* 1 once it answered */
	volatile int stop;
	volatile int strayed; /* ran on another CPU while holding */
	volatile uint64_t wakeups;
};

static int holder_main(void *arg)
{
	struct holder *h = arg;

	h->err = thread_hold_cpu(h->cpu);
	__atomic_store_n(&h->held, 1, __ATOMIC_RELEASE);
	if (h->err)
		return 0;
	while (!READ_ONCE(h->stop)) {
		if (raw_smp_processor_id() != h->cpu)
			h->strayed = 1;
		h->wakeups++;
		sleep_ns(1000000);
	}
	return 0; /* exits holding: thread_exit() lets go */
}

/* cpu_down(cpu) is refused at sched:active and leaves it online. */
static int expect_refused(unsigned cpu, const char *who)
{
	int err = cpu_down(cpu), failed = -1;

	if (err != -EBUSY)
		return selftest_fail("%s: cpu_down(%u) = %d, expected -EBUSY", who, cpu, err);
	if (cpuhp_last_error(cpu, &failed) != -EBUSY || failed != CPUHP_AP_SCHED_ACTIVE)
		return selftest_fail("%s: refused at %s, expected sched:active", who,
				     failed >= 0 ? cpuhp_name(failed) : "none");
	return selftest_cpuhp_check_cpu(cpu, CPUHP_ONLINE, "after the refused down");
}

/* The holding is gone: down and up again. */
static int expect_down_up(unsigned cpu, const char *who)
{
	int err = cpu_down(cpu);

	if (err)
		return selftest_fail("%s: cpu_down(%u) after the hold = %d", who, cpu, err);
	err = cpu_up(cpu);
	if (err)
		return selftest_fail("%s: cpu_up(%u) = %d", who, cpu, err);
	return selftest_cpuhp_check_cpu(cpu, CPUHP_ONLINE, "back up");
}

static int hold_thread(unsigned cpu)
{
	struct holder h = { .cpu = cpu };
	struct thread *t = thread_run("holder", holder_main, &h, 80, THREAD_ANY_CPU);
	uint64_t before;
	int ret;

	if (!t)
		return selftest_fail("cannot create the holding thread");
	while (!__atomic_load_n(&h.held, __ATOMIC_ACQUIRE))
		sleep_ns(1000000);
	if (h.err) {
		WRITE_ONCE(h.stop, 1);
		thread_join(t);
		return selftest_fail("thread_hold_cpu(%u) = %d", cpu, h.err);
	}
	before = h.wakeups;
	ret = expect_refused(cpu, "thread");
	sleep_ns(5000000);
	if (!ret && (h.strayed || t->cpu != cpu || !t->holds_cpu || h.wakeups == before))
		ret = selftest_fail("the holder left cpu %u (on %u, strayed %d, wake-ups %lu)", cpu,
				    t->cpu, h.strayed, (unsigned long)(h.wakeups - before));
	WRITE_ONCE(h.stop, 1);
	thread_join(t);
	return ret ? ret : expect_down_up(cpu, "thread");
}

static int hold_workload(unsigned cpu)
{
	struct plugvm_agent_workload w = {
		.kind = PLUGVM_AGENT_WORK_HOLD, .threads = 2, .period_us = 1000, .cpu = cpu
	};
	struct plugvm_agent_workload_result r;
	uint32_t id;
	int err = workload_start(&w, &id), ret;

	if (err)
		return selftest_fail("hold workload on cpu %u: %d", cpu, err);
	ret = expect_refused(cpu, "workload");
	workload_stop(id, &r);
	if (!ret && !r.iterations)
		ret = selftest_fail("the hold workload never woke");
	return ret ? ret : expect_down_up(cpu, "workload");
}

static int test_cpuhp_hold(void)
{
	unsigned cpus[NR_CPUS], n = selftest_cpuhp_present(cpus), cpu;
	struct plugvm_agent_workload bad = { .kind = PLUGVM_AGENT_WORK_HOG,
					     .threads = 1,
					     .cpu = 1 };
	uint32_t id;
	int ret;

	if (!n) {
		selftest_report("cpus=1: nothing to hold");
		return 0;
	}
	cpu = cpus[n - 1];
	if (workload_start(&bad, &id) != -EINVAL)
		return selftest_fail("a hog workload with a cpu was accepted");
	ret = hold_thread(cpu);
	if (!ret)
		ret = hold_workload(cpu);
	if (!ret)
		selftest_report("cpu=%u refused=-EBUSY at=sched:active", cpu);
	return ret;
}
SELFTEST_EXPLICIT("cpuhp_hold", test_cpuhp_hold);
