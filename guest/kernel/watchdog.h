/* SPDX-License-Identifier: MIT */
/*
 * Lockup and hang detectors, after Linux's softlockup/hardlockup watchdogs and khungtaskd.
 * A hang becomes a diagnosis: a `BUG:` line naming what is stuck, then every thread's
 * state and backtrace and every CPU's hrtimer queue (the console's `threads` dump).
 *
 *  - Heartbeat: every online CPU runs a 1 s hrtimer (state watchdog:online). In it the CPU
 *    checks itself for a soft lockup (a higher-priority thread has waited while the CPU did
 *    not schedule, or it ran one thread with neither a tick nor an idle entry) and its buddy,
 *    the next CPU with a heartbeat, for a hard lockup (no heartbeat: interrupts off, or its
 *    clock event stopped), and the buddy's clock event: a deadline its hrtimer base
 *    programmed that passed a bound ago with no timer interrupt since.
 *  - Hung tasks: a thread on CPU 0 checks once a second every thread that sleeps with a
 *    deadline (sleep_until(), a timed completion wait) and is still blocked the bound past
 *    it: a lost wake-up. And every watched operation (watchdog_op_begin()) past its bound.
 *
 * Every incident is reported once. The bound is `watchdog.bound_s=` (default 10 s; 0
 * turns the detectors off).
 */
#ifndef PLUGVM_KERNEL_WATCHDOG_H
#define PLUGVM_KERNEL_WATCHDOG_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/list.h"

/* An operation that must finish within a bound (e.g. a CPU removal reaching eject). */
struct watchdog_op {
	const char *fmt; /* formatted with arg[] only when reported */
	long arg[2];
	uint64_t start_ns, bound_ns;
	bool active, reported;
	bool expected; /* begun by a thread that provokes reports on purpose */
	struct list_head node;
};

/* Boot CPU, once, after the scheduler and timers: read the bound, start the hung-task thread. */
void watchdog_init(void);
/* cpuhp watchdog:online / teardown: start or stop the calling CPU's heartbeat (its thread). */
int watchdog_online_cpu(unsigned cpu);
int watchdog_offline_cpu(unsigned cpu);

/*
 * Watch `op` from now: if watchdog_op_end() has not come within bound_ns (0: the watchdog
 * bound), report it with the thread dump. `op` and `fmt` stay valid until watchdog_op_end().
 * `fmt` takes at most two long arguments (%ld), `a0` and `a1`: it is formatted only when
 * reported, not at every begin (vsnprintf is long in emulated code on kvm_pvm, and begin is
 * on every CPU hotplug's path). Any context; an op already active is left as it is.
 */
void watchdog_op_begin(struct watchdog_op *op, uint64_t bound_ns, const char *fmt, long a0,
		       long a1);
void watchdog_op_end(struct watchdog_op *op);
/*
 * Report (a BUG: line each, once) every watched operation older than its bound (0: `bound`)
 * at `now`; an operation begun after `now` is not overdue. Returns how many. The hung-task
 * thread's check, callable by a self-test.
 */
unsigned watchdog_check_ops(uint64_t now, uint64_t bound);

/* The bound in ns (0: off). Self-tests of the detectors may lower it for a while. */
uint64_t watchdog_bound_ns(void);
void watchdog_set_bound_ns(uint64_t ns);

/* Incidents reported since boot. */
uint64_t watchdog_reports(void);

#endif
