// SPDX-License-Identifier: MIT
/*
 * Timer self-tests across CPUs (names start with "timer"): a timer pending on another CPU
 * re-armed and cancelled from here, timer_delete_sync() waiting out a callback whose CPU goes
 * down or whose expiry is delayed, and a timer re-armed from its own running callback.
 */
#include "apps/selftest.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/cpuhp.h"
#include "kernel/hrtimer.h"
#include "kernel/mm.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "kernel/wait.h"

/* ---- timer_remote: operations on a timer pending on another CPU ------------------------------------ */

/* Sleep until *flag is set or `ms` pass. */
static void wait_flag(volatile int *flag, unsigned ms)
{
	uint64_t until = arch_now_ns() + (uint64_t)ms * 1000000;

	while (!*flag && arch_now_ns() < until)
		sleep_ns(1000000);
}

struct remote_t {
	struct timer_list t;
	volatile int fired;
	volatile unsigned fired_on;
};

static void remote_fn(struct timer_list *t)
{
	struct remote_t *r = container_of(t, struct remote_t, t);

	r->fired_on = smp_processor_id();
	r->fired = 1;
}

static int remote_arm(void *arg)
{
	struct remote_t *r = arg;

	timer_add(&r->t, jiffies + 10000); /* far away: we cancel it from elsewhere */
	return (int)smp_processor_id();
}

static int test_timer_remote(void)
{
	unsigned cpu = selftest_other_cpu(smp_processor_id());
	struct remote_t r;
	struct thread *t;
	int armed_on;

	if (cpu == smp_processor_id()) {
		selftest_report("skipped=needs 2 CPUs");
		return 0;
	}
	memset(&r, 0, sizeof(r));
	timer_setup(&r.t, remote_fn, 0);
	t = thread_run("timer-arm", remote_arm, &r, 30, (int)cpu);
	if (!t)
		return selftest_fail("thread_run failed");
	armed_on = thread_join(t);
	if (armed_on != (int)cpu || !timer_pending(&r.t))
		return selftest_fail("timer not pending on cpu %u", cpu);
	/* Re-arm from here: it stays on its CPU, now due soon. */
	if (!mod_timer(&r.t, jiffies + 5))
		return selftest_fail("mod_timer of a remote pending timer said idle");
	wait_flag(&r.fired, 10000); /* due in 5 jiffies; a loaded host: bounded against a hang */
	if (!r.fired || r.fired_on != cpu)
		return selftest_fail("re-armed remote timer fired=%d on cpu %u (armed on %u)",
				     r.fired, r.fired_on, cpu);
	/* And a remote cancel. */
	r.fired = 0;
	t = thread_run("timer-arm", remote_arm, &r, 30, (int)cpu);
	thread_join(t);
	if (!timer_delete(&r.t) || timer_pending(&r.t))
		return selftest_fail("remote timer_delete failed");
	selftest_report("cpu=%u", cpu);
	return 0;
}
SELFTEST("timer_remote", test_timer_remote);

/* ---- timer_delete_sync_down ------------------------------------------------------------------ */

/*
 * timer_delete_sync() must not return while the callback runs, even when the callback's CPU
 * goes down meanwhile: in the RT build, a timer thread whose CPU dies with a callback half
 * run must finish it, and a timer_delete_sync() whose request the closed gate refuses still
 * waits for it. The callback here holds on until released; its CPU is taken down beside
 * it, and a third thread deletes it: it must see the callback finished when its
 * delete_sync returns.
 */
struct down_sync {
	struct timer_list t;
	unsigned cpu;
	volatile int entered, release, finished, down_rc, down_returned, deleted, saw_finished;
};

static void down_sync_fn(struct timer_list *t)
{
	struct down_sync *d = container_of(t, struct down_sync, t);
	uint64_t until = arch_now_ns() + 5000000000ull; /* bound against a hang */

	d->entered = 1;
	while (!d->release && arch_now_ns() < until)
		arch_cpu_relax();
	d->finished = 1;
}

static int down_sync_down(void *arg)
{
	struct down_sync *d = arg;

	d->down_rc = cpu_down(d->cpu);
	d->down_returned = 1;
	return 0;
}

static int down_sync_delete(void *arg)
{
	struct down_sync *d = arg;

	timer_delete_sync(&d->t);
	d->saw_finished = d->finished;
	d->deleted = 1;
	return 0;
}

