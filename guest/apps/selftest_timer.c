// SPDX-License-Identifier: MIT
/*
 * Timekeeping self-tests (names start with "timer"): hrtimer sleep accuracy, wheel timers
 * of many distances firing in order and never early, an idle CPU staying quiet (tickless),
 * and a storm of mostly-cancelled timeouts. The tests across CPUs are in selftest_timer_cpus.c.
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

/* ---- timer_hrtimer_sleep -------------------------------------------------------------------- */

static int test_timer_hrtimer_sleep(void)
{
	static const uint64_t intervals[] = { 100000, 1000000, 5000000 };
	unsigned i, n;

	for (i = 0; i < ARRAY_SIZE(intervals); i++) {
		uint64_t min = UINT64_MAX, max = 0, sum = 0;

		for (n = 0; n < 10; n++) {
			uint64_t target = arch_now_ns() + intervals[i], late;

			sleep_until(target);
			late = arch_now_ns() - target;
			if ((int64_t)(arch_now_ns() - target) < 0)
				return selftest_fail("sleep_until(+%lu ns) woke %ld ns early",
						     (unsigned long)intervals[i],
						     (long)(target - arch_now_ns()));
			if (late < min)
				min = late;
			if (late > max)
				max = late;
			sum += late;
		}
		selftest_report("sleep_ns=%lu late_ns min=%lu avg=%lu max=%lu n=%u",
				(unsigned long)intervals[i], (unsigned long)min,
				(unsigned long)(sum / n), (unsigned long)max, n);
	}
	return 0;
}
SELFTEST("timer_hrtimer_sleep", test_timer_hrtimer_sleep);

/* ---- timer_wheel_order ------------------------------------------------------------------------ */

struct order_timer {
	struct timer_list t;
	uint64_t requested; /* jiffy asked for */
	uint64_t fired_jiffy;
	unsigned level; /* wheel level it was queued on */
	unsigned seq; /* order of firing */
	unsigned fired_before_armed; /* timers that had fired when this one was armed */
	int fired;
};

static unsigned order_seq;
static struct completion order_done;
static unsigned order_left;

static void order_fn(struct timer_list *t)
{
	struct order_timer *o = container_of(t, struct order_timer, t);

	o->fired_jiffy = jiffies;
	o->level = wheel_timer_level(&t->wt);
	o->seq = __atomic_fetch_add(&order_seq, 1, __ATOMIC_RELAXED);
	o->fired++;
	if (__atomic_sub_fetch(&order_left, 1, __ATOMIC_ACQ_REL) == 0)
		complete(&order_done);
}

