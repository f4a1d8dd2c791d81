/* SPDX-License-Identifier: MIT */
/*
 * Each CPU's load as plugvm reads it (common/plugvm_load.h): running totals of busy time
 * (not running the idle thread) and of wait time (at least one runnable thread waiting on
 * this CPU's queue: nr_running >= 2, Linux PSI's per-CPU "some"), kept by the CPU itself at
 * its update points (scheduler tick while busy, idle entry and exit, coming and going) and
 * published into its latch. Pure: no locks, no clock of its own (tests/unit/test_sched_load.c).
 */
#ifndef PLUGVM_KERNEL_SCHED_LOAD_H
#define PLUGVM_KERNEL_SCHED_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "plugvm_load.h"

/* One CPU's accumulators; written only by that CPU, interrupts off. Zeroed once, at boot. */
struct sched_load {
	uint64_t last_ns; /* the previous update */
	uint64_t published_ns; /* last_ns when it was last published (sched_load_published()) */
	uint64_t busy_ns; /* total busy time up to last_ns */
	uint64_t wait_ns; /* total wait time up to last_ns */
	uint32_t nr_running; /* as the previous update saw it */
	bool idle; /* idle since the previous update */
	bool online; /* between sched_load_start() and sched_load_stop() */
};

/*
 * The CPU starts (again) at now_ns, busy: the time it was away counts as neither busy nor
 * waited. Totals carry on from its previous life.
 */
void sched_load_start(struct sched_load *l, uint64_t now_ns);
/* The CPU stops at now_ns: the interval since the last update is accounted, then offline. */
void sched_load_stop(struct sched_load *l, uint64_t now_ns);
/*
 * An update point: [last_ns, now_ns) is accounted as the previous update saw the CPU (busy
 * unless it was idle; waited if it was busy with nr_running >= 2), then `idle` and
 * `nr_running` hold from now on. A clock that went backwards accounts nothing. Returns
 * true when the idle state changed (the caller publishes then, and on ticks).
 */
bool sched_load_account(struct sched_load *l, uint64_t now_ns, bool idle, uint32_t nr_running);
/*
 * Busy ticks publish at most every SCHED_LOAD_TICK_PUBLISH_NS (plugvm samples at most every
 * 10 ms, AUTOSCALE_PERIOD_MIN_MS): the latch then lags the CPU's busy time by at most that
 * and a tick, not by a tick, and a busy CPU writes it ~10 times fewer (HZ 1000).
 */
#define SCHED_LOAD_TICK_PUBLISH_NS 10000000ull
/* A busy tick at l's last update should publish (test_sched_load.c). */
bool sched_load_tick_due(const struct sched_load *l);
/* What is in the latch now is l's state at its last update. */
void sched_load_published(struct sched_load *l);

/*
 * Write l's figures and `flags` (PLUGVM_LOAD_HELD; ONLINE is l's) into `latch`, as its
 * only writer, by the header's protocol: seq odd, copy[0], seq even, copy[1]. Plain
 * stores ordered by release fences (a reader on another CPU checks seq around its copy).
 */
void sched_load_publish(struct plugvm_load_latch *latch, const struct sched_load *l,
			uint32_t flags);

#endif
