// SPDX-License-Identifier: MIT
/*
 * --chaos at run time: seeded stalls of vCPU threads, late hot-added vCPU starts, and
 * device interrupt line changes delayed through one FIFO whose deadlines never decrease,
 * drained by one injector thread. Order of line changes is the invariant: whatever waits,
 * everything after it waits behind it.
 */
#include "chaos.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "sandbox.h"

struct irq_change {
	uint64_t due_ns; /* CLOCK_MONOTONIC; never below the previous entry's */
	uint32_t gsi;
	int level;
};

struct chaos {
	struct chaos_config cfg; /* seed filled in */
	unsigned nr_vcpus;
	/* Per vCPU id, each used only by that vCPU's thread (one at a time: join orders them). */
	struct chaos_stream *stall_streams;
	struct chaos_stream *start_streams;
	int (*inject)(void *opaque, uint32_t gsi, int level);
	void *opaque;
	pthread_t injector;
	bool injector_started; /* main thread */

	pthread_mutex_t lock;
	/* Guarded by lock: */
	pthread_cond_t cond; /* the queue became non-empty, or stopping */
	struct chaos_stream irq_streams[CHAOS_NR_IRQ_STREAMS];
	struct irq_change queue[CHAOS_IRQ_QUEUE_LEN];
	unsigned head, count;
	uint64_t last_due_ns;
	bool stopping;
	bool inject_failed; /* logged once */

	_Atomic uint64_t stalls, stall_us, starts, start_us;
	_Atomic uint64_t irq_delays, irq_delay_us, irq_queued, irq_overflows;
};

#define GOLDEN_GAMMA 0x9e3779b97f4a7c15ull

static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void chaos_stream_init(struct chaos_stream *s, uint64_t seed, enum chaos_role role, uint32_t id)
{
	/* Hashing (role, id) first keeps streams of neighbouring seeds unrelated. */
	s->state = mix64(seed ^ mix64(((uint64_t)role << 32 | id) + GOLDEN_GAMMA));
}

uint64_t chaos_stream_next(struct chaos_stream *s)
{
	s->state += GOLDEN_GAMMA;
	return mix64(s->state);
}

uint32_t chaos_draw(struct chaos_stream *s, const struct chaos_knob *k)
{
	uint64_t r;

	if (!k->ppm || !k->max_us)
		return 0;
	r = chaos_stream_next(s);
	/* High half: the coin (multiply-shift onto 0..10^6-1); low half: the delay. */
	if (((r >> 32) * CONFIG_CHAOS_PPM) >> 32 >= k->ppm)
		return 0;
	return (uint32_t)(((r & 0xffffffffull) * k->max_us) >> 32) + 1;
}

static struct timespec ns_to_timespec(uint64_t ns)
{
	return (struct timespec){ .tv_sec = (time_t)(ns / 1000000000ull),
				  .tv_nsec = (long)(ns % 1000000000ull) };
}

/* Caller holds c->lock. */
static int inject_locked(struct chaos *c, uint32_t gsi, int level)
{
	int ret = c->inject(c->opaque, gsi, level);

	if (ret && !c->inject_failed) {
		c->inject_failed = true;
		log_error("chaos: GSI %u to %d: %s (further failures not logged)", gsi, level,
			  strerror(-ret));
	}
	return ret;
}

/* Inject every queued change, in order, now. Caller holds c->lock. */
static void flush_locked(struct chaos *c)
{
	for (; c->count; c->count--) {
		const struct irq_change *ch = &c->queue[c->head];

		inject_locked(c, ch->gsi, ch->level);
		c->head = (c->head + 1) % CHAOS_IRQ_QUEUE_LEN;
	}
	c->last_due_ns = 0; /* nothing waits: the next deadline may be anything */
}

