// SPDX-License-Identifier: MIT
/*
 * cyclictest in the guest (see cyclic.h). Each measurement thread is a per-CPU kernel thread
 * (kthread_run_on_cpu: parked by the scheduler while its CPU is away, resumed when a CPU
 * comes back in that slot) and is the only writer of its record in the shared area; outlier
 * slots are claimed atomically; the per-state table takes atomic adds. A sample spanning a
 * park is not a latency: it counts as parked time.
 */
#include "apps/cyclic.h"

#include "apps/latency_stress.h"
#include "apps/workload.h"
#include "arch.h"
#include "kernel/bug.h"
#include "kernel/cmdline.h"
#include "kernel/compiler.h"
#include "kernel/cpu.h"
#include "kernel/cpuhp.h"
#include "kernel/errno.h"
#include "kernel/hrtimer.h"
#include "kernel/mm.h"
#include "kernel/panic.h"
#include "kernel/preempt.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/string.h"
#include "plugvm_agent.h"
#include "plugvm_latency.h"

CMDLINE_PARAM(latency, .name = "latency", .kind = CMDLINE_FLAG);
CMDLINE_PARAM(latency_interval, .name = "latency.interval_us", .kind = CMDLINE_UINT, .min = 100,
	      .max = 1000000);
CMDLINE_PARAM(latency_prio, .name = "latency.prio", .kind = CMDLINE_UINT, .min = 1, .max = 99);
CMDLINE_PARAM(latency_hist, .name = "latency.hist_us", .kind = CMDLINE_UINT, .min = 1,
	      .max = PLUGVM_LATENCY_HIST_MAX);
CMDLINE_PARAM(latency_threshold, .name = "latency.threshold_us", .kind = CMDLINE_UINT, .min = 0,
	      .max = 10000000);
CMDLINE_PARAM(latency_cpus, .name = "latency.cpus", .kind = CMDLINE_STRING);
CMDLINE_PARAM(latency_stress, .name = "latency.stress", .kind = CMDLINE_STRING);

#define LATENCY_STARTER_PRIO 30 /* above the stress (20, 21), below the measurement */
#define AREA_PAGES	     ((sizeof(struct plugvm_latency_area) + 4095) / 4096)

static struct plugvm_latency_area *area;
static struct plugvm_latency_register reg __attribute__((aligned(8)));
static uint64_t interval_ns, threshold_ns;
static unsigned hist_us, nr_hp_cpus;

