/* SPDX-License-Identifier: MIT */
/*
 * High-resolution timers: per-CPU ordered queues (kernel/timerqueue) of nanosecond
 * deadlines; the CPU's clock event (LAPIC timer) is always programmed for the earliest one.
 * Callbacks run in hard-interrupt context with interrupts off and must be short. The
 * periodic tick, precise sleeps and latency measurement are built on them.
 *
 * Locking: a CPU's queue is touched only by that CPU, with interrupts off, under its
 * local_lock; operations on a timer queued on another CPU go there by IPI.
 */
#ifndef PLUGVM_KERNEL_HRTIMER_H
#define PLUGVM_KERNEL_HRTIMER_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/local_lock.h"
#include "kernel/timerqueue.h"

enum hrtimer_restart {
	HRTIMER_NORESTART,
	HRTIMER_RESTART, /* the callback moved expires forward: queue it again */
};

enum hrtimer_mode {
	HRTIMER_ABS, /* expires is ns since boot */
	HRTIMER_REL, /* expires is ns from now */
};

struct hrtimer {
	struct tq_node node; /* node.expires: ns since boot */
	enum hrtimer_restart (*fn)(struct hrtimer *t);
	int cpu; /* the CPU whose queue holds it, -1 while not queued */
	int running_on; /* the CPU running its callback, -1 if none */
	bool cancelled; /* cancelled from its own callback: do not restart */
};

struct hrtimer_stats {
	uint64_t started;
	uint64_t cancelled;
	uint64_t expired;
	uint64_t interrupts; /* clock-event interrupts taken */
	uint64_t reprograms; /* clock-event writes */
	uint64_t lateness_max_ns; /* expiry handling minus expires (interrupt latency) */
};

struct hrtimer_base {
	local_lock_t lock;
	/* Guarded by lock, interrupts off: */
	struct timerqueue queue;
	struct hrtimer *running; /* callback in progress */
	uint64_t programmed_ns; /* clock event set for this time; UINT64_MAX: off */
	bool in_interrupt; /* expiry loop running: it programs at the end */
	bool nohz_suppress_tick; /* tickless idle: the tick is not programmed */
	struct hrtimer_stats stats;
};

/* Prepare t; fn runs on expiry in interrupt context. */
void hrtimer_init(struct hrtimer *t, enum hrtimer_restart (*fn)(struct hrtimer *));
/*
 * (Re)start t on this CPU to expire at `ns` (absolute or relative). If it was queued,
 * possibly on another CPU, it is removed there first. Any context.
 */
void hrtimer_start(struct hrtimer *t, uint64_t ns, enum hrtimer_mode mode);
/*
 * Stop t. Returns true if it was queued. If its callback is running on another CPU, waits
 * for it to finish; from its own callback, only prevents a restart. Any context but the
 * callback of another hrtimer on the CPU that holds t.
 */
bool hrtimer_cancel(struct hrtimer *t);
bool hrtimer_queued(const struct hrtimer *t);
/* For a periodic callback: move expires forward by whole intervals until it is after now. */
uint64_t hrtimer_forward(struct hrtimer *t, uint64_t now, uint64_t interval);

/* The clock-event interrupt of this CPU: run what expired, program the next. */
void hrtimer_interrupt(void);
/* Print every CPU's queue head, programmed deadline and flags (diagnostics, racy). */
void hrtimer_dump_bases(void);
/* Earliest expiry on this CPU's queue other than `except` (UINT64_MAX if none). */
uint64_t hrtimer_next_expiry_except(const struct hrtimer *except);

/* Sleep until ns since boot / for ns. Thread context. */
void sleep_until(uint64_t ns);
void sleep_ns(uint64_t ns);

/* Hotplug: init this CPU's base (PREPARE); move a dead CPU's timers here (control CPU). */
void hrtimers_prepare_cpu(unsigned cpu);
unsigned hrtimers_dead_cpu(unsigned cpu);
void hrtimer_get_stats(unsigned cpu, struct hrtimer_stats *st);
/*
 * The time `cpu`'s base last programmed its clock event for (UINT64_MAX: off, or the
 * interrupt came and its expiry loop runs or ran since). A racy read of another CPU's
 * base, for the watchdog; any context.
 */
uint64_t hrtimer_programmed_ns(unsigned cpu);

#endif
