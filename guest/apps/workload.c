// SPDX-License-Identifier: MIT
/*
 * Agent-driven workloads (see workload.h). Each thread does what `kind` asks, every
 * period: a burst of arithmetic (hog), and/or re-arms its timeouts, cancelling the ones
 * still pending (most of them: they are set 5-100 ms out and the period is shorter) while
 * a short one now and then fires (timer storm); or it holds a CPU (thread_hold_cpu()) and
 * wakes every period until stopped (hold). wl_mutex serializes start and stop.
 */
#include "apps/workload.h"

#include "apps/selftest.h" /* selftest_rand() */
#include "arch.h"
#include "kernel/compiler.h"
#include "kernel/errno.h"
#include "kernel/hrtimer.h"
#include "kernel/mm.h"
#include "kernel/mutex.h"
#include "kernel/sched.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "kernel/wait.h"

#define WL_MAX_THREADS 64
#define WL_TIMERS      8 /* per thread */
#define WL_BURST       500 /* iterations per hog burst: short, CPL0 may be emulated */
#define WL_PRIO	       20
#define WL_HOLD_PRIO   80 /* real-time: below cpuhp/N (98) and the latency threads (99) */

struct wl_timer {
	struct timer_list t;
	uint64_t fired; /* by the callback */
};

struct wl_thread {
	struct thread *t;
	uint32_t seed;
	uint64_t sum;
	/* Written by the thread, read after it was joined: */
	uint64_t iterations, armed, cancelled;
	struct wl_timer timers[WL_TIMERS];
	struct completion held; /* hold: completed once thread_hold_cpu() answered */
	int hold_err; /* its answer, read after `held` */
};

static struct mutex wl_mutex;
/* Guarded by wl_mutex: */
static struct wl_thread *wl;
static unsigned wl_nr;
static uint32_t wl_id, wl_next_id = 1, wl_kind, wl_period_us, wl_cpu;
static uint64_t wl_t0;
static volatile int wl_stop;

static void wl_timer_fn(struct timer_list *t)
{
	struct wl_timer *w = container_of(t, struct wl_timer, t);

	__atomic_add_fetch(&w->fired, 1, __ATOMIC_RELAXED);
}

static void storm(struct wl_thread *w)
{
	unsigned i;

	for (i = 0; i < WL_TIMERS; i++) {
		struct wl_timer *wt = &w->timers[i];
		bool short_one = selftest_rand(&w->seed) % 16 == 0;

		if (timer_pending(&wt->t)) {
			if (!timer_delete(&wt->t))
				continue; /* fired meanwhile: counted by its callback */
			w->cancelled++;
		} else if (w->armed !=
			   __atomic_load_n(&wt->fired, __ATOMIC_RELAXED) + w->cancelled) {
			continue; /* its callback is running right now */
		}
		w->armed++;
		timer_add(&wt->t, jiffies + (short_one ? 1
						       : ns_to_jiffies(5000000) +
							     selftest_rand(&w->seed) % 96));
	}
}

/* Hold wl_cpu, wake every period until stopped, let go. */
static int wl_hold(struct wl_thread *w)
{
	w->hold_err = thread_hold_cpu(wl_cpu);
	complete(&w->held);
	if (w->hold_err)
		return 0;
	while (!READ_ONCE(wl_stop)) {
		w->iterations++;
		sleep_ns((uint64_t)wl_period_us * 1000);
	}
	thread_release_cpu();
	return 0;
}

static int wl_main(void *arg)
{
	struct wl_thread *w = arg;

	if (wl_kind == PLUGVM_AGENT_WORK_HOLD)
		return wl_hold(w);
	while (!READ_ONCE(wl_stop)) {
		if (wl_kind & PLUGVM_AGENT_WORK_HOG) {
			unsigned i;

			for (i = 0; i < WL_BURST; i++)
				w->sum = w->sum * 6364136223846793005ull + 1442695040888963407ull;
			w->iterations++;
		}
		if (wl_kind & PLUGVM_AGENT_WORK_TIMERS)
			storm(w);
		sleep_ns((uint64_t)wl_period_us * 1000);
	}
	return 0;
}

void workload_init(void)
{
	mutex_init(&wl_mutex, "workload");
}

