// SPDX-License-Identifier: MIT
/*
 * The latency measurement's own loads (see latency_stress.h), below its priority: a
 * cross-CPU wake-up storm (pairs of threads on neighbouring CPUs waking each other, each
 * wake-up a reschedule IPI) and local_lock contention (per CPU, a busy thread and a
 * higher-priority one that wakes up often, both taking that CPU's local_lock around
 * per-CPU data: preemption off in the default build, a real lock with priority inheritance
 * in the RT build). All per-CPU threads, parked with their CPU and resumed when it
 * returns; each sleeps often enough that threads below them still run.
 */
#include "apps/latency_stress.h"

#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/hrtimer.h"
#include "kernel/local_lock.h"
#include "kernel/mm.h"
#include "kernel/printk.h"
#include "kernel/sched.h"

#define STRESS_PRIO 20 /* as the agent's workloads; the waker of `locks` one above */
#define LOCK_WORK   64 /* updates of the per-CPU data per lock hold */
#define LOCK_ROUNDS 8 /* holds of the busy thread between its sleeps */
#define PAUSE_NS    200000 /* the sleeps: a wake-up, often a remote one, each */

/* Two threads on two CPUs passing a turn back and forth: every pass wakes the other. */
struct ipi_pair {
	struct thread *t[2];
	int turn; /* the side whose turn it is; -1 until both threads exist */
	uint64_t passes;
};

struct ipi_side {
	struct ipi_pair *pair;
	int side;
};

static int ipi_thread(void *arg)
{
	struct ipi_side *s = arg;
	struct ipi_pair *p = s->pair;

	for (;;) {
		thread_wait_until(__atomic_load_n(&p->turn, __ATOMIC_ACQUIRE) == s->side);
		__atomic_fetch_add(&p->passes, 1, __ATOMIC_RELAXED);
		sleep_ns(PAUSE_NS);
		__atomic_store_n(&p->turn, !s->side, __ATOMIC_RELEASE);
		thread_wake(p->t[!s->side]);
	}
	return 0;
}

/* One CPU's data under its local_lock, taken by a busy thread and a frequent waker. */
struct lock_cpu {
	local_lock_t lock;
	uint64_t data[8]; /* guarded by lock */
};

static void lock_work(struct lock_cpu *lc)
{
	unsigned k;

	local_lock(&lc->lock);
	for (k = 0; k < LOCK_WORK; k++)
		lc->data[k & 7] = lc->data[k & 7] * 6364136223846793005ull + k;
	local_unlock(&lc->lock);
}

/* Mostly holding the lock; the waker above it finds it held, and must wait for us. */
static int lock_busy(void *arg)
{
	unsigned r;

	for (;;) {
		for (r = 0; r < LOCK_ROUNDS; r++)
			lock_work(arg);
		sleep_ns(PAUSE_NS);
	}
	return 0;
}

static int lock_waker(void *arg)
{
	for (;;) {
		sleep_ns(PAUSE_NS / 2);
		lock_work(arg);
	}
	return 0;
}

static int start_ipi(const unsigned *cpus, unsigned n)
{
	struct ipi_pair *pairs = kzalloc(n * sizeof(*pairs));
	struct ipi_side *sides = kzalloc(2 * n * sizeof(*sides));
	unsigned i, k;

	if (!pairs || !sides)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		pairs[i].turn = -1;
		for (k = 0; k < 2; k++) {
			sides[2 * i + k] = (struct ipi_side){ &pairs[i], (int)k };
			pairs[i].t[k] =
			    kthread_run_on_cpu("stress-ipi", ipi_thread, &sides[2 * i + k],
					       STRESS_PRIO, cpus[(i + k) % n]);
			if (!pairs[i].t[k])
				return -ENOMEM;
		}
		__atomic_store_n(&pairs[i].turn, 0, __ATOMIC_RELEASE);
		thread_wake(pairs[i].t[0]);
	}
	return 0;
}

static int start_locks(const unsigned *cpus, unsigned n)
{
	struct lock_cpu *lcs = kzalloc(n * sizeof(*lcs));
	unsigned i;

	if (!lcs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		local_lock_init(&lcs[i].lock, "latency_stress");
		if (!kthread_run_on_cpu("stress-lock", lock_busy, &lcs[i], STRESS_PRIO, cpus[i]) ||
		    !kthread_run_on_cpu("stress-lockw", lock_waker, &lcs[i], STRESS_PRIO + 1,
					cpus[i]))
			return -ENOMEM;
	}
	return 0;
}

int latency_stress_start(unsigned kinds)
{
	unsigned cpus[NR_CPUS], n = 0, cpu;
	int ret = 0;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		if (cpumask_test(&cpu_online_mask, cpu))
			cpus[n++] = cpu;
	if ((kinds & LATENCY_STRESS_IPI) && n < 2)
		printk("warning: latency: the ipi stress needs two CPUs online: not started\n");
	else if (kinds & LATENCY_STRESS_IPI)
		ret = start_ipi(cpus, n);
	if (!ret && (kinds & LATENCY_STRESS_LOCKS))
		ret = start_locks(cpus, n);
	return ret;
}
