// SPDX-License-Identifier: MIT
/*
 * Torture tests, after Linux's rcutorture/locktorture: many threads hammer one mechanism
 * with random operations while CPUs go down and come back underneath them, then every
 * operation is accounted for.
 *
 * timer_torture: threads sleep on hrtimers and on wheel timeouts, arm wheel timers and
 * hrtimers on random CPUs, cancel, re-arm and move between CPUs. Every timer fires exactly
 * once or is cancelled, never early, and at most `torture.late_ms=` (default 10000, the
 * watchdog's bound) after its due time (a wheel timer: after the bucket its timeout lands
 * in, timer_wheel.h); none is still pending past that bound when the run ends. The bound is
 * against lost expiries, not a latency target: on a loaded host whose vCPUs wait for a
 * physical CPU, timers run late by what the host takes (reported as late_max). How late
 * sleepers wake is measured, not bounded (higher priorities run first).
 * wake_torture: pairs of threads ping-pong wake-ups across CPUs through every sleeping
 * primitive (raw sleep, wait queue, completion, timed sleep, timed completion), move between
 * CPUs and take spurious wake-ups: no wake-up is lost, every round completes.
 *
 * The CPUs churn from a thread of the test (cpu_down/cpu_up of random CPUs), or, with
 * `torture.events=N`, from the host (ACPI hot-add/remove, e.g. QMP device_add/device_del):
 * the test then runs until the ACPI driver has handled N events. `torture.seconds=` (default
 * 2) bounds the run; `torture.seed=` picks the random sequence.
 */
#include "apps/selftest.h"
#include "arch.h"
#include "drivers/acpi_hotplug.h"
#include "kernel/bug.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/cpuhp.h"
#include "kernel/hrtimer.h"
#include "kernel/mm.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "kernel/wait.h"

CMDLINE_PARAM(seconds, .name = "torture.seconds", .kind = CMDLINE_UINT, .min = 1, .max = 86400);
CMDLINE_PARAM(events, .name = "torture.events", .kind = CMDLINE_UINT, .max = 100000000);
CMDLINE_PARAM(seed, .name = "torture.seed", .kind = CMDLINE_UINT, .max = 0xffffffffu);
CMDLINE_PARAM(late_ms, .name = "torture.late_ms", .kind = CMDLINE_UINT, .min = 1, .max = 3600000);

#define TORTURE_STUCK_NS    10000000000ull /* a round that takes this long lost a wake-up */
#define TORTURE_MAX_THREADS 16
#define TIMER_SLOTS	    4

/* ---- the run: duration, churn, randomness --------------------------------------------------- */

struct run {
	uint64_t end_ns; /* time bound */
	unsigned long events_want, events_start; /* host churn: ACPI events to wait for */
	uint32_t seed;
	volatile int stop;
	unsigned nr_pairs; /* wake_torture: fixed at its start (CPUs may come and go) */
	struct thread *churner;
	unsigned cycles; /* CPUs taken down and brought back by the churn thread */
	unsigned failed_churn;
};

static bool host_churn; /* CPUs come and go from the host: one may never come back */

static void run_init(struct run *r)
{
	memset(r, 0, sizeof(*r));
	r->end_ns = arch_now_ns() + cmdline_uint("torture.seconds", 2) * 1000000000ull;
	r->events_want = (unsigned long)cmdline_uint("torture.events", 0);
	r->events_start = acpi_hotplug_events();
	r->seed = (uint32_t)cmdline_uint("torture.seed", 1) | 1;
	host_churn = r->events_want != 0;
}

static bool run_over(const struct run *r)
{
	if (r->events_want)
		return acpi_hotplug_events() - r->events_start >= r->events_want ||
		       arch_now_ns() >= r->end_ns;
	return arch_now_ns() >= r->end_ns;
}

/*
 * Go on? Until the run is over and it did what it is for (`covered`: every kind of
 * operation at least once, and a CPU cycle if this run churns CPUs itself). On a host so
 * loaded that its seconds passed first, the run goes on until then, for TORTURE_STUCK_NS
 * at most (nothing at all in that long: the report says which kind never happened).
 */