static int test_timer_wheel_order(void)
{
	/* Distances in ticks across levels 0-2 (level 2 starts at 504 ticks). */
	static const unsigned dist[] = { 1,  2,	  3,   7,   15,	 40,  62,  63,
					 64, 100, 200, 300, 503, 504, 600, 700 };
	struct order_timer *o = kzalloc(sizeof(*o) * ARRAY_SIZE(dist));
	uint64_t max_late = 0;
	unsigned i, j, cpu, slow = 0;
	int ret = 0;

	if (!o)
		return selftest_fail("out of memory");
	completion_init(&order_done);
	order_seq = 0;
	order_left = ARRAY_SIZE(dist);
	/*
	 * Arm them in scrambled order on one CPU's wheel: the order is the wheel's promise, and
	 * each CPU runs its own wheel (the RT build's arming thread may migrate in between).
	 */
	cpu = smp_processor_id();
	for (i = 0; i < ARRAY_SIZE(dist); i++) {
		j = (i * 7) % ARRAY_SIZE(dist);
		timer_setup(&o[j].t, order_fn, 0);
		o[j].requested = jiffies + dist[j];
		if (timer_add_on(&o[j].t, o[j].requested, cpu))
			return selftest_fail("cpu %u went away", cpu);
		o[j].fired_before_armed = __atomic_load_n(&order_seq, __ATOMIC_ACQUIRE);
	}
	wait_for_completion(&order_done);
	for (i = 0; i < ARRAY_SIZE(dist); i++) {
		uint64_t late = o[i].fired_jiffy - o[i].requested;
		unsigned lvl = o[i].level;

		if (o[i].fired != 1)
			ret = selftest_fail("timer %u fired %d times", i, o[i].fired);
		else if (o[i].fired_jiffy < o[i].requested)
			ret = selftest_fail("timer +%u fired at %lu, before %lu", dist[i],
					    (unsigned long)o[i].fired_jiffy,
					    (unsigned long)o[i].requested);
		if (ret)
			break;
		/* Lateness beyond the level's granularity is the system's, not the wheel's
		 * (tests/unit/test_timer_wheel.c bounds the wheel's own): report it. */
		if (late > wheel_level_gran(lvl))
			slow++;
		if (late > max_late)
			max_late = late;
		/*
		 * In order, to the wheel's granularity: a timer due later than another by more
		 * than both their levels' granules runs after it, if both were queued before
		 * either ran (the arming thread may be preempted, or its vCPU stalled, between
		 * reading jiffies and arming: a timer armed after another fired promises nothing).
		 */
		for (j = 0; j < ARRAY_SIZE(dist); j++)
			if (o[j].requested > o[i].requested + wheel_level_gran(o[i].level) +
						 wheel_level_gran(o[j].level) &&
			    o[j].seq < o[i].seq && o[i].fired_before_armed <= o[j].seq)
				ret = selftest_fail("+%u (due %lu) ran before +%u (due %lu)",
						    dist[j], (unsigned long)o[j].requested, dist[i],
						    (unsigned long)o[i].requested);
		if (ret)
			break;
	}
	if (!ret)
		selftest_report("timers=%zu max_late_ticks=%lu beyond_granularity=%u hz=%u",
				ARRAY_SIZE(dist), (unsigned long)max_late, slow, HZ);
	kfree(o);
	return ret;
}
SELFTEST("timer_wheel_order", test_timer_wheel_order);

/* ---- timer_wheel_placement: timeouts land on the level their length calls for ------------------ */

static void placement_fn(struct timer_list *t)
{
	(void)t;
}

/*
 * The wheel's clock only advances when something expires. A 10-jiffy timeout armed 100
 * jiffies after the last expiry, beside a far timer that keeps the wheel busy, must still
 * go to level 0 (1-jiffy granularity), not to level 1 as "110 jiffies from the wheel's
 * clock" would put it (up to 8 jiffies late: 80% of the timeout).
 */
static int test_timer_wheel_placement(void)
{
	struct timer_list far, near;
	unsigned long flags;
	unsigned lvl_near;
	uint64_t j;

	timer_setup(&far, placement_fn, 0);
	timer_setup(&near, placement_fn, 0);
	/* Interrupts off: no expiry on this CPU can move the wheel's clock meanwhile. */
	flags = arch_irq_save();
	timer_add(&far, jiffies + 100000);
	arch_udelay(jiffies_to_ns(100) / 1000);
	j = ns_to_jiffies(arch_now_ns());
	timer_add(&near, j + 10);
	lvl_near = wheel_timer_level(&near.wt);
	arch_irq_restore(flags);
	timer_delete_sync(&near);
	timer_delete_sync(&far);
	if (lvl_near != 0)
		return selftest_fail("a 10-jiffy timeout went to level %u (granularity %lu)",
				     lvl_near, (unsigned long)wheel_level_gran(lvl_near));
	selftest_report("level=%u", lvl_near);
	return 0;
}
SELFTEST("timer_wheel_placement", test_timer_wheel_placement);

/* ---- timer_idle_quiet: an idle CPU takes (almost) no ticks and wake-ups ----------------------- */

static void idle_kick(void *arg)
{
	(void)arg;
}

/*
 * Watch the other CPU idle for 300 ms after one wake-up (an IPI), with each of its idle-loop
 * passes slowed by `delay_ns`. A ticking CPU would take HZ * 0.3 ticks; allow a tenth of
 * that in ticks and in wake-ups for what it had to do.
 */
