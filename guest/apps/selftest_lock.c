// SPDX-License-Identifier: MIT
/*
 * Lock self-tests (names start with "lock"): local_lock semantics of the build (mainline
 * or RT), a low-priority local_lock holder against a high-priority thread (preemption, and
 * priority inheritance in the RT build), the lock validator catching an inversion; and
 * sched_bench, what a context switch, a cross-CPU wake-up and each lock cost in cycles.
 */
#include "apps/selftest.h"
#include "arch.h"
#include "kernel/bug.h"
#include "kernel/cpu.h"
#include "kernel/local_lock.h"
#include "kernel/lockdep.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/spinlock.h"
#include "kernel/string.h"
#include "kernel/wait.h"

#ifdef CONFIG_LOCKDEP
#define LOCKDEP_ENABLED 1
#else
#define LOCKDEP_ENABLED 0
#endif

/* ---- lock_local: the local_lock semantics of this build ---------------------------------------- */

struct pcpu_counter {
	local_lock_t lock;
	uint64_t count;
};

static struct pcpu_counter counters[NR_CPUS];

static void counters_init(void)
{
	static bool done;
	unsigned i;

	if (done)
		return;
	for (i = 0; i < NR_CPUS; i++)
		local_lock_init(&counters[i].lock, "selftest.counter");
	done = true;
}

#define THIS_COUNTER (&counters[smp_processor_id()])

static int test_lock_local(void)
{
	unsigned long flags;
	bool irqs, nested;
	int pc;

	counters_init();
	local_lock(&THIS_COUNTER->lock);
	pc = preempt_count();
	nested = local_trylock(&THIS_COUNTER->lock);
	THIS_COUNTER->count++;
	local_unlock(&THIS_COUNTER->lock);
	if (nested)
		return selftest_fail("local_trylock succeeded on a held lock");
	local_lock_irqsave(&THIS_COUNTER->lock, flags);
	irqs = arch_irqs_enabled();
	local_unlock_irqrestore(&THIS_COUNTER->lock, flags);
#ifdef CONFIG_PREEMPT_RT
	if (pc != 0)
		return selftest_fail("RT local_lock disabled preemption (count %#x)", pc);
	if (!irqs)
		return selftest_fail("RT local_lock_irqsave disabled interrupts");
	if (current_thread()->migrate_disabled)
		return selftest_fail("migration still disabled after unlock");
#else
	if (pc != 1)
		return selftest_fail("local_lock left preempt count %#x, expected 1", pc);
	if (irqs)
		return selftest_fail("local_lock_irqsave left interrupts on");
#endif
	if (!local_trylock(&THIS_COUNTER->lock))
		return selftest_fail("local_trylock failed on a free lock");
	local_unlock(&THIS_COUNTER->lock);
	if (preempt_count() != 0)
		return selftest_fail("preempt count %#x after the locks", preempt_count());
	selftest_report("build=%s", IS_ENABLED_RT ? "rt" : "mainline");
	return 0;
}
SELFTEST("lock_local", test_lock_local);

/* ---- lock_preempt: a low-priority local_lock holder and a high-priority thread -------------- */

struct lp_test {
	struct thread *high;
	volatile int holding; /* the low thread holds the local lock */
	volatile int high_ran;
	volatile int high_saw_holding;
	uint64_t t_wake, t_run;
	int need_lock; /* the high thread takes the same lock (priority inheritance) */
	volatile int low_boosted_prio;
};

static void lp_wake(void *arg)
{
	struct lp_test *lp = arg;

	lp->t_wake = arch_tsc();
	thread_wake(lp->high);
}

static int lp_high(void *arg)
{
	struct lp_test *lp = arg;

	thread_prepare_sleep();
	thread_sleep();
	lp->t_run = arch_tsc();
	lp->high_saw_holding = lp->holding;
	if (lp->need_lock) {
		local_lock(&THIS_COUNTER->lock);
		THIS_COUNTER->count++;
		local_unlock(&THIS_COUNTER->lock);
	}
	lp->high_ran = 1;
	return 0;
}