static bool run_goes_on(const struct run *r, bool covered)
{
	if (!run_over(r))
		return true;
	if (r->churner && !__atomic_load_n(&r->cycles, __ATOMIC_RELAXED))
		covered = false;
	return !covered && arch_now_ns() < r->end_ns + TORTURE_STUCK_NS;
}

/* The CPU to move next: a random present CPU other than the boot CPU. */
static int churn_pick(uint32_t *s)
{
	unsigned cpus[NR_CPUS], n = 0, cpu;

	for_each_cpu(cpu, &cpu_present_mask)
		if (cpu)
			cpus[n++] = cpu;
	return n ? (int)cpus[selftest_rand(s) % n] : -1;
}

static int churn_main(void *arg)
{
	struct run *r = arg;
	uint32_t s = r->seed * 31u + 7u;

	while (!READ_ONCE(r->stop)) {
		int cpu = churn_pick(&s);
		int err;

		if (cpu < 0)
			break;
		err = cpumask_test(&cpu_online_mask, (unsigned)cpu) ? cpu_down((unsigned)cpu)
								    : cpu_up((unsigned)cpu);
		if (err)
			r->failed_churn++;
		else
			r->cycles++;
		sleep_ns(200000 + selftest_rand(&s) % 3000000);
	}
	return 0;
}

/* In-guest churn unless the host churns (torture.events=); false if nothing can churn. */
static void churn_start(struct run *r)
{
	if (r->events_want || cpumask_weight(&cpu_present_mask) < 2)
		return;
	r->churner = thread_run("torture-churn", churn_main, r, 60, 0);
}

/* Stop the churn and bring every present CPU back. */
static int churn_stop(struct run *r)
{
	unsigned cpu;

	WRITE_ONCE(r->stop, 1);
	if (r->churner)
		thread_join(r->churner);
	if (r->events_want)
		return 0;
	for_each_cpu(cpu, &cpu_present_mask)
		if (!cpumask_test(&cpu_online_mask, cpu) && cpu_up(cpu))
			return selftest_fail("cpu %u does not come back up", cpu);
	if (r->failed_churn)
		return selftest_fail("%u CPU transitions failed", r->failed_churn);
	return 0;
}

/* The test's own thread runs above its workers (20-25), so that it ends the run on time. */
#define TORTURE_CONTROL_PRIO 40

static unsigned nr_workers(void)
{
	unsigned n = 2 * cpumask_weight(&cpu_present_mask);

	return n < 4 ? 4 : n > TORTURE_MAX_THREADS ? TORTURE_MAX_THREADS : n;
}

/*
 * Where to move a thread next: a random online CPU, or THREAD_ANY_CPU. A thread pinned to a
 * CPU that goes down is parked until it comes back; with host churn that may be never, so
 * then only the boot CPU (which never leaves) or any CPU.
 */
static int random_cpu(uint32_t *s)
{
	unsigned cpus[NR_CPUS], n = 0, cpu;

	if (selftest_rand(s) % 3 == 0)
		return THREAD_ANY_CPU;
	if (host_churn)
		return 0;
	for_each_cpu(cpu, &cpu_online_mask)
		cpus[n++] = cpu;
	return n ? (int)cpus[selftest_rand(s) % n] : THREAD_ANY_CPU;
}

/* The first failure, from any context (callbacks included). */
static int failed;
static char fail_msg[160];

static void record_failure(const char *what, unsigned long a, unsigned long b, unsigned long c)
{
	if (!__atomic_exchange_n(&failed, 1, __ATOMIC_ACQ_REL))
		snprintf(fail_msg, sizeof(fail_msg), "%s (%lu, %lu, %lu)", what, a, b, c);
}

/* ---- timer_torture ------------------------------------------------------------------------- */

struct wslot { /* a wheel timer whose every arming is checked */
	struct timer_list t;
	uint64_t expires, bound; /* of the current arming; written only while it cannot run */
	unsigned armings, cancels;
	unsigned fires; /* callback: atomic */
};