static void *injector_thread(void *arg)
{
	struct chaos *c = arg;

	/* Named "chaos-irq" by sandbox_start_thread(). */
	pthread_mutex_lock(&c->lock);
	while (!c->stopping) {
		struct irq_change *ch = &c->queue[c->head];
		struct timespec due;

		if (!c->count) {
			pthread_cond_wait(&c->cond, &c->lock);
			continue;
		}
		/* New entries join the tail no earlier than the head: only the head matters. */
		if (ch->due_ns > clock_now_ns()) {
			due = ns_to_timespec(ch->due_ns);
			pthread_cond_timedwait(&c->cond, &c->lock, &due);
			continue;
		}
		inject_locked(c, ch->gsi, ch->level);
		c->head = (c->head + 1) % CHAOS_IRQ_QUEUE_LEN;
		c->count--;
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int chaos_irq_line(struct chaos *c, uint32_t gsi, int level)
{
	struct irq_change *ch;
	uint64_t now, due;
	uint32_t us;
	int ret = 0;

	pthread_mutex_lock(&c->lock);
	if (c->stopping) {
		ret = inject_locked(c, gsi, level);
		goto out;
	}
	us = chaos_draw(&c->irq_streams[gsi % CHAOS_NR_IRQ_STREAMS], &c->cfg.irq);
	if (c->count == CHAOS_IRQ_QUEUE_LEN) {
		/* Full: never sleep, never reorder; deliver the backlog now instead. */
		flush_locked(c);
		atomic_fetch_add(&c->irq_overflows, 1);
	}
	if (!us && !c->count) {
		ret = inject_locked(c, gsi, level);
		goto out;
	}
	now = clock_now_ns();
	due = now + (uint64_t)us * 1000;
	if (due < c->last_due_ns)
		due = c->last_due_ns;
	c->last_due_ns = due;
	ch = &c->queue[(c->head + c->count) % CHAOS_IRQ_QUEUE_LEN];
	*ch = (struct irq_change){ .due_ns = due, .gsi = gsi, .level = level };
	if (!c->count++)
		pthread_cond_signal(&c->cond);
	atomic_fetch_add(&c->irq_queued, 1);
	if (us) {
		atomic_fetch_add(&c->irq_delays, 1);
		atomic_fetch_add(&c->irq_delay_us, us);
	}
out:
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/* Sleep `us` unless *stop is or becomes set. Returns the microseconds slept. */
static uint64_t sleep_unless_stopped(uint32_t us, const atomic_bool *stop)
{
	uint64_t start = clock_now_ns();
	struct timespec until = ns_to_timespec(start + (uint64_t)us * 1000);

	/* A kick (vcpu.c's signal, no SA_RESTART) interrupts the sleep: resume unless a stop. */
	while (!atomic_load(stop) &&
	       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
	return (clock_now_ns() - start) / 1000;
}

/* vCPU `id`'s draw from its stream of `streams` for `knob`: 0 when there is no delay. */
static uint32_t vcpu_draw(struct chaos *c, unsigned id, struct chaos_stream *streams,
			  const struct chaos_knob *knob, const atomic_bool *stop)
{
	uint32_t us;

	if (id >= c->nr_vcpus)
		return 0;
	us = chaos_draw(&streams[id], knob);
	return atomic_load(stop) ? 0 : us;
}

void chaos_vcpu_stall(struct chaos *c, unsigned id, const atomic_bool *stop)
{
	uint32_t us = c ? vcpu_draw(c, id, c->stall_streams, &c->cfg.stall, stop) : 0;

	if (!us)
		return;
	atomic_fetch_add(&c->stalls, 1);
	atomic_fetch_add(&c->stall_us, sleep_unless_stopped(us, stop));
}

void chaos_vcpu_start(struct chaos *c, unsigned id, const atomic_bool *stop)
{
	uint32_t us = c ? vcpu_draw(c, id, c->start_streams, &c->cfg.start, stop) : 0;
	uint64_t slept;

	if (!us)
		return;
	slept = sleep_unless_stopped(us, stop);
	atomic_fetch_add(&c->starts, 1);
	atomic_fetch_add(&c->start_us, slept);
	/* The drawn value, which the seed replays; the sleep is the host's. */
	log_info("vCPU %u: chaos: start delayed %u us (slept %llu us)", id, us,
		 (unsigned long long)slept);
}

static uint64_t draw_seed(void)
{
	uint64_t seed;

	if (getrandom(&seed, sizeof(seed), 0) == (ssize_t)sizeof(seed))
		return seed;
	/* No entropy source: any seed will do, it is printed either way. */
	return mix64(clock_now_ns() ^ ((uint64_t)getpid() << 32));
}

int chaos_create(struct chaos **out, const struct chaos_config *cfg, unsigned nr_vcpus,
		 int (*inject)(void *opaque, uint32_t gsi, int level), void *opaque)
{
	pthread_condattr_t attr;
	struct chaos *c;
	char spec[160];
	unsigned i;

	c = calloc(1, sizeof(*c));
	if (!c)
		goto nomem;
	c->stall_streams = calloc(nr_vcpus, sizeof(*c->stall_streams));
	c->start_streams = calloc(nr_vcpus, sizeof(*c->start_streams));
	if (!c->stall_streams || !c->start_streams)
		goto nomem;
	c->cfg = *cfg;
	if (!c->cfg.seed_given)
		c->cfg.seed = draw_seed();
	c->nr_vcpus = nr_vcpus;
	c->inject = inject;
	c->opaque = opaque;
	for (i = 0; i < nr_vcpus; i++) {
		chaos_stream_init(&c->stall_streams[i], c->cfg.seed, CHAOS_ROLE_STALL, i);
		chaos_stream_init(&c->start_streams[i], c->cfg.seed, CHAOS_ROLE_START, i);
	}
	for (i = 0; i < CHAOS_NR_IRQ_STREAMS; i++)
		chaos_stream_init(&c->irq_streams[i], c->cfg.seed, CHAOS_ROLE_IRQ, i);
	pthread_mutex_init(&c->lock, NULL);
	/* Deadlines are CLOCK_MONOTONIC: wall-clock steps must not move them. */
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cond, &attr);
	pthread_condattr_destroy(&attr);

	config_format_chaos(&c->cfg, spec, sizeof(spec));
	/* Not an error, but printed at every log level: the seed replays a failing run. */
	log_error("chaos: %s", spec);
	*out = c;
	return 0;
nomem:
	log_error("chaos: out of memory");
	if (c) {
		free(c->stall_streams);
		free(c->start_streams);
		free(c);
	}
	return -ENOMEM;
}

int chaos_start(struct chaos *c)
{
	int err;

	if (!c || !chaos_irq_enabled(c) || c->injector_started)
		return 0;
	err = sandbox_start_thread(&c->injector, SANDBOX_CHAOS_IRQ, injector_thread, c);
	if (err)
		return err;
	c->injector_started = true;
	return 0;
}

uint64_t chaos_seed(const struct chaos *c)
{
	return c->cfg.seed;
}

bool chaos_irq_enabled(const struct chaos *c)
{
	return c->cfg.irq.ppm && c->cfg.irq.max_us;
}

void chaos_stop(struct chaos *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stopping = true;
	flush_locked(c);
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	if (c->injector_started) {
		pthread_join(c->injector, NULL);
		c->injector_started = false;
	}
}

void chaos_get_stats(const struct chaos *c, struct chaos_stats *st)
{
	*st = (struct chaos_stats){
		.stalls = atomic_load(&c->stalls),
		.stall_us = atomic_load(&c->stall_us),
		.starts = atomic_load(&c->starts),
		.start_us = atomic_load(&c->start_us),
		.irq_delays = atomic_load(&c->irq_delays),
		.irq_delay_us = atomic_load(&c->irq_delay_us),
		.irq_queued = atomic_load(&c->irq_queued),
		.irq_overflows = atomic_load(&c->irq_overflows),
	};
}

void chaos_report(const struct chaos *c)
{
	struct chaos_stats st;

	if (!c || log_get_level() < LOG_WARN)
		return;
	chaos_get_stats(c, &st);
	/* log_error() for the untagged line; -q (errors only) silences it above. */
	log_error("chaos: seed=%llu: %llu stalls (%.1f ms), %llu irq delays (%.1f ms; %llu "
		  "changes queued, %llu overflows), %llu start delays (%.1f ms)",
		  (unsigned long long)c->cfg.seed, (unsigned long long)st.stalls,
		  (double)st.stall_us / 1000, (unsigned long long)st.irq_delays,
		  (double)st.irq_delay_us / 1000, (unsigned long long)st.irq_queued,
		  (unsigned long long)st.irq_overflows, (unsigned long long)st.starts,
		  (double)st.start_us / 1000);
}

void chaos_destroy(struct chaos *c)
{
	if (!c)
		return;
	chaos_stop(c);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
	free(c->stall_streams);
	free(c->start_streams);
	free(c);
}