static int lp_low(void *arg)
{
	struct lp_test *lp = arg;
	uint64_t end;

	local_lock(&THIS_COUNTER->lock);
	lp->holding = 1;
	selftest_irq_raise(); /* wakes the high thread on this CPU */
	/* Hold the lock until the high thread ran or boosted us; 5 s bounds it on a host so
	 * overloaded that the wake-up interrupt is late (it never takes that long unloaded). */
	end = arch_now_ns() + 5000000000ull;
	while (!lp->high_ran && arch_now_ns() < end) {
		if (lp->need_lock && current_thread()->rq.prio > lp->low_boosted_prio)
			lp->low_boosted_prio = current_thread()->rq.prio;
		if (lp->low_boosted_prio >= 90)
			break; /* boosted by the waiting high thread: let it have the lock */
		arch_cpu_relax();
	}
	lp->holding = 0;
	local_unlock(&THIS_COUNTER->lock);
	return 0;
}

static int lock_preempt(int need_lock)
{
	unsigned cpu = selftest_other_cpu(0);
	struct lp_test lp;
	struct thread *low;

	counters_init();
	memset(&lp, 0, sizeof(lp));
	lp.need_lock = need_lock;
	selftest_irq_set(lp_wake, &lp);
	lp.high = thread_run("lp-high", lp_high, &lp, 90, (int)cpu);
	if (!lp.high)
		return selftest_fail("thread_run failed");
	while (lp.high->state != THREAD_BLOCKED)
		thread_yield();
	low = thread_run("lp-low", lp_low, &lp, 10, (int)cpu);
	if (!low)
		return selftest_fail("thread_run failed");
	thread_join(low);
	thread_join(lp.high);
	selftest_irq_set(NULL, NULL);
	if (!lp.high_ran)
		return selftest_fail("high-priority thread never ran");
	selftest_report("cpu=%u high_ran_while_low_held_lock=%d wake_to_run_cycles=%lu "
			"holder_boosted_to=%d",
			cpu, lp.high_saw_holding, (unsigned long)(lp.t_run - lp.t_wake),
			lp.low_boosted_prio);
#ifdef CONFIG_PREEMPT_RT
	if (!need_lock && !lp.high_saw_holding)
		return selftest_fail("RT: the high thread waited for the low thread's local_lock");
	if (need_lock && lp.low_boosted_prio < 90)
		return selftest_fail("RT: the lock holder was not boosted (prio %d)",
				     lp.low_boosted_prio);
#else
	if (lp.high_saw_holding)
		return selftest_fail("mainline: a local_lock holder was preempted");
#endif
	return 0;
}

SELFTEST_ARG("lock_preempt", lock_preempt, 0);
SELFTEST_ARG("lock_pi", lock_preempt, 1);

#ifdef CONFIG_LOCKDEP
/* ---- lock_inversion: the validator reports A-then-B against B-then-A -------------------------- */

static int test_lock_inversion(void)
{
	static struct spinlock a = SPINLOCK_INIT("selftest.A"), b = SPINLOCK_INIT("selftest.B");
	struct lockdep_stats before, after;

	lockdep_get_stats(&before);
	spin_lock(&a);
	spin_lock(&b);
	spin_unlock(&b);
	spin_unlock(&a);
	lockdep_get_stats(&after);
	if (after.inversions != before.inversions)
		return selftest_fail("a consistent order was reported as an inversion");
	bug_expect(true);
	spin_lock(&b);
	spin_lock(&a); /* the inversion, on purpose */
	spin_unlock(&a);
	spin_unlock(&b);
	bug_expect(false);
	lockdep_get_stats(&after);
	if (after.inversions != before.inversions + 1)
		return selftest_fail("inversion not reported (%lu -> %lu)",
				     (unsigned long)before.inversions,
				     (unsigned long)after.inversions);
	selftest_report("inversions=%lu", (unsigned long)(after.inversions - before.inversions));
	return 0;
}
SELFTEST("lock_inversion", test_lock_inversion);
#endif

/* ---- sched_bench: context switch, cross-CPU wake-up, local_lock costs (cycles) ----------------- */