struct hslot { /* an hrtimer, the same way */
	struct hrtimer t;
	uint64_t bound_ns;
	unsigned armings, cancels, fires;
};

struct tworker {
	struct thread *t;
	struct run *run;
	unsigned id;
	struct wslot w[TIMER_SLOTS];
	struct hslot h;
	unsigned sleeps, moves, remote_arms;
	uint64_t late_max_ns;
};

static uint64_t late_max_jiffies, late_bound_ns;

/* A thread sleeping on a wheel timeout (Linux's schedule_timeout()). */
struct wheel_sleep {
	struct timer_list t;
	struct thread *thread;
	int done;
};

static void wheel_sleep_fn(struct timer_list *t)
{
	struct wheel_sleep *ws = container_of(t, struct wheel_sleep, t);

	__atomic_store_n(&ws->done, 1, __ATOMIC_RELEASE);
	thread_wake(ws->thread);
}

/* Sleep until jiffy `expires` on a wheel timer of this CPU; returns the jiffy we woke at. */
static uint64_t wheel_sleep_until(uint64_t expires)
{
	struct wheel_sleep ws = { .thread = current_thread() };

	timer_setup(&ws.t, wheel_sleep_fn, 0);
	thread_prepare_sleep();
	timer_add(&ws.t, expires);
	while (!__atomic_load_n(&ws.done, __ATOMIC_ACQUIRE)) {
		thread_sleep();
		thread_prepare_sleep();
	}
	thread_cancel_sleep();
	timer_delete_sync(&ws.t); /* its callback may still be finishing elsewhere */
	return READ_ONCE(jiffies);
}

static void wslot_fn(struct timer_list *t)
{
	struct wslot *w = container_of(t, struct wslot, t);
	uint64_t now = READ_ONCE(jiffies), exp = READ_ONCE(w->expires), bound = READ_ONCE(w->bound);

	if (now < exp)
		record_failure("wheel timer fired early: jiffy, expires, bound", now, exp, bound);
	else if (now > bound)
		record_failure("wheel timer fired late: jiffy, expires, bound", now, exp, bound);
	if (now > exp && now - exp > __atomic_load_n(&late_max_jiffies, __ATOMIC_RELAXED))
		__atomic_store_n(&late_max_jiffies, now - exp, __ATOMIC_RELAXED);
	__atomic_add_fetch(&w->fires, 1, __ATOMIC_RELEASE);
}

static enum hrtimer_restart hslot_fn(struct hrtimer *t)
{
	struct hslot *h = container_of(t, struct hslot, t);
	uint64_t now = arch_now_ns();

	if (now < t->node.expires)
		record_failure("hrtimer fired early: ns, expires, -", now, t->node.expires, 0);
	else if (now > h->bound_ns)
		record_failure("hrtimer fired late: ns, expires, bound", now, t->node.expires,
			       h->bound_ns);
	__atomic_add_fetch(&h->fires, 1, __ATOMIC_RELEASE);
	return HRTIMER_NORESTART;
}

/* (Re-)arm a wheel slot: cancel what is pending (or wait out a running callback) first. */
static void wslot_arm(struct tworker *tw, struct wslot *w, uint32_t *s)
{
	uint64_t now_j, expires, bucket;
	int cpu;

	if (timer_delete_sync(&w->t))
		w->cancels++;
	now_j = jiffies;
	expires = now_j + 1 + selftest_rand(s) % 300;
	wheel_calc_index(now_j, expires, &bucket);
	w->expires = expires;
	w->bound = bucket + ns_to_jiffies(late_bound_ns);
	w->armings++;
	cpu = random_cpu(s);
	if (cpu >= 0 && timer_add_on(&w->t, expires, (unsigned)cpu) == 0) {
		tw->remote_arms++;
		return;
	}
	timer_add(&w->t, expires);
}

static void hslot_arm(struct hslot *h, uint32_t *s)
{
	uint64_t when = arch_now_ns() + 50000 + selftest_rand(s) % 3000000;

	if (hrtimer_cancel(&h->t))
		h->cancels++;
	h->bound_ns = when + late_bound_ns;
	h->armings++;
	hrtimer_start(&h->t, when, HRTIMER_ABS);
}

