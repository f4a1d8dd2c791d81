/* SPDX-License-Identifier: MIT */
/*
 * --chaos: the host behaves like a loaded machine so guest races show up in seconds. vCPU
 * threads stall before KVM_RUN, device interrupt line changes arrive late (in order), a
 * hot-added vCPU's thread starts late. Every decision comes from a PRNG stream derived from
 * one seed and the deciding thread's role and id, so a run's decisions replay with seed=N.
 */
#ifndef PLUGVM_VMM_CHAOS_H
#define PLUGVM_VMM_CHAOS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"

struct chaos;

/* splitmix64: one per deciding thread and role; never shared without a lock. */
struct chaos_stream {
	uint64_t state;
};

enum chaos_role {
	CHAOS_ROLE_STALL, /* id = vCPU id: that vCPU's thread, before each KVM_RUN */
	CHAOS_ROLE_START, /* id = vCPU id: that vCPU's thread, once per hot-add */
	CHAOS_ROLE_IRQ, /* id = GSI: the changes of that line, in order (under the chaos lock) */
};

/* Distinct GSIs with their own stream; a higher GSI shares gsi % CHAOS_NR_IRQ_STREAMS's. */
#define CHAOS_NR_IRQ_STREAMS 24 /* KVM's IOAPIC pins */
/* Line changes that may wait at once; one more flushes the queue (see chaos_irq_line()). */
#define CHAOS_IRQ_QUEUE_LEN 256

struct chaos_stats {
	uint64_t stalls, stall_us; /* vCPU stalls, and the time slept */
	uint64_t starts, start_us; /* delayed hot-added vCPU starts, and the time slept */
	uint64_t irq_delays, irq_delay_us; /* line changes given a delay, and the delays drawn */
	uint64_t irq_queued; /* line changes that went through the queue (delayed or behind one) */
	uint64_t irq_overflows; /* the queue was full: flushed at once by the caller */
};

/* Seed `s` for (seed, role, id): the same triple always yields the same sequence. Pure. */
void chaos_stream_init(struct chaos_stream *s, uint64_t seed, enum chaos_role role, uint32_t id);

/* The stream's next 64 random bits. Pure. */
uint64_t chaos_stream_next(struct chaos_stream *s);

/*
 * One decision from one draw of `s`: 0 (no delay, probability 1 - k->ppm / 10^6) or a delay
 * uniformly in 1..k->max_us microseconds. A knob that is off never fires. Pure.
 */
uint32_t chaos_draw(struct chaos_stream *s, const struct chaos_knob *k);

/*
 * Set up chaos for `cfg` (cfg->enabled) and vCPU ids below `nr_vcpus`: take cfg->seed or
 * draw one from getrandom(), print "plugvm: chaos: seed=N stall=... irq=... start=..." on
 * stderr whatever the log level (a failing run must be replayable). `inject(opaque, gsi, level)` changes a line for real and
 * returns 0 or -errno; it is called with the chaos lock held, from the injector thread or
 * a chaos_irq_line() caller. Main thread, before any vCPU runs. Returns 0 with *out set, or
 * -errno (logged).
 */
int chaos_create(struct chaos **out, const struct chaos_config *cfg, unsigned nr_vcpus,
		 int (*inject)(void *opaque, uint32_t gsi, int level), void *opaque);

/*
 * If irq delays are on, start the injector thread (in its seccomp sandbox); until then
 * delayed changes wait in the queue. Main thread, once, before any vCPU runs; NULL is fine.
 * Returns 0 or -errno (logged).
 */
int chaos_start(struct chaos *c);

/* The seed in use (given or drawn). */
uint64_t chaos_seed(const struct chaos *c);

/* True if line changes may be delayed: chaos_irq_line() must then carry every one. */
bool chaos_irq_enabled(const struct chaos *c);

/*
 * Change GSI `gsi` to `level`, at once or after a random delay; never sleeps. Once a change
 * waits, every later change (of any line) queues behind it with a deadline no earlier, so
 * the order of changes is kept: a line's raise and lower are never swapped, a later change
 * never overtakes an earlier one. A full queue is flushed in order by this caller. After
 * chaos_stop(), changes go through at once. Any thread; callers serialise the changes of
 * one line (the device's lock). Returns inject()'s result if done now, else 0.
 */
int chaos_irq_line(struct chaos *c, uint32_t gsi, int level);

/*
 * vCPU `id`'s thread, right before KVM_RUN: with the stall probability, sleep a random
 * time, as a descheduled thread would: kicks do not shorten it, only *stop does (checked
 * before and whenever a kick interrupts the sleep; a stop that lands between the check and
 * the sleep waits it out, at most the stall's maximum). c may be NULL (no chaos). vCPU
 * `id`'s thread only.
 */
void chaos_vcpu_stall(struct chaos *c, unsigned id, const atomic_bool *stop);

/*
 * A hot-added vCPU `id`'s thread, before its first KVM_RUN (its tid already published):
 * with the start probability, sleep a random time (logged at info level: "vCPU N: chaos:
 * start delayed US us (slept US us)"); *stop and c as chaos_vcpu_stall().
 */
void chaos_vcpu_start(struct chaos *c, unsigned id, const atomic_bool *stop);

/*
 * End line-change delays: queued changes are injected at once, in order (the deadlines are
 * dropped, the changes are not), the injector thread is joined, and later chaos_irq_line()
 * calls inject at once. Call once no vCPU runs. Idempotent; c may be NULL.
 */
void chaos_stop(struct chaos *c);

/* The counters so far (each read atomically, the set not as one). */
void chaos_get_stats(const struct chaos *c, struct chaos_stats *st);

/* Print the counters in one line on stderr (at warning level, without the tag). */
void chaos_report(const struct chaos *c);

/* chaos_stop(), then free everything. c may be NULL. */
void chaos_destroy(struct chaos *c);

#endif