static int idle_quiet(uint64_t delay_ns)
{
	struct timer_cpu_stats before, after;
	struct hrtimer_stats hb, ha;
	struct sched_stats sb, sa;
	struct wheel_stats ws;
	unsigned idle = selftest_other_cpu(smp_processor_id());
	const uint64_t window_ns = 300000000ull;
	uint64_t ticks, wakeups, allowed;

	if (idle == smp_processor_id()) {
		selftest_report("skipped=needs 2 CPUs");
		return 0;
	}
	WRITE_ONCE(tick_idle_delay_ns, delay_ns);
	timer_get_stats(idle, &ws, &before);
	hrtimer_get_stats(idle, &hb);
	sched_get_stats(idle, &sb);
	smp_call_on_cpu(idle, idle_kick, NULL);
	sleep_ns(window_ns);
	timer_get_stats(idle, &ws, &after);
	hrtimer_get_stats(idle, &ha);
	sched_get_stats(idle, &sa);
	WRITE_ONCE(tick_idle_delay_ns, 0);
	ticks = after.ticks - before.ticks;
	wakeups = sa.idle_entries - sb.idle_entries;
	allowed = (uint64_t)HZ * window_ns / 1000000000ull / 10;
	selftest_report("cpu=%u window_ms=%lu idle_delay_us=%lu ticks=%lu wakeups=%lu "
			"ticking_would_be=%lu tick_stops=%lu",
			idle, (unsigned long)(window_ns / 1000000),
			(unsigned long)(delay_ns / 1000), (unsigned long)ticks,
			(unsigned long)wakeups,
			(unsigned long)((uint64_t)HZ * window_ns / 1000000000ull),
			(unsigned long)(after.idle_tick_stops - before.idle_tick_stops));
	if (ticks <= allowed && wakeups <= allowed)
		return 0;
	/* What woke it: its interrupts, wake-ups and switches in the window, and who ran. */
	selftest_report(
	    "hrtimer_irqs=%lu expired=%lu switches=%lu wakeups_local=%lu "
	    "wakeups_remote=%lu resched_ipis=%lu softirqs=%lu callbacks=%lu remote_ops=%lu",
	    (unsigned long)(ha.interrupts - hb.interrupts),
	    (unsigned long)(ha.expired - hb.expired), (unsigned long)(sa.switches - sb.switches),
	    (unsigned long)(sa.wakeups_local - sb.wakeups_local),
	    (unsigned long)(sa.wakeups_remote - sb.wakeups_remote),
	    (unsigned long)(sa.resched_ipis - sb.resched_ipis),
	    (unsigned long)(after.softirqs - before.softirqs),
	    (unsigned long)(after.callbacks - before.callbacks),
	    (unsigned long)(after.remote_ops - before.remote_ops));
	sched_dump_threads();
	hrtimer_dump_bases();
	return selftest_fail("idle cpu %u took %lu ticks and %lu wake-ups in %lu ms", idle,
			     (unsigned long)ticks, (unsigned long)wakeups,
			     (unsigned long)(window_ns / 1000000));
}

static int test_timer_idle_quiet(void)
{
	return idle_quiet(0);
}
SELFTEST("timer_idle_quiet", test_timer_idle_quiet);

/*
 * An idle-loop pass longer than a tick (a descheduled or emulated vCPU) must not make the
 * idle CPU wake itself: a wake-up with nothing to run leaves the tick stopped, never a
 * clock event latched for the next jiffy that would wake it again (tick_idle_enter()).
 */
static int test_timer_idle_quiet_slow(void)
{
	return idle_quiet(jiffies_to_ns(3) / 2);
}
SELFTEST("timer_idle_quiet_slow", test_timer_idle_quiet_slow);

/* ---- timer_storm: most timeouts are cancelled or re-armed before they expire ---------------------- */

struct storm_timer {
	struct timer_list t;
	unsigned arms; /* times it was armed from idle */
	unsigned fires;
	unsigned cancels; /* timer_delete() that found it pending */
	int early;
};

static unsigned storm_fired;

