// SPDX-License-Identifier: MIT
/*
 * `bursts=N` (bursts.h). A dispatcher thread (priority 30, on the boot CPU, which never
 * leaves) starts each burst by waking the workers (priority 10, unpinned); a worker takes
 * one item at a time from the burst's count, and between two items sleeps BURSTS_GAP_US on
 * a high-resolution timer: the timer's interrupt wakes it on the CPU it left, where
 * wake-up placement (sched_select_cpu(): the last CPU if idle, else an idle active CPU)
 * moves it to a CPU that is idle, one that arrived mid-burst included, whenever another
 * worker keeps its own busy (a wake-up by the dispatcher would not: its CPU is busy waking
 * them, so they would be placed behind one another). An item
 * is a fixed number of arithmetic iterations (bursts.work), never calibrated: the same work
 * on every run. Output (a contract for bench/ and the tests):
 *   bursts: start n=N threads=T items=K work=W idle_ms=I
 *   bursts: burst=J ms=X online=C
 *   bursts: done n=N p50_ms=X max_ms=Y vcpu_ms=Z elapsed_ms=E
 */
#include "apps/bursts.h"

#include "arch.h"
#include "kernel/cmdline.h"
#include "kernel/compiler.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/hrtimer.h"
#include "kernel/mm.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/wait.h"

CMDLINE_PARAM(bursts, .name = "bursts", .kind = CMDLINE_UINT, .min = 1, .max = 100000);
CMDLINE_PARAM(bursts_threads, .name = "bursts.threads", .kind = CMDLINE_UINT, .min = 1, .max = 64);
CMDLINE_PARAM(bursts_items, .name = "bursts.items", .kind = CMDLINE_UINT, .min = 1, .max = 1000000);
CMDLINE_PARAM(bursts_work, .name = "bursts.work", .kind = CMDLINE_UINT, .min = 1,
	      .max = 1000000000);
CMDLINE_PARAM(bursts_idle, .name = "bursts.idle_ms", .kind = CMDLINE_UINT, .min = 0,
	      .max = 3600000);
CMDLINE_PARAM(bursts_start, .name = "bursts.start_ms", .kind = CMDLINE_UINT, .min = 0,
	      .max = 3600000);

/*
 * Iterations per item: ~25 ms of guest time where CPL0 code is emulated at ~1.5 M
 * instructions/s (kvm_pvm; the loop is 4 instructions an iteration), far less on hardware.
 */
#define BURSTS_WORK_DEFAULT  10000
#define BURSTS_PRIO_WORKER   10
#define BURSTS_PRIO_DISPATCH 30

/*
 * The gap between a worker's items: long enough that the worker is off its CPU before the
 * timer fires (a wake-up that finds it still on its way to sleep keeps it where it is),
 * where CPL0 is emulated at ~1.5 M instructions/s.
 */
#define BURSTS_GAP_US 1000

struct worker {
	struct thread *t;
	struct completion go; /* a burst started (or the run ended) */
	uint64_t sum; /* the arithmetic's result, so that it is done */
	bool stop;
};

struct bursts {
	unsigned n, threads, items;
	uint64_t work, idle_ms, start_ms;
	struct worker *w;
	/* The burst in progress, reset by the dispatcher before it wakes the workers: */
	int left; /* items not taken yet (atomic; below 0 once all are) */
	unsigned done; /* items finished (atomic) */
	uint64_t end_ns; /* when the last one finished */
	struct completion finished; /* the last item finished */
	uint64_t *ms_us; /* each burst's time, in us */
};

static int worker_main(void *arg)
{
	struct bursts *b = ((void **)arg)[0];
	struct worker *w = ((void **)arg)[1];
	uint64_t i;
	bool first;

	for (;;) {
		wait_for_completion(&w->go);
		if (READ_ONCE(w->stop))
			return 0;
		for (first = true; __atomic_sub_fetch(&b->left, 1, __ATOMIC_ACQ_REL) >= 0;
		     first = false) {
			if (!first)
				sleep_ns(BURSTS_GAP_US * 1000ull); /* the wake-up between items */
			for (i = 0; i < b->work; i++)
				w->sum = w->sum * 6364136223846793005ull + 1442695040888963407ull;
			if (__atomic_add_fetch(&b->done, 1, __ATOMIC_ACQ_REL) == b->items) {
				b->end_ns = arch_now_ns();
				complete(&b->finished);
			}
		}
	}
}