struct pingpong {
	struct thread *a, *b;
	unsigned rounds;
	volatile int turn; /* 0: a's turn, 1: b's turn */
	uint64_t t0, t1;
};

static void pp_wait_turn(struct pingpong *pp, int me)
{
	thread_wait_until(__atomic_load_n(&pp->turn, __ATOMIC_ACQUIRE) == me);
}

static int pp_a(void *arg)
{
	struct pingpong *pp = arg;
	unsigned i;

	pp->t0 = arch_tsc();
	for (i = 0; i < pp->rounds; i++) {
		__atomic_store_n(&pp->turn, 1, __ATOMIC_RELEASE);
		thread_wake(pp->b);
		pp_wait_turn(pp, 0);
	}
	pp->t1 = arch_tsc();
	__atomic_store_n(&pp->turn, 1, __ATOMIC_RELEASE);
	thread_wake(pp->b);
	return 0;
}

static int pp_b(void *arg)
{
	struct pingpong *pp = arg;
	unsigned i;

	for (i = 0; i <= pp->rounds; i++) {
		pp_wait_turn(pp, 1);
		if (i == pp->rounds)
			break;
		__atomic_store_n(&pp->turn, 0, __ATOMIC_RELEASE);
		thread_wake(pp->a);
	}
	return 0;
}

/* Cycles per round trip of two threads waking each other on cpus ca and cb. */
static uint64_t pingpong(unsigned ca, unsigned cb, unsigned rounds)
{
	struct pingpong pp;

	memset(&pp, 0, sizeof(pp));
	pp.rounds = rounds;
	pp.b = thread_run("pp-b", pp_b, &pp, 50, (int)cb);
	pp.a = thread_create("pp-a", pp_a, &pp, 50, (int)ca);
	if (!pp.a || !pp.b)
		return 0;
	thread_start(pp.a);
	thread_join(pp.a);
	thread_join(pp.b);
	return (pp.t1 - pp.t0) / rounds;
}

static int test_sched_bench(void)
{
	const unsigned loops = 2000, rounds = 200;
	unsigned cpu = selftest_other_cpu(0), i;
	uint64_t t0, ctxsw, ipi, ll, llirq, sl;
	unsigned long flags;
	struct spinlock s = SPINLOCK_INIT("bench.spin");

	counters_init();
	/* Same CPU: one round trip is two context switches. */
	ctxsw = pingpong(cpu, cpu, rounds) / 2;
	ipi = cpu != 0 ? pingpong(0, cpu, rounds) : 0;
	t0 = arch_tsc();
	for (i = 0; i < loops; i++) {
		local_lock(&THIS_COUNTER->lock);
		THIS_COUNTER->count++;
		local_unlock(&THIS_COUNTER->lock);
	}
	ll = (arch_tsc() - t0) / loops;
	t0 = arch_tsc();
	for (i = 0; i < loops; i++) {
		local_lock_irqsave(&THIS_COUNTER->lock, flags);
		THIS_COUNTER->count++;
		local_unlock_irqrestore(&THIS_COUNTER->lock, flags);
	}
	llirq = (arch_tsc() - t0) / loops;
	t0 = arch_tsc();
	for (i = 0; i < loops; i++) {
		spin_lock(&s);
		THIS_COUNTER->count++;
		spin_unlock(&s);
	}
	sl = (arch_tsc() - t0) / loops;
	if (!ctxsw)
		return selftest_fail("ping-pong threads could not be created");
	selftest_report("build=%s lockdep=%d ctxsw_cycles=%lu ipi_wake_roundtrip_cycles=%lu "
			"local_lock_cycles=%lu local_lock_irqsave_cycles=%lu spin_lock_cycles=%lu "
			"tsc_khz=%u",
			IS_ENABLED_RT ? "rt" : "mainline", LOCKDEP_ENABLED, (unsigned long)ctxsw,
			(unsigned long)ipi, (unsigned long)ll, (unsigned long)llirq,
			(unsigned long)sl, arch_tsc_khz());
	return 0;
}
SELFTEST("sched_bench", test_sched_bench);