static int tworker_main(void *arg)
{
	struct tworker *tw = arg;
	uint32_t s = tw->run->seed + tw->id * 7919u;
	unsigned i;

	for (i = 0; i < TIMER_SLOTS; i++)
		timer_setup(&tw->w[i].t, wslot_fn, 0);
	hrtimer_init(&tw->h.t, hslot_fn);
	while (!READ_ONCE(tw->run->stop)) {
		uint32_t op = selftest_rand(&s) % 100;
		struct wslot *w = &tw->w[selftest_rand(&s) % TIMER_SLOTS];

		if (op < 20) {
			uint64_t deadline = arch_now_ns() + 20000 + selftest_rand(&s) % 3000000,
				 now;

			sleep_until(deadline);
			now = arch_now_ns();
			tw->sleeps++;
			if (now < deadline)
				record_failure("sleep_until woke early: ns, deadline, -", now,
					       deadline, 0);
			else if (now - deadline > tw->late_max_ns)
				tw->late_max_ns = now - deadline;
		} else if (op < 30) {
			uint64_t expires = jiffies + 1 + selftest_rand(&s) % 20, woke;

			woke = wheel_sleep_until(expires);
			tw->sleeps++;
			if (woke < expires)
				record_failure("wheel sleep woke early: jiffy, expires, -", woke,
					       expires, 0);
		} else if (op < 60) {
			wslot_arm(tw, w, &s);
		} else if (op < 75) {
			if (timer_delete(&w->t))
				w->cancels++;
		} else if (op < 85) {
			hslot_arm(&tw->h, &s);
		} else if (op < 90) {
			if (hrtimer_cancel(&tw->h.t))
				tw->h.cancels++;
		} else {
			thread_set_cpu(current_thread(), random_cpu(&s));
			tw->moves++;
		}
	}
	thread_set_cpu(current_thread(), THREAD_ANY_CPU);
	/*
	 * Quiesce: whatever is still pending is cancelled, running callbacks waited out. One
	 * pending past its bound was lost (it never fired and nothing would fire it).
	 */
	for (i = 0; i < TIMER_SLOTS; i++) {
		struct wslot *w = &tw->w[i];

		if (timer_pending(&w->t) && ns_to_jiffies(arch_now_ns()) > w->bound)
			record_failure("wheel timer still pending past its bound: jiffy, expires, "
				       "bound",
				       ns_to_jiffies(arch_now_ns()), w->expires, w->bound);
		if (timer_delete_sync(&w->t))
			w->cancels++;
	}
	if (hrtimer_queued(&tw->h.t) && arch_now_ns() > tw->h.bound_ns)
		record_failure("hrtimer still queued past its bound: ns, bound, -", arch_now_ns(),
			       tw->h.bound_ns, 0);
	if (hrtimer_cancel(&tw->h.t))
		tw->h.cancels++;
	return 0;
}

/* Has some timer fired and some been cancelled? (Racy reads: a hint for when to stop.) */
static bool timers_covered(const struct tworker *tws, unsigned n)
{
	bool fired = false, cancelled = false;
	unsigned i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k <= TIMER_SLOTS; k++) {
			fired |=
			    __atomic_load_n(k < TIMER_SLOTS ? &tws[i].w[k].fires : &tws[i].h.fires,
					    __ATOMIC_RELAXED) != 0;
			cancelled |= __atomic_load_n(k < TIMER_SLOTS ? &tws[i].w[k].cancels
								     : &tws[i].h.cancels,
						     __ATOMIC_RELAXED) != 0;
		}
	return fired && cancelled;
}