/* One burst: wake every worker, wait for the last item; its time in us. */
static uint64_t one_burst(struct bursts *b, unsigned *online)
{
	uint64_t t0;
	unsigned i;

	__atomic_store_n(&b->done, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&b->left, (int)b->items, __ATOMIC_RELEASE);
	t0 = arch_now_ns();
	for (i = 0; i < b->threads; i++)
		complete(&b->w[i].go);
	wait_for_completion(&b->finished);
	*online = cpumask_weight(&cpu_online_mask);
	return (b->end_ns - t0) / 1000;
}

static void print_ms(const char *key, uint64_t us)
{
	printk(" %s=%lu.%03lu", key, (unsigned long)(us / 1000), (unsigned long)(us % 1000));
}

static int dispatch_main(void *arg)
{
	struct bursts *b = arg;
	uint64_t t0, v0, max = 0, p50;
	unsigned j, k, online;

	t0 = arch_now_ns();
	v0 = cpu_online_integral_ns(NULL);
	printk("bursts: start n=%u threads=%u items=%u work=%lu idle_ms=%lu\n", b->n, b->threads,
	       b->items, (unsigned long)b->work, (unsigned long)b->idle_ms);
	sleep_ns(b->start_ms * 1000000);
	for (j = 0; j < b->n; j++) {
		if (j)
			sleep_ns(b->idle_ms * 1000000);
		b->ms_us[j] = one_burst(b, &online);
		if (b->ms_us[j] > max)
			max = b->ms_us[j];
		printk("bursts: burst=%u ms=%lu.%03lu online=%u\n", j + 1,
		       (unsigned long)(b->ms_us[j] / 1000), (unsigned long)(b->ms_us[j] % 1000),
		       online);
	}
	/* The median (nearest rank: the ceil(N/2)-th smallest), by insertion sort. */
	for (j = 1; j < b->n; j++)
		for (k = j; k && b->ms_us[k - 1] > b->ms_us[k]; k--) {
			uint64_t tmp = b->ms_us[k];

			b->ms_us[k] = b->ms_us[k - 1];
			b->ms_us[k - 1] = tmp;
		}
	p50 = b->ms_us[(b->n - 1) / 2];
	printk("bursts: done n=%u", b->n);
	print_ms("p50_ms", p50);
	print_ms("max_ms", max);
	print_ms("vcpu_ms", (cpu_online_integral_ns(NULL) - v0) / 1000);
	print_ms("elapsed_ms", (arch_now_ns() - t0) / 1000);
	printk("\n");
	return 0;
}

/* Start the workers, run the dispatcher, stop and join everything. */
static int run(struct bursts *b, void **args)
{
	struct thread *d;
	unsigned i;
	int ret = 0;

	for (i = 0; i < b->threads; i++) {
		args[2 * i] = b;
		args[2 * i + 1] = &b->w[i];
		completion_init(&b->w[i].go);
		b->w[i].t = thread_run("burst-worker", worker_main, &args[2 * i],
				       BURSTS_PRIO_WORKER, THREAD_ANY_CPU);
		if (!b->w[i].t)
			ret = -ENOMEM;
	}
	d = ret ? NULL : thread_run("bursts", dispatch_main, b, BURSTS_PRIO_DISPATCH, 0);
	if (d)
		thread_join(d);
	else
		ret = -ENOMEM;
	for (i = 0; i < b->threads; i++) {
		if (!b->w[i].t)
			continue;
		WRITE_ONCE(b->w[i].stop, true);
		complete(&b->w[i].go);
		thread_join(b->w[i].t);
	}
	return ret;
}

int bursts_run(void)
{
	struct bursts b = { 0 };
	void **args;
	int ret = -ENOMEM;

	b.n = (unsigned)cmdline_uint("bursts", 0);
	if (!b.n)
		return 0;
	b.threads = (unsigned)cmdline_uint("bursts.threads", 2);
	b.items = (unsigned)cmdline_uint("bursts.items", 40);
	b.work = cmdline_uint("bursts.work", BURSTS_WORK_DEFAULT);
	b.idle_ms = cmdline_uint("bursts.idle_ms", 4000);
	b.start_ms = cmdline_uint("bursts.start_ms", 1000);
	completion_init(&b.finished);
	b.w = kzalloc(b.threads * sizeof(*b.w));
	b.ms_us = kzalloc(b.n * sizeof(*b.ms_us));
	args = kzalloc(2 * b.threads * sizeof(*args));
	if (b.w && b.ms_us && args)
		ret = run(&b, args);
	if (ret)
		printk("bursts: failed (%d)\n", ret);
	kfree(args);
	kfree(b.ms_us);
	kfree(b.w);
	return ret;
}