static int test_timer_delete_sync_down(void)
{
	unsigned me = smp_processor_id(), cpu = selftest_other_cpu(me);
	struct thread *down, *del;
	struct down_sync d;

	if (cpu == me || cpu == 0) {
		selftest_report("skipped=needs 2 CPUs");
		return 0;
	}
	memset(&d, 0, sizeof(d));
	d.cpu = cpu;
	timer_setup(&d.t, down_sync_fn, TIMER_PINNED);
	if (timer_add_on(&d.t, jiffies + 1, cpu))
		return selftest_fail("timer_add_on cpu %u failed", cpu);
	wait_flag(&d.entered, 10000);
	if (!d.entered)
		return selftest_fail("callback never ran on cpu %u", cpu);
	down = thread_run("sync-down", down_sync_down, &d, 40, (int)me);
	if (!down)
		return selftest_fail("thread_run failed");
	/* Give the teardown time to reach the timers (it must wait for the callback there). */
	wait_flag(&d.down_returned, 300);
	del = thread_run("sync-delete", down_sync_delete, &d, 30, (int)me);
	if (!del)
		return selftest_fail("thread_run failed");
	wait_flag(&d.deleted, 300);
	d.release = 1;
	thread_join(del);
	thread_join(down);
	if (d.down_rc == 0)
		cpu_up(cpu);
	if (!d.finished)
		return selftest_fail("callback did not finish");
	if (!d.saw_finished)
		return selftest_fail("timer_delete_sync() returned while the callback still ran on "
				     "cpu %u (going down)",
				     cpu);
	selftest_report("cpu=%u down_rc=%d", cpu, d.down_rc);
	return 0;
}
SELFTEST("timer_delete_sync_down", test_timer_delete_sync_down);

/* ---- timer_delete_sync_expiry ------------------------------------------------------------------ */

/*
 * timer_delete_sync() must not return before a callback that has begun to run: that is, once
 * the timer has left its CPU's wheel (it is no longer pending) its callback counts as running.
 * A remote timer_delete_sync() reads both without the owner's lock: were the timer off the
 * expired list before it is marked running, one in between would see neither and return, its
 * caller re-arm the timer with a later expiry, and the old callback run against the new one.
 * The window is a few instructions; timer_expiry_delay_ns holds the timer in it here.
 */
struct expiry_sync {
	struct timer_list t;
	volatile int finished;
};

static void expiry_sync_fn(struct timer_list *t)
{
	struct expiry_sync *e = container_of(t, struct expiry_sync, t);

	e->finished = 1;
}

static int test_timer_delete_sync_expiry(void)
{
	unsigned me = smp_processor_id(), cpu = selftest_other_cpu(me);
	struct expiry_sync e;
	uint64_t until;
	int rounds, early = 0;

	if (cpu == me) {
		selftest_report("skipped=needs 2 CPUs");
		return 0;
	}
	for (rounds = 0; rounds < 3; rounds++) {
		memset(&e, 0, sizeof(e));
		timer_setup(&e.t, expiry_sync_fn, TIMER_PINNED);
		WRITE_ONCE(timer_expiry_delay_ns, 20000000ull); /* 20 ms */
		if (timer_add_on(&e.t, jiffies + 1, cpu)) {
			WRITE_ONCE(timer_expiry_delay_ns, 0);
			return selftest_fail("timer_add_on cpu %u failed", cpu);
		}
		until = arch_now_ns() + 10000000000ull; /* bound against a hang */
		while (timer_pending(&e.t) && arch_now_ns() < until)
			arch_cpu_relax();
		if (timer_pending(&e.t)) {
			WRITE_ONCE(timer_expiry_delay_ns, 0);
			timer_delete_sync(&e.t);
			return selftest_fail("the timer on cpu %u never expired", cpu);
		}
		/* Off the wheel: its callback is on its way and must be waited for. */
		timer_delete_sync(&e.t);
		if (!e.finished)
			early++;
		WRITE_ONCE(timer_expiry_delay_ns, 0);
		wait_flag(&e.finished, 10000); /* e is on our stack */
		if (!e.finished)
			return selftest_fail("the callback on cpu %u never ran", cpu);
	}
	if (early)
		return selftest_fail("timer_delete_sync() returned before the callback had run, "
				     "%d of %d times (the timer had left cpu %u's wheel)",
				     early, rounds, cpu);
	selftest_report("cpu=%u rounds=%d", cpu, rounds);
	return 0;
}
SELFTEST("timer_delete_sync_expiry", test_timer_delete_sync_expiry);

/* ---- timer_rearmed_while_running ------------------------------------------------------------ */

