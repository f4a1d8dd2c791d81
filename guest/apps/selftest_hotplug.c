// SPDX-License-Identifier: MIT
/*
 * hotplug_churn: threads and wheel timers run while the hypervisor adds and removes CPUs
 * (the churn comes from outside, e.g. QMP device_add/device_del). It runs until the ACPI
 * hotplug driver has handled `hotplug_churn.events=N` events (default 500, bound
 * `hotplug_churn.seconds`, default 900), then checks that nothing was lost: every thread
 * finished with the right result, every timer armed fired or was cancelled exactly once.
 * Only when named (it waits for outside events).
 */
#include "apps/selftest.h"
#include "arch.h"
#include "drivers/acpi_hotplug.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/hrtimer.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/string.h"
#include "kernel/timer.h"

CMDLINE_PARAM(churn_events, .name = "hotplug_churn.events", .kind = CMDLINE_UINT, .min = 1,
	      .max = 100000000);
CMDLINE_PARAM(churn_seconds, .name = "hotplug_churn.seconds", .kind = CMDLINE_UINT, .min = 1,
	      .max = 1000000);

#define CHURN_WORKERS 6
#define CHURN_TIMERS  64

struct churn_worker {
	struct thread *t;
	unsigned id;
	unsigned iterations;
	uint64_t sum;
	uint64_t cpus_seen;
};

struct churn_timer {
	struct timer_list t;
	unsigned armed, fired, cancelled;
};

static struct churn_worker workers[CHURN_WORKERS];
static struct churn_timer ctimers[CHURN_TIMERS];
static volatile int churn_stop;

static uint64_t work(unsigned id, unsigned i)
{
	return (uint64_t)id * 2654435761u + (uint64_t)i * i + 7;
}

static int worker_main(void *arg)
{
	struct churn_worker *w = arg;
	uint32_t seed = w->id * 77 + 1;

	while (!READ_ONCE(churn_stop)) {
		w->sum += work(w->id, w->iterations++);
		w->cpus_seen |= 1ull << (raw_smp_processor_id() % 64);
		sleep_ns(100000 + selftest_rand(&seed) % 800000);
	}
	return 0;
}

static void timer_fn(struct timer_list *t)
{
	struct churn_timer *c = container_of(t, struct churn_timer, t);

	__atomic_add_fetch(&c->fired, 1, __ATOMIC_RELAXED);
}

/* Arm idle timers on random online CPUs; cancel a few pending ones. */
static void stir_timers(uint32_t *seed)
{
	unsigned i;

	for (i = 0; i < CHURN_TIMERS; i++) {
		struct churn_timer *c = &ctimers[i];
		unsigned cpu = selftest_rand(seed) % nr_cpu_ids;

		if (timer_pending(&c->t)) {
			if (selftest_rand(seed) % 8 == 0 && timer_delete(&c->t))
				c->cancelled++;
			continue;
		}
		if (c->armed != __atomic_load_n(&c->fired, __ATOMIC_RELAXED) + c->cancelled)
			continue; /* its callback is running right now */
		c->armed++;
		if (timer_add_on(&c->t, jiffies + 1 + selftest_rand(seed) % 200, cpu))
			timer_add(&c->t, jiffies + 1 + selftest_rand(seed) % 200);
	}
}

static int test_hotplug_churn(void)
{
	unsigned long want = (unsigned long)cmdline_uint("hotplug_churn.events", 500);
	uint64_t limit = arch_now_ns() + cmdline_uint("hotplug_churn.seconds", 900) * 1000000000ull;
	unsigned long start = acpi_hotplug_events();
	uint32_t seed = 7;
	unsigned i, cpus_used = 0;
	int ret = 0;

	churn_stop = 0;
	memset(ctimers, 0, sizeof(ctimers));
	for (i = 0; i < CHURN_TIMERS; i++)
		timer_setup(&ctimers[i].t, timer_fn, i % 5 == 1 ? TIMER_DEFERRABLE : 0);
	for (i = 0; i < CHURN_WORKERS; i++) {
		memset(&workers[i], 0, sizeof(workers[i]));
		workers[i].id = i;
		workers[i].t = thread_run("churn-worker", worker_main, &workers[i], 20 + i % 3, -1);
		if (!workers[i].t)
			return selftest_fail("cannot create a worker");
	}
	printk("selftest hotplug_churn: waiting for the host to add and remove CPUs: %lu ACPI "
	       "hotplug events (hotplug_churn.events=N) within %lu s (hotplug_churn.seconds=S)\n",
	       want, (unsigned long)cmdline_uint("hotplug_churn.seconds", 900));
	while (acpi_hotplug_events() - start < want && arch_now_ns() < limit) {
		stir_timers(&seed);
		sleep_ns(2000000);
	}
	if (acpi_hotplug_events() - start < want)
		ret = selftest_fail("only %lu of %lu hotplug events before the time bound",
				    acpi_hotplug_events() - start, want);
	WRITE_ONCE(churn_stop, 1);
	for (i = 0; i < CHURN_WORKERS; i++) {
		struct churn_worker *w = &workers[i];
		uint64_t sum = 0;
		unsigned k;

		thread_join(w->t);
		for (k = 0; k < w->iterations; k++)
			sum += work(w->id, k);
		if (!ret && (sum != w->sum || !w->iterations))
			ret =
			    selftest_fail("worker %u: %u iterations, sum %lu, want %lu", i,
					  w->iterations, (unsigned long)w->sum, (unsigned long)sum);
		cpus_used |= (unsigned)__builtin_popcountll(w->cpus_seen) > 1;
	}
	/* Let every timer still pending fire (deferrable ones on a busy CPU may wait). */
	for (i = 0; i < CHURN_TIMERS; i++)
		if (timer_pending(&ctimers[i].t) && timer_delete_sync(&ctimers[i].t))
			ctimers[i].cancelled++;
	for (i = 0; i < CHURN_TIMERS && !ret; i++) {
		struct churn_timer *c = &ctimers[i];

		if (c->armed != c->fired + c->cancelled)
			ret = selftest_fail("timer %u: armed %u, fired %u, cancelled %u", i,
					    c->armed, c->fired, c->cancelled);
	}
	if (!ret) {
		unsigned long armed = 0;

		for (i = 0; i < CHURN_TIMERS; i++)
			armed += ctimers[i].armed;
		selftest_report("events=%lu workers=%u timers_armed=%lu migrated=%u cpus_online=%u",
				acpi_hotplug_events() - start, CHURN_WORKERS, armed, cpus_used,
				cpumask_weight(&cpu_online_mask));
	}
	return ret;
}
SELFTEST_EXPLICIT("hotplug_churn", test_hotplug_churn);