static void storm_fn(struct timer_list *t)
{
	struct storm_timer *s = container_of(t, struct storm_timer, t);

	/* t->wt.expires is what this arming asked for (the wheel keeps it). */
	if (jiffies < t->wt.expires)
		s->early = 1;
	__atomic_fetch_add(&s->fires, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&storm_fired, 1, __ATOMIC_RELAXED);
}

#define STORM_HANG_NS 10000000000ull /* a timer this late was lost, not slow */

static int test_timer_storm(void)
{
	const unsigned n = 600;
	struct storm_timer *s = kzalloc(sizeof(*s) * n);
	unsigned i, cancelled = 0, rearmed = 0, round, fires = 0, arms = 0;
	uint32_t seed = 12345;
	uint64_t last = 0;
	struct wheel_stats ws;
	struct timer_cpu_stats bs;
	int ret = 0;

	if (!s)
		return selftest_fail("out of memory");
	storm_fired = 0;
	for (i = 0; i < n; i++) {
		timer_setup(&s[i].t, storm_fn, i % 5 == 0 ? TIMER_DEFERRABLE : 0);
		timer_add(&s[i].t, jiffies + 300 + selftest_rand(&seed) % 700);
		s[i].arms = 1;
	}
	/* Like I/O timeouts: each round, most pending timers are cancelled or pushed out. */
	for (round = 0; round < 3; round++) {
		for (i = 0; i < n; i++) {
			uint32_t r = selftest_rand(&seed) % 100;

			if (r < 62) {
				if (timer_delete(&s[i].t)) {
					s[i].cancels++;
					cancelled++;
				}
			} else if (r < 93) {
				/* Pending: re-armed in place; idle (fired or cancelled): armed anew. */
				if (mod_timer(&s[i].t, jiffies + 300 + selftest_rand(&seed) % 700))
					rearmed++;
				else
					s[i].arms++;
			}
		}
		thread_yield();
	}
	/*
	 * Wait until every timer that must fire has, each bounded by its bucket (a 300-1000
	 * jiffy timeout sits on level 1 or 2: up to 63 jiffies after its expiry) plus a hang
	 * bound for a loaded host; then stay busy for a few ticks so that deferrable timers,
	 * which never wake an idle CPU, meet a running tick.
	 */
	for (;;) {
		uint64_t bucket, now = ns_to_jiffies(arch_now_ns());

		last = 0;
		for (i = 0; i < n; i++)
			if (timer_pending(&s[i].t) && !(s[i].t.wt.flags & TIMER_DEFERRABLE)) {
				wheel_calc_index(now, s[i].t.wt.expires, &bucket);
				if (bucket > last)
					last = bucket;
			}
		if (!last || now > last + ns_to_jiffies(STORM_HANG_NS))
			break;
		sleep_ns(5000000);
	}
	{
		uint64_t until = jiffies + 5;

		while (jiffies < until)
			thread_yield();
	}
	for (i = 0; i < n; i++) {
		if (s[i].early)
			ret = selftest_fail("timer %u fired before its expiry", i);
		else if (timer_pending(&s[i].t))
			ret =
			    selftest_fail("timer %u still pending after its expiry (%lu < %lu)", i,
					  (unsigned long)jiffies, (unsigned long)s[i].t.wt.expires);
		else if (s[i].fires + s[i].cancels != s[i].arms)
			ret = selftest_fail("timer %u: %u armings ended in %u fires and %u cancels",
					    i, s[i].arms, s[i].fires, s[i].cancels);
		if (ret)
			break;
		fires += s[i].fires;
		arms += s[i].arms;
		timer_delete_sync(&s[i].t);
	}
	timer_get_stats(smp_processor_id(), &ws, &bs);
	if (!ret)
		selftest_report("timers=%u armings=%u cancelled=%u rearmed=%u expired=%u "
				"cancelled_or_rearmed_pct=%u cpu_softirqs=%lu",
				n, arms, cancelled, rearmed, fires,
				(cancelled + rearmed) * 100 / (cancelled + rearmed + fires),
				(unsigned long)bs.softirqs);
	kfree(s);
	return ret;
}
SELFTEST("timer_storm", test_timer_storm);