/*
 * A timer re-armed by another CPU while its callback runs on CPU a lands on that other CPU's
 * wheel. Its callback must still never run on two CPUs at once, and timer_delete_sync() from a
 * third CPU must wait for the callback on a, not only look at the CPU the timer now belongs
 * to (Linux keeps such a timer on the running base for both reasons).
 */
#define REARM_HOLD_NS 300000000ull

struct rearm {
	struct timer_list t;
	volatile int started, hold, finished, fires;
	int inside, max_inside;
	uint64_t expires; /* for the helper threads */
	volatile int sync_saw_finished;
};

static void rearm_fn(struct timer_list *t)
{
	struct rearm *r = container_of(t, struct rearm, t);
	int in = __atomic_add_fetch(&r->inside, 1, __ATOMIC_SEQ_CST);

	if (in > r->max_inside)
		r->max_inside = in;
	if (r->hold) {
		uint64_t until = arch_now_ns() + REARM_HOLD_NS;

		r->hold = 0;
		r->started = 1;
		while (arch_now_ns() < until)
			arch_cpu_relax();
		r->finished = 1;
	}
	__atomic_sub_fetch(&r->inside, 1, __ATOMIC_SEQ_CST);
	r->fires++;
}

static int rearm_mod(void *arg)
{
	struct rearm *r = arg;

	mod_timer(&r->t, r->expires);
	return 0;
}

static int rearm_sync(void *arg)
{
	struct rearm *r = arg;

	timer_delete_sync(&r->t);
	r->sync_saw_finished = r->finished;
	return 0;
}

/* Run fn(r) in a thread on `cpu` and wait for it. */
static int rearm_run_on(unsigned cpu, int (*fn)(void *), struct rearm *r)
{
	struct thread *th = thread_run("rearm", fn, r, 60, (int)cpu);

	if (!th)
		return -1;
	thread_join(th);
	return 0;
}

/* Arm r on `a` and wait until its callback holds there. */
static int rearm_start(struct rearm *r, unsigned a)
{
	memset(r, 0, sizeof(*r));
	timer_setup(&r->t, rearm_fn, 0);
	r->hold = 1;
	if (timer_add_on(&r->t, jiffies + 1, a))
		return selftest_fail("timer_add_on cpu %u failed", a);
	wait_flag(&r->started, 10000);
	if (!r->started)
		return selftest_fail("callback never ran on cpu %u", a);
	return 0;
}

static int test_timer_rearmed_while_running(void)
{
	unsigned me = smp_processor_id(), a = me, b = me, cpu;
	struct rearm r;
	uint64_t until;
	int ret;

	for_each_cpu(cpu, &cpu_online_mask)
		if (cpu != me && a == me)
			a = cpu;
		else if (cpu != me && cpu != a && b == me)
			b = cpu;
	if (b == me) {
		selftest_report("skipped=needs 3 CPUs");
		return 0;
	}
	/* Re-armed on b to expire at once: b must wait for a's callback, not run beside it. */
	if ((ret = rearm_start(&r, a)))
		return ret;
	r.expires = jiffies + 1;
	if (rearm_run_on(b, rearm_mod, &r))
		return selftest_fail("thread_run failed");
	until = arch_now_ns() + 10000000000ull; /* bound against a hang */
	while (r.fires < 2 && arch_now_ns() < until)
		sleep_ns(1000000);
	timer_delete_sync(&r.t);
	if (r.fires < 2)
		return selftest_fail("the timer re-armed on cpu %u never fired", b);
	if (r.max_inside > 1)
		return selftest_fail("callback ran on cpus %u and %u at once", a, b);
	/* Re-armed on b for later, deleted from here: the delete waits for a's callback. */
	if ((ret = rearm_start(&r, a)))
		return ret;
	r.expires = jiffies + 100000;
	if (rearm_run_on(b, rearm_mod, &r) || rearm_run_on(me, rearm_sync, &r))
		return selftest_fail("thread_run failed");
	wait_flag(&r.finished, 10000);
	if (!r.sync_saw_finished)
		return selftest_fail("timer_delete_sync() returned while the callback still ran on "
				     "cpu %u (the timer re-armed on cpu %u)",
				     a, b);
	if (timer_pending(&r.t))
		return selftest_fail("timer still pending after timer_delete_sync()");
	selftest_report("cpus=%u,%u,%u", a, b, me);
	return 0;
}
SELFTEST("timer_rearmed_while_running", test_timer_rearmed_while_running);