static int test_timer_torture(void)
{
	struct tworker *tws;
	struct run run;
	unsigned n = nr_workers(), i, k, armings = 0, fires = 0, cancels = 0, sleeps = 0;
	unsigned moves = 0, remote = 0;
	uint64_t late_ns = 0;
	int ret, prio;

	tws = kzalloc(sizeof(*tws) * n);
	if (!tws)
		return selftest_fail("out of memory");
	prio = current_thread()->base_prio;
	thread_set_prio(current_thread(), TORTURE_CONTROL_PRIO);
	failed = 0;
	late_max_jiffies = 0;
	late_bound_ns = cmdline_uint("torture.late_ms", 10000) * 1000000ull;
	run_init(&run);
	for (i = 0; i < n; i++) {
		tws[i].run = &run;
		tws[i].id = i;
		tws[i].t =
		    thread_run("timer-torture", tworker_main, &tws[i], 20 + i % 5, THREAD_ANY_CPU);
		if (!tws[i].t)
			return selftest_fail("cannot create a worker");
	}
	churn_start(&run);
	while (run_goes_on(&run, timers_covered(tws, n)) && !READ_ONCE(failed))
		sleep_ns(20000000);
	ret = churn_stop(&run);
	for (i = 0; i < n; i++)
		thread_join(tws[i].t);
	for (i = 0; i < n; i++) {
		struct tworker *tw = &tws[i];

		for (k = 0; k <= TIMER_SLOTS; k++) {
			unsigned a = k < TIMER_SLOTS ? tw->w[k].armings : tw->h.armings;
			unsigned f = k < TIMER_SLOTS ? tw->w[k].fires : tw->h.fires;
			unsigned c = k < TIMER_SLOTS ? tw->w[k].cancels : tw->h.cancels;

			if (a != f + c && !ret)
				ret = selftest_fail("worker %u timer %u: %u armings, %u fired, %u "
						    "cancelled",
						    i, k, a, f, c);
			armings += a;
			fires += f;
			cancels += c;
		}
		sleeps += tw->sleeps;
		moves += tw->moves;
		remote += tw->remote_arms;
		if (tw->late_max_ns > late_ns)
			late_ns = tw->late_max_ns;
	}
	if (READ_ONCE(failed) && !ret)
		ret = selftest_fail("%s", fail_msg);
	selftest_report("threads=%u armings=%u fired=%u cancelled=%u sleeps=%u moves=%u "
			"remote_arms=%u cpu_cycles=%u host_events=%lu sleep_late_max_us=%lu "
			"wheel_late_max_jiffies=%lu bound_ms=%lu",
			n, armings, fires, cancels, sleeps, moves, remote, run.cycles,
			acpi_hotplug_events() - run.events_start, (unsigned long)(late_ns / 1000),
			(unsigned long)late_max_jiffies, (unsigned long)(late_bound_ns / 1000000));
	kfree(tws);
	thread_set_prio(current_thread(), prio);
	return ret;
}
SELFTEST("timer_torture", test_timer_torture);

/* ---- wake_torture ---------------------------------------------------------------------------- */

enum wake_kind { WK_RAW, WK_WAITQ, WK_COMPLETION, WK_TIMED, WK_TIMED_COMPLETION, WK_NR };

struct pair {
	struct run *run;
	unsigned id;
	struct thread *ping_t, *pong_t;
	unsigned ping, pong; /* rounds started / answered (atomics) */
	struct waitqueue wq;
	struct completion to_pong, to_ping;
	uint64_t progress_ns; /* last round trip */
	int done_ping, done_pong;
	unsigned by_kind[WK_NR];
};

/* Wait until *counter reaches want, the way `kind` says; the other side wakes `me`. */
static void wait_for_count(struct pair *p, unsigned *counter, unsigned want, enum wake_kind kind,
			   struct completion *c, uint32_t *s)
{
	switch (kind) {
	case WK_RAW:
		thread_wait_until(__atomic_load_n(counter, __ATOMIC_ACQUIRE) >= want);
		break;
	case WK_WAITQ:
		wait_event(&p->wq, __atomic_load_n(counter, __ATOMIC_ACQUIRE) >= want);
		break;
	case WK_COMPLETION:
		while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) < want)
			wait_for_completion(c);
		break;
	case WK_TIMED:
		/* Short timed sleeps: the wake-up races the timer, both must be harmless. */
		while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) < want)
			sleep_ns(100000 + selftest_rand(s) % 2000000);
		break;
	default:
		while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) < want)
			wait_for_completion_timeout(c, 200000 + selftest_rand(s) % 3000000);
		break;
	}
}