static void max_u64(uint64_t *p, uint64_t v)
{
	uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v > old &&
	       !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static unsigned log2_bucket(uint64_t us)
{
	unsigned k = 0;

	while (us > 1 && k < PLUGVM_LATENCY_STATE_LOG2 - 1) {
		us >>= 1;
		k++;
	}
	return k;
}

/* Callbacks started on every CPU, when a measurement thread goes to sleep. */
static void hp_snapshot(unsigned *started)
{
	struct cpuhp_activity a;
	unsigned c;

	for (c = 0; c < nr_hp_cpus; c++) {
		cpuhp_activity(c, &a);
		started[c] = a.started;
	}
}

/*
 * The hotplug states behind a sample: on each CPU, the callback running at wake-up, else
 * the last one started while the thread waited (since hp_snapshot(): `started`). Count the
 * sample once for each such state, and keep them in hp[] for an outlier report.
 */
static void attribute(uint64_t lat_ns, const unsigned *started, uint16_t *hp)
{
	uint64_t seen = 0; /* states already counted, by id below 64 */
	unsigned c, k = log2_bucket(lat_ns / 1000);
	struct cpuhp_activity a;

	for (c = 0; c < nr_hp_cpus; c++) {
		unsigned r, st;
		struct plugvm_latency_state *s;

		cpuhp_activity(c, &a);
		r = a.running ? a.running : a.started != started[c] ? a.last : 0;
		hp[c] = (uint16_t)r;
		if (!r)
			continue;
		st = (r & ~CPUHP_RUNNING_DOWN) - 1;
		if (st >= area->nr_states || (seen & (1ull << st)))
			continue;
		seen |= 1ull << st;
		s = &area->states[st];
		__atomic_fetch_add(&s->count, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&s->log2[k], 1, __ATOMIC_RELAXED);
		max_u64(&s->max_ns, lat_ns);
	}
}

/*
 * Put one outlier in the ring; a slot another CPU is writing right now is skipped. The slot's
 * count says which index it holds (plugvm_latency.h): odd while index n is written, then
 * PLUGVM_LATENCY_OUTLIER_SEQ(n). test_latency.c: test_outlier_not_yet_written.
 */
static void record_outlier(unsigned cpu, uint64_t lat_ns, uint64_t when_ns, uint32_t flags,
			   uint32_t irqs, const uint16_t *hp)
{
	uint64_t n = __atomic_fetch_add(&area->outlier_seq, 1, __ATOMIC_RELAXED);
	struct plugvm_latency_outlier *o = &area->outliers[n % PLUGVM_LATENCY_OUTLIERS];
	uint32_t seq = __atomic_load_n(&o->seq, __ATOMIC_RELAXED),
		 done = PLUGVM_LATENCY_OUTLIER_SEQ(n);

	if ((seq & 1) || !__atomic_compare_exchange_n(&o->seq, &seq, done - 1, false,
						      __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	o->cpu = cpu;
	o->flags = flags;
	o->irqs = irqs;
	o->latency_ns = lat_ns;
	o->when_ns = when_ns;
	memcpy(o->hp, hp, sizeof(o->hp));
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&o->seq, done, __ATOMIC_RELAXED);
}

/* One update of a CPU's record: a sample, or the wait of a period its CPU went away in. */
struct rec_update {
	bool park;
	uint64_t lat_ns; /* a sample */
	uint64_t missed; /* a sample: the periods its wake-up skipped */
	uint64_t parks, parked_ns; /* a park */
	uint64_t elapsed_ns; /* both: the time accounted so far */
};

static void apply(struct plugvm_latency_cpu *r, const struct rec_update *u)
{
	uint64_t us = u->lat_ns / 1000;

	r->elapsed_ns = u->elapsed_ns;
	if (u->park) {
		r->parks += u->parks;
		r->parked_ns += u->parked_ns;
		return;
	}
	r->count++;
	r->missed += u->missed;
	if (u->lat_ns < r->min_ns)
		r->min_ns = u->lat_ns;
	if (u->lat_ns > r->max_ns)
		r->max_ns = u->lat_ns;
	r->sum_ns += u->lat_ns;
	r->act_ns = u->lat_ns;
	r->log2[log2_bucket(us)]++;
	if (us < hist_us)
		r->hist[us]++;
	else
		r->overflows++;
	if (threshold_ns && u->lat_ns > threshold_ns)
		r->outliers++;
}

/*
 * Publish an update through the record's latch (plugvm_latency.h): copy 0 while `seq` is
 * odd, copy 1 once it is even again, so the host always has one whole copy to read. Its
 * measurement thread only, interrupts off.
 */
static void publish(struct plugvm_latency_latch *l, const struct rec_update *u)
{
	__atomic_store_n(&l->seq, l->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	apply(&l->copy[0], u);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&l->seq, l->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	apply(&l->copy[1], u);
}

/* The interrupts this CPU took in its current life. */
static uint64_t irqs_now(void)
{
	uint64_t n;

	preempt_disable();
	n = this_cpu()->nr_irqs;
	preempt_enable();
	return n;
}

/*
 * One CPU's measurement. Every period from `start` on is accounted exactly once: sampled,
 * missed (a wake-up after the next deadline skips it), or parked (the whole wait of a
 * period its CPU went away in): elapsed_ns = (count + missed) * interval + parked_ns.
 */
static int cyclic_thread(void *arg)
{
	unsigned cpu = (unsigned)(uintptr_t)arg;
	struct plugvm_latency_latch *r = &area->cpus[cpu];
	struct thread *me = current_thread();
	uint64_t parks = __atomic_load_n(&me->nr_parks, __ATOMIC_ACQUIRE);
	uint64_t start = arch_now_ns(), next = start + interval_ns, irqs = irqs_now();
	bool unparked = false;
	uint16_t hp[PLUGVM_LATENCY_MAX_CPUS] = { 0 }; /* CPUs past nr_hp_cpus stay 0 */
	unsigned started[PLUGVM_LATENCY_MAX_CPUS];

	for (;;) {
		uint64_t now, lat, missed = 0, p, i, deadline;
		unsigned long flags;

		hp_snapshot(started);
		sleep_until(next);
		now = arch_now_ns();
		p = __atomic_load_n(&me->nr_parks, __ATOMIC_ACQUIRE);
		if (p != parks || now < next) {
			if (now < next)
				pr_bug("latency: cpu %u woke %lu ns before its deadline\n", cpu,
				       (unsigned long)(next - now));
			/* Its CPU went away and came back: the wait was a park, not a latency. */
			flags = arch_irq_save();
			publish(r, &(struct rec_update){ .park = true,
							 .parks = p - parks,
							 .parked_ns = now - (next - interval_ns),
							 .elapsed_ns = now - start });
			arch_irq_restore(flags);
			parks = p;
			unparked = true;
			irqs = irqs_now(); /* a new life of the CPU: its count restarted */
			next = now + interval_ns;
			continue;
		}
		lat = now - next;
		/* As cyclictest: a wake-up past the next deadline skips the periods it missed. */
		deadline = next;
		next += interval_ns;
		while (next <= now) {
			next += interval_ns;
			missed++;
		}
		flags = arch_irq_save();
		i = this_cpu()->nr_irqs;
		attribute(lat, started, hp);
		/*
		 * The outlier first: the host reads the records, then the outlier total, so a
		 * sample it sees counted is in the total too (the other order let a snapshot land
		 * between the two: `outliers-total` below the outliers of the records).
		 */
		if (threshold_ns && lat > threshold_ns)
			record_outlier(cpu, lat, deadline,
				       unparked ? PLUGVM_LATENCY_OUT_UNPARKED : 0,
				       (uint32_t)(i - irqs), hp);
		publish(r, &(struct rec_update){ .lat_ns = lat,
						 .missed = missed,
						 .elapsed_ns = next - interval_ns - start });
		arch_irq_restore(flags);
		irqs = i;
		unparked = false;
	}
	return 0;
}

/* Parse `latency.cpus=LIST` (numbers and ranges, "0,2-3") into *mask. False if bad. */
static bool parse_cpus(const char *v, size_t len, struct cpumask *mask)
{
	size_t i = 0;

	while (i < len) {
		unsigned a = 0, b;
		size_t d = i;

		while (i < len && v[i] >= '0' && v[i] <= '9' && a < 100000)
			a = a * 10 + (unsigned)(v[i++] - '0');
		if (i == d)
			return false;
		b = a;
		if (i < len && v[i] == '-') {
			d = ++i;
			b = 0;
			while (i < len && v[i] >= '0' && v[i] <= '9' && b < 100000)
				b = b * 10 + (unsigned)(v[i++] - '0');
			if (i == d || b < a)
				return false;
		}
		if (b >= nr_cpu_ids || b >= PLUGVM_LATENCY_MAX_CPUS)
			return false;
		for (; a <= b; a++)
			cpumask_set(mask, a);
		if (i < len && v[i++] != ',')
			return false;
		if (i == len && v[len - 1] == ',')
			return false;
	}
	return true;
}

/*
 * `latency.stress=LIST`: the agent's workload (PLUGVM_AGENT_WORK_* in *kind) and our own
 * loads (LATENCY_STRESS_* in *own). False for an unknown or empty item.
 */
static bool parse_stress(const char *v, size_t len, uint32_t *kind, unsigned *own)
{
	static const struct {
		const char *name;
		uint32_t kind;
		unsigned own;
	} items[] = { { "hogs", PLUGVM_AGENT_WORK_HOG, 0 },
		      { "timers", PLUGVM_AGENT_WORK_TIMERS, 0 },
		      { "ipi", 0, LATENCY_STRESS_IPI },
		      { "locks", 0, LATENCY_STRESS_LOCKS } };
	size_t i = 0, k;

	*kind = 0;
	*own = 0;
	if (!len || v[len - 1] == ',')
		return false; /* an empty item */
	while (i < len) {
		size_t j = i;

		while (j < len && v[j] != ',')
			j++;
		for (k = 0; k < sizeof(items) / sizeof(items[0]); k++)
			if (j - i == strlen(items[k].name) && !memcmp(v + i, items[k].name, j - i))
				break;
		if (k == sizeof(items) / sizeof(items[0]))
			return false;
		*kind |= items[k].kind;
		*own |= items[k].own;
		i = j + 1;
	}
	return *kind || *own;
}

/* Fill the header and the state names, and tell plugvm where the area is. */
static void register_area(unsigned prio)
{
	unsigned s;

	area->magic = PLUGVM_LATENCY_MAGIC;
	area->version = PLUGVM_LATENCY_VERSION;
	area->interval_us = (uint32_t)(interval_ns / 1000);
	area->hist_us = hist_us;
	area->threshold_us = (uint32_t)(threshold_ns / 1000);
	area->tsc_khz = arch_tsc_khz();
#ifdef CONFIG_PREEMPT_RT
	area->flags = PLUGVM_LATENCY_F_RT;
#endif
	for (s = 0; s < CPUHP_NR_STATES && s < PLUGVM_LATENCY_MAX_STATES; s++) {
		const char *name = cpuhp_name((int)s);

		if (name)
			memcpy(area->states[s].name, name,
			       strnlen(name, PLUGVM_LATENCY_STATE_NAME - 1));
	}
	area->nr_states = s;
	for (s = 0; s < 2 * PLUGVM_LATENCY_MAX_CPUS; s++) {
		area->cpus[s / 2].copy[s % 2].min_ns = UINT64_MAX;
		area->cpus[s / 2].copy[s % 2].prio = prio;
	}
	if (!arch_plugvm_feature(PLUGVM_FEATURE_LATENCY)) {
		printk("warning: latency: the hypervisor does not read the statistics (no "
		       "plugvm latency port)\n");
		return;
	}
	reg = (struct plugvm_latency_register){ .magic = PLUGVM_LATENCY_MAGIC,
						.version = PLUGVM_LATENCY_VERSION,
						.area_gpa = (uint64_t)(uintptr_t)area,
						.area_bytes = sizeof(*area) };
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	outl(PLUGVM_PORT_LATENCY, (uint32_t)(uintptr_t)&reg);
}

int cyclic_start(void)
{
	struct plugvm_agent_workload w = { .period_us = 1000 };
	struct cpumask cpus = { 0 };
	const char *v;
	size_t len;
	unsigned prio, cpu, n = 0, own = 0;
	struct thread *me = current_thread();
	int old_prio;
	uint32_t id;
	int ret;

	if (!cmdline_flag("latency"))
		return 0;
	interval_ns = cmdline_uint("latency.interval_us", 1000) * 1000;
	prio = (unsigned)cmdline_uint("latency.prio", SCHED_PRIO_MAX);
	hist_us = (unsigned)cmdline_uint("latency.hist_us", 1000);
	threshold_ns = cmdline_uint("latency.threshold_us", 0) * 1000;
	v = cmdline_value("latency.cpus", &len);
	if (v) {
		if (!parse_cpus(v, len, &cpus))
			boot_stop_bad_word("latency.cpus", v, len,
					   "is not a list of possible CPUs below 16");
	} else {
		for (cpu = 0; cpu < nr_cpu_ids && cpu < PLUGVM_LATENCY_MAX_CPUS; cpu++)
			if (cpumask_test(&cpu_online_mask, cpu))
				cpumask_set(&cpus, cpu);
	}
	v = cmdline_value("latency.stress", &len);
	if (v && !parse_stress(v, len, &w.kind, &own))
		boot_stop_bad_word("latency.stress", v, len,
				   "is not a list of hogs, timers, ipi, locks");
	nr_hp_cpus = nr_cpu_ids < PLUGVM_LATENCY_MAX_CPUS ? nr_cpu_ids : PLUGVM_LATENCY_MAX_CPUS;
	area = page_zalloc(AREA_PAGES);
	if (!area) {
		printk("warning: latency: no memory for the statistics\n");
		return -ENOMEM;
	}
	register_area(prio);
	for (cpu = 0; cpu < PLUGVM_LATENCY_MAX_CPUS; cpu++) {
		char name[THREAD_NAME_LEN] = "cyclic/";

		if (!cpumask_test(&cpus, cpu))
			continue;
		name[7] = (char)('0' + cpu / 10 % 10);
		name[8] = (char)('0' + cpu % 10);
		area->cpus[cpu].copy[0].flags = PLUGVM_LATENCY_CPU_USED;
		area->cpus[cpu].copy[1].flags = PLUGVM_LATENCY_CPU_USED;
		if (!kthread_run_on_cpu(name, cyclic_thread, (void *)(uintptr_t)cpu, (int)prio,
					cpu)) {
			printk("warning: latency: cannot start the thread of cpu %u\n", cpu);
			return -ENOMEM;
		}
		n++;
	}
	/*
	 * The stress last, and above it while we start it: CPU-bound at priority 20 under
	 * emulation, it would keep this thread (the init thread, priority 10) from ever saying
	 * the measurement started.
	 */
	old_prio = me->base_prio;
	thread_set_prio(me, LATENCY_STARTER_PRIO);
	if (w.kind) {
		w.threads = cpumask_weight(&cpu_online_mask);
		ret = workload_start(&w, &id);
		if (ret) {
			printk("warning: latency: cannot start the stress (%d)\n", ret);
			thread_set_prio(me, old_prio);
			return ret;
		}
	}
	ret = latency_stress_start(own);
	if (ret) {
		printk("warning: latency: cannot start the stress (%d)\n", ret);
		thread_set_prio(me, old_prio);
		return ret;
	}
	__atomic_fetch_or(&area->flags, PLUGVM_LATENCY_F_STARTED, __ATOMIC_RELEASE);
	printk("latency: %u threads, interval %lu us, priority %u, histogram %u us, threshold "
	       "%lu us%s%.*s\n",
	       n, (unsigned long)(interval_ns / 1000), prio, hist_us,
	       (unsigned long)(threshold_ns / 1000), v ? ", stress " : "", v ? (int)len : 0,
	       v ? v : "");
	thread_set_prio(me, old_prio); /* after the line: below the stress it may wait long */
	return 0;
}
