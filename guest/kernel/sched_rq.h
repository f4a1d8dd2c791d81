/* SPDX-License-Identifier: MIT */
/*
 * struct rq, embedded in struct cpu. Only its own CPU ever touches a run queue's fields
 * (other CPUs hand threads over through wake_list and an IPI), which is what makes a
 * local_lock the right lock for it. The scheduler holds rq->lock with interrupts off.
 */
#ifndef PLUGVM_KERNEL_SCHED_RQ_H
#define PLUGVM_KERNEL_SCHED_RQ_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/list.h"
#include "kernel/local_lock.h"
#include "kernel/prioq.h"
#include "kernel/sched_load.h"

struct thread;

struct sched_stats {
	uint64_t switches; /* context switches */
	uint64_t preemptions; /* switches away from a runnable thread */
	uint64_t wakeups_local; /* wake-ups enqueued here by this CPU */
	uint64_t wakeups_remote; /* wake-ups handed over by another CPU (IPI) */
	uint64_t migrations_in; /* threads that arrived from another CPU */
	uint64_t migrations_out; /* threads sent away (hotplug, balancing) */
	uint64_t idle_entries; /* times the idle loop halted */
	uint64_t resched_ipis; /* reschedule IPIs received */
	uint64_t evacuated; /* threads moved away or parked when the CPU stopped being active */
};

struct rq {
	local_lock_t lock;
	/* Guarded by lock, with interrupts off: */
	struct prioq queue; /* runnable threads, not the running one */
	struct thread *curr;
	struct thread *idle;
	struct thread *last; /* switched away from; released by finish_switch() */
	struct sched_stats stats;
	uint64_t urgent_tsc; /* since when a more urgent thread waits (0: none); watchdog */
	struct sched_load load; /* busy and wait totals (sched_load.h), kept across lives */
	/* Read racily by other CPUs' wake-up placement (written by this CPU only): */
	int curr_prio; /* -1 while idle */
	unsigned nr_running; /* queued, waiting to run (the running thread is not counted) */
	bool active; /* accepts threads; cleared first when the CPU goes down */
	bool online; /* runs its own per-CPU threads (from STARTING until it dies) */
	/* Guarded by sched_hotplug.c's hold lock (read racily for the load latch's flags): */
	unsigned nr_held; /* threads holding this CPU (thread_hold_cpu()): it refuses to go */
	/* Lock-free: other CPUs push wake-ups here, this CPU drains it. */
	struct llist_head wake_list;
	/*
	 * Hand-overs between their check of `active`/`online` and their push to wake_list
	 * (sched.c push_to()); sched_deactivate_cpu() waits for none. Never reset: the struct
	 * cpu is zeroed once, and a late hand-over may still be counted when the CPU returns.
	 */
	int handing_over;
};

#endif