/* Bump *counter and wake the other side every way it may be waiting. */
static void post(struct pair *p, unsigned *counter, struct thread *other, struct completion *c)
{
	__atomic_add_fetch(counter, 1, __ATOMIC_RELEASE);
	thread_wake(other);
	wake_up_all(&p->wq);
	complete(c);
}

static int pinger(void *arg)
{
	struct pair *p = arg;
	uint32_t s = p->run->seed + p->id * 104729u;

	unsigned next = selftest_rand(&s) % WK_NR;

	while (!READ_ONCE(p->run->stop)) {
		/* Each kind in turn (from a random one): a short run still tries them all. */
		enum wake_kind kind = (enum wake_kind)(next++ % WK_NR);
		unsigned round = __atomic_load_n(&p->ping, __ATOMIC_RELAXED) + 1;

		post(p, &p->ping, p->pong_t, &p->to_pong);
		wait_for_count(p, &p->pong, round, kind, &p->to_ping, &s);
		__atomic_store_n(&p->by_kind[kind], p->by_kind[kind] + 1, __ATOMIC_RELAXED);
		WRITE_ONCE(p->progress_ns, arch_now_ns());
		if (selftest_rand(&s) % 8 == 0)
			thread_set_cpu(current_thread(), random_cpu(&s));
	}
	/* Let the ponger out: done first, then one more round it wakes up to and sees it in. */
	thread_set_cpu(current_thread(), THREAD_ANY_CPU);
	__atomic_store_n(&p->done_ping, 1, __ATOMIC_RELEASE);
	post(p, &p->ping, p->pong_t, &p->to_pong);
	return 0;
}

static int ponger(void *arg)
{
	struct pair *p = arg;
	uint32_t s = p->run->seed + p->id * 7127u + 3u;
	unsigned want = 1;

	for (;;) {
		enum wake_kind kind = (enum wake_kind)(selftest_rand(&s) % WK_NR);

		wait_for_count(p, &p->ping, want, kind, &p->to_pong, &s);
		if (READ_ONCE(p->run->stop) && __atomic_load_n(&p->done_ping, __ATOMIC_ACQUIRE))
			break;
		want++;
		if (selftest_rand(&s) % 8 == 0)
			thread_set_cpu(current_thread(), random_cpu(&s));
		post(p, &p->pong, p->ping_t, &p->to_ping);
		if (READ_ONCE(p->run->stop) && __atomic_load_n(&p->done_ping, __ATOMIC_ACQUIRE))
			break;
	}
	thread_set_cpu(current_thread(), THREAD_ANY_CPU);
	__atomic_store_n(&p->done_pong, 1, __ATOMIC_RELEASE);
	return 0;
}

/* Spurious wake-ups: every sleeping primitive must take them. */
static int spurious_main(void *arg)
{
	struct pair *pairs = arg;
	uint32_t s = pairs[0].run->seed ^ 0x5bd1e995u;
	unsigned n = pairs[0].run->nr_pairs;

	while (!READ_ONCE(pairs[0].run->stop)) {
		struct pair *p = &pairs[selftest_rand(&s) % n];

		thread_wake(selftest_rand(&s) % 2 ? p->ping_t : p->pong_t);
		sleep_ns(100000 + selftest_rand(&s) % 1000000);
	}
	return 0;
}

/* Has every kind of wake-up been waited for by some pair? (Racy reads: a hint.) */
static bool kinds_covered(const struct pair *pairs, unsigned n)
{
	unsigned i, k;

	for (k = 0; k < WK_NR; k++) {
		for (i = 0; i < n; i++)
			if (__atomic_load_n(&pairs[i].by_kind[k], __ATOMIC_RELAXED))
				break;
		if (i == n)
			return false;
	}
	return true;
}