static void lock(void)
{
	mutex_lock(&wl_mutex);
}

/* Stop and join the threads, cancel their timers, sum the counters. wl_mutex held. */
static void wl_finish(struct plugvm_agent_workload_result *r)
{
	unsigned i, k;

	WRITE_ONCE(wl_stop, 1);
	memset(r, 0, sizeof(*r));
	r->id = wl_id;
	r->threads = wl_nr;
	for (i = 0; i < wl_nr; i++)
		if (wl[i].t)
			thread_join(wl[i].t);
	r->ns = arch_now_ns() - wl_t0;
	for (i = 0; i < wl_nr; i++) {
		struct wl_thread *w = &wl[i];

		for (k = 0; k < WL_TIMERS; k++) {
			if (timer_delete_sync(&w->timers[k].t))
				w->cancelled++;
			r->timers_fired += __atomic_load_n(&w->timers[k].fired, __ATOMIC_RELAXED);
		}
		r->iterations += w->iterations;
		r->timers_armed += w->armed;
		r->timers_cancelled += w->cancelled;
	}
	kfree(wl);
	wl = NULL;
	wl_nr = 0;
	wl_id = 0;
}

/* Start the threads, and for a hold wait until each holds its CPU. wl_mutex held. */
static int wl_spawn(void)
{
	bool hold = wl_kind == PLUGVM_AGENT_WORK_HOLD;
	unsigned i;

	/* Unbound: the scheduler spreads them and moves them off a CPU going down; holding
	 * threads pin themselves. */
	for (i = 0; i < wl_nr; i++) {
		wl[i].t = thread_run(hold ? "hold" : "workload", wl_main, &wl[i],
				     hold ? WL_HOLD_PRIO : WL_PRIO, THREAD_ANY_CPU);
		if (!wl[i].t)
			return -ENOMEM;
	}
	for (i = 0; hold && i < wl_nr; i++) {
		wait_for_completion(&wl[i].held);
		if (wl[i].hold_err)
			return wl[i].hold_err;
	}
	return 0;
}

static bool wl_valid(const struct plugvm_agent_workload *w)
{
	uint32_t mixed = PLUGVM_AGENT_WORK_HOG | PLUGVM_AGENT_WORK_TIMERS;

	if (!w->threads || w->threads > WL_MAX_THREADS || w->period_us > 1000000)
		return false;
	if (w->kind == PLUGVM_AGENT_WORK_HOLD)
		return w->cpu < NR_CPUS;
	return w->kind && !(w->kind & ~mixed) && !w->cpu;
}

int workload_start(const struct plugvm_agent_workload *w, uint32_t *id)
{
	struct plugvm_agent_workload_result r;
	unsigned i, k;
	int err;

	if (!wl_valid(w))
		return -EINVAL;
	lock();
	if (wl) {
		mutex_unlock(&wl_mutex);
		return -EBUSY;
	}
	wl = kzalloc(w->threads * sizeof(*wl));
	if (!wl) {
		mutex_unlock(&wl_mutex);
		return -ENOMEM;
	}
	wl_nr = w->threads;
	wl_kind = w->kind;
	wl_period_us = w->period_us ? w->period_us : 1000;
	wl_cpu = w->cpu;
	wl_id = wl_next_id++;
	wl_stop = 0;
	wl_t0 = arch_now_ns();
	for (i = 0; i < wl_nr; i++) {
		wl[i].seed = i * 2654435761u + wl_id;
		for (k = 0; k < WL_TIMERS; k++)
			timer_setup(&wl[i].timers[k].t, wl_timer_fn, 0);
		completion_init(&wl[i].held);
	}
	err = wl_spawn();
	if (err) {
		wl_finish(&r);
		mutex_unlock(&wl_mutex);
		return err;
	}
	*id = wl_id;
	mutex_unlock(&wl_mutex);
	return 0;
}

int workload_stop(uint32_t id, struct plugvm_agent_workload_result *r)
{
	lock();
	if (!wl || id != wl_id) {
		mutex_unlock(&wl_mutex);
		return -EINVAL;
	}
	wl_finish(r);
	mutex_unlock(&wl_mutex);
	return 0;
}
