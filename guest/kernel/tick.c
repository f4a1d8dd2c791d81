// SPDX-License-Identifier: MIT
/*
 * The tick and time in jiffies: HZ from the command line, jiffies kept up with the clock,
 * each CPU's tick (an hrtimer on its clock event: round-robin slices, wheel expiry) and
 * tickless idle (the tick stops while nothing is due within it, restarts on the way out).
 * The timer bases it serves are timer.c's. Everything but tick_init() and jiffies_update()
 * runs on its own CPU with interrupts off.
 */
#include "kernel/timer.h"

#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/timer_internal.h"

CMDLINE_PARAM(hz, .name = "hz", .kind = CMDLINE_UINT, .min = 10, .max = 10000);

uint64_t jiffies;
unsigned HZ = 1000;
static uint64_t tick_ns = 1000000;

uint64_t ns_to_jiffies(uint64_t ns)
{
	return ns / tick_ns;
}

uint64_t jiffies_to_ns(uint64_t j)
{
	return j * tick_ns;
}

/* jiffies follows the clock; any CPU may advance it, nobody moves it back. */
uint64_t jiffies_update(void)
{
	uint64_t j = ns_to_jiffies(arch_now_ns()),
		 cur = __atomic_load_n(&jiffies, __ATOMIC_RELAXED);

	while (cur < j && !__atomic_compare_exchange_n(&jiffies, &cur, j, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
	return cur < j ? j : cur;
}

/* ---- the tick ------------------------------------------------------------------------------------ */

enum hrtimer_restart tick_hrtimer_fn(struct hrtimer *h)
{
	struct timer_base *b = this_base();
	uint64_t now;

	b->stats.ticks++;
	b->tick_stopped = false; /* an idle wake-up for the wheel restarts ticking */
	now = jiffies_update();
	sched_tick();
	if (timers_due(b, now))
		timers_raise_softirq(b);
	hrtimer_forward(h, arch_now_ns(), tick_ns);
	return HRTIMER_RESTART;
}

static void clock_event_irq(unsigned vector, void *arg)
{
	(void)vector;
	(void)arg;
	hrtimer_interrupt();
}

uint64_t tick_idle_delay_ns;

/*
 * Called on every pass of the idle loop, including the ones after an interrupt that woke the
 * CPU with nothing to run: the tick then stays stopped and is only re-aimed at the wheel's
 * next expiry, which that interrupt may have changed (Linux's tick_nohz_irq_exit()).
 * Restarting it on such a wake-up, as tick_idle_exit() does, programs a clock event for
 * the next jiffy boundary, at most a tick away: when the way back here takes longer than
 * that (a vCPU descheduled by its host, or CPL0 emulated at ~1.5 M instructions/s), that
 * interrupt is already latched when the tick is stopped again, wakes the CPU at once, and
 * the cycle repeats: an idle CPU woken about every tick. An idle CPU takes no more than a
 * few ticks and wake-ups a window, passes slow or not: selftest=timer_idle_quiet and
 * timer_idle_quiet_slow (test_timer.py) guard it.
 */
void tick_idle_enter(void)
{
	struct timer_base *b = this_base();
	uint64_t now, next_hr, next_wheel, next_j;

	if (!b->online)
		return;
	timer_fault_delay(&tick_idle_delay_ns); /* a slow pass, as a descheduled vCPU has */
	now = arch_now_ns();
	next_hr = hrtimer_next_expiry_except(&b->tick);
	next_j = READ_ONCE(b->wheel[0].next_expiry); /* deferrable timers do not wake us */
	next_wheel = next_j == WHEEL_NO_TIMER ? UINT64_MAX : jiffies_to_ns(next_j);
	if (timers_due(b, ns_to_jiffies(now)) ||
	    (next_hr < UINT64_MAX && next_hr - now <= tick_ns) ||
	    (next_wheel < UINT64_MAX && next_wheel <= now + tick_ns)) {
		tick_idle_exit(); /* something is due within a tick: keep (or start) ticking */
		return;
	}
	if (!b->tick_stopped) {
		b->tick_stopped = true;
		b->stats.idle_tick_stops++;
	}
	if (next_wheel < UINT64_MAX) {
		/* Wake for the wheel (a pass after a wake-up usually finds it aimed already). */
		if (!hrtimer_queued(&b->tick) || b->tick.node.expires != next_wheel)
			hrtimer_start(&b->tick, next_wheel, HRTIMER_ABS);
	} else if (hrtimer_queued(&b->tick)) {
		hrtimer_cancel(&b->tick); /* the clock event is left to other hrtimers */
	}
}

void tick_idle_exit(void)
{
	struct timer_base *b = this_base();
	uint64_t now;

	if (!b->tick_stopped)
		return;
	b->tick_stopped = false;
	now = jiffies_update();
	if (timers_due(b, now))
		timers_raise_softirq(b);
	hrtimer_start(&b->tick, jiffies_to_ns(now + 1), HRTIMER_ABS);
}

/* ---- boot and hotplug ---------------------------------------------------------------------------- */

void tick_init(void)
{
	HZ = (unsigned)cmdline_uint("hz", 1000);
	if (HZ < 10 || HZ > 10000) {
		pr_warn("hz=%u out of range 10..10000, using 1000\n", HZ);
		HZ = 1000;
	}
	tick_ns = 1000000000ull / HZ;
	jiffies = ns_to_jiffies(arch_now_ns());
	arch_set_irq_handler(VEC_LAPIC_TIMER, clock_event_irq, NULL);
}

int tick_starting_cpu(unsigned int cpu)
{
	struct timer_base *b = cpu_base(cpu); /* ours: the clock event is this CPU's */

	arch_timer_init_cpu();
	b->online = true;
	b->tick_stopped = false;
	hrtimer_start(&b->tick, jiffies_to_ns(jiffies_update() + 1), HRTIMER_ABS);
	return 0;
}

int tick_dying_cpu(unsigned int cpu)
{
	struct timer_base *b = cpu_base(cpu); /* ours: the clock event is this CPU's */

	b->online = false;
	hrtimer_cancel(&b->tick);
	arch_timer_stop();
	return 0;
}