/* A pair without a round trip for TORTURE_STUCK_NS lost a wake-up: stop the run. */
static bool pair_stuck(const struct pair *pairs, unsigned n)
{
	uint64_t now = arch_now_ns();
	unsigned i;

	for (i = 0; i < n; i++)
		if (now - READ_ONCE(pairs[i].progress_ns) > TORTURE_STUCK_NS)
			return true;
	return false;
}

static int test_wake_torture(void)
{
	unsigned n = nr_workers() / 2, i, k, rounds = 0, kinds[WK_NR] = { 0 };
	struct thread *spurious;
	struct pair *pairs;
	struct run run;
	int ret, prio = current_thread()->base_prio;

	pairs = kzalloc(sizeof(*pairs) * n);
	if (!pairs)
		return selftest_fail("out of memory");
	failed = 0;
	run_init(&run);
	run.nr_pairs = n;
	thread_set_prio(current_thread(), TORTURE_CONTROL_PRIO);
	for (i = 0; i < n; i++) {
		struct pair *p = &pairs[i];

		p->run = &run;
		p->id = i;
		waitqueue_init(&p->wq, "wake_torture.wq");
		completion_init(&p->to_pong);
		completion_init(&p->to_ping);
		p->progress_ns = arch_now_ns();
		p->pong_t = thread_create("wake-pong", ponger, p, 20 + i % 4, THREAD_ANY_CPU);
		p->ping_t = thread_create("wake-ping", pinger, p, 20 + (i + 1) % 4, THREAD_ANY_CPU);
		if (!p->pong_t || !p->ping_t)
			return selftest_fail("cannot create threads");
	}
	for (i = 0; i < n; i++) {
		thread_start(pairs[i].pong_t);
		thread_start(pairs[i].ping_t);
	}
	spurious = thread_run("wake-spurious", spurious_main, pairs, 25, THREAD_ANY_CPU);
	churn_start(&run);
	while (run_goes_on(&run, kinds_covered(pairs, n)) && !pair_stuck(pairs, n))
		sleep_ns(20000000);
	ret = churn_stop(&run);
	if (spurious)
		thread_join(spurious);
	/* Every pair winds down within the bound, or a wake-up was lost: name it, leave it. */
	for (i = 0; i < n; i++) {
		struct pair *p = &pairs[i];
		uint64_t until = arch_now_ns() + TORTURE_STUCK_NS;

		while ((!__atomic_load_n(&p->done_ping, __ATOMIC_ACQUIRE) ||
			!__atomic_load_n(&p->done_pong, __ATOMIC_ACQUIRE)) &&
		       arch_now_ns() < until)
			sleep_ns(10000000);
		if (!p->done_ping || !p->done_pong) {
			pr_bug("wake_torture: pair %u stuck at ping %u pong %u (ping %s, pong %s): "
			       "a lost wake-up\n",
			       i, p->ping, p->pong, p->done_ping ? "done" : "waiting",
			       p->done_pong ? "done" : "waiting");
			sched_dump_threads();
			hrtimer_dump_bases();
			if (!ret)
				ret = selftest_fail("pair %u lost a wake-up", i);
			continue;
		}
		thread_join(p->ping_t);
		thread_join(p->pong_t);
		rounds += p->pong;
		for (k = 0; k < WK_NR; k++)
			kinds[k] += p->by_kind[k];
	}
	if (READ_ONCE(failed) && !ret)
		ret = selftest_fail("%s", fail_msg);
	selftest_report("pairs=%u rounds=%u raw=%u waitq=%u completion=%u timed=%u "
			"timed_completion=%u cpu_cycles=%u host_events=%lu",
			n, rounds, kinds[WK_RAW], kinds[WK_WAITQ], kinds[WK_COMPLETION],
			kinds[WK_TIMED], kinds[WK_TIMED_COMPLETION], run.cycles,
			acpi_hotplug_events() - run.events_start);
	if (!ret)
		kfree(pairs); /* a stuck pair's threads still point into it */
	thread_set_prio(current_thread(), prio);
	return ret;
}
SELFTEST("wake_torture", test_wake_torture);
