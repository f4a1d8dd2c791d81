/* SPDX-License-Identifier: MIT */
/*
 * Timer-wheel timers (jiffy resolution) and the tick. The wheel itself, with the design
 * notes and the level/granularity table for HZ=1000, is kernel/timer_wheel.h; this is the
 * per-CPU glue around it:
 *
 *  - each CPU has two wheels, standard and deferrable (deferrable timers never wake an
 *    idle CPU; they run with the next non-deferrable activity), each behind the CPU's
 *    timer local_lock, held only around wheel operations, never around callbacks;
 *  - the tick (an hrtimer, HZ per second) advances jiffies and, when a wheel has work
 *    due, raises the timer "softirq": in the default build it runs at interrupt exit with
 *    interrupts on (preemption off); in the RT build it runs in a per-CPU timer thread, so
 *    callbacks are preemptible and may take sleeping local_locks;
 *  - an idle CPU stops its tick when nothing is due for more than a tick and programs its
 *    clock event for the next hrtimer or (non-deferrable) wheel expiry, catching jiffies up
 *    when it wakes;
 *  - timers are queued on the CPU that arms them; operations on a timer pending on another
 *    CPU are carried out by that CPU (IPI in the default build, its timer thread in RT);
 *  - when a CPU dies, its pending timers move to the control CPU, expiries unchanged.
 */
#ifndef PLUGVM_KERNEL_TIMER_H
#define PLUGVM_KERNEL_TIMER_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/hrtimer.h"
#include "kernel/spinlock.h"
#include "kernel/list.h"
#include "kernel/local_lock.h"
#include "kernel/timer_wheel.h"

/* timer_list flags (the glue's bits of wheel_timer.flags). */
#define TIMER_CPUMASK	 0x0000ffffu /* CPU whose wheel holds it */
#define TIMER_DEFERRABLE 0x00010000u
#define TIMER_PINNED	 0x00020000u /* stays on the CPU it was added on (add_timer_on) */
#define TIMER_USER_FLAGS (TIMER_DEFERRABLE | TIMER_PINNED)

struct timer_list {
	struct wheel_timer wt;
	void (*fn)(struct timer_list *t);
	/*
	 * The CPU that last took it off its wheel to run the callback (-1: never). Whether the
	 * callback still runs there is that CPU's base->running. Written before the timer
	 * leaves the wheel, never after the callback (which may free it).
	 */
	int last_cpu;
};

/* jiffies since boot; HZ is a boot setting (hz=, default 1000). */
extern uint64_t jiffies;
extern unsigned HZ;
uint64_t ns_to_jiffies(uint64_t ns);
uint64_t jiffies_to_ns(uint64_t j);

/* Prepare t with callback fn and TIMER_DEFERRABLE / TIMER_PINNED. */
void timer_setup(struct timer_list *t, void (*fn)(struct timer_list *t), unsigned flags);
/* Queue idle t to fire no earlier than jiffy `expires`, on this CPU. */
void timer_add(struct timer_list *t, uint64_t expires);
/* Queue idle t on `cpu` (pinned there). Returns -ENODEV if that CPU is not online. */
int timer_add_on(struct timer_list *t, uint64_t expires, unsigned cpu);
/*
 * (Re)arm t for `expires`; cheap when it stays in its bucket. A pending timer is re-armed
 * where it is; an idle one goes to this CPU. Returns whether it was pending.
 */
bool mod_timer(struct timer_list *t, uint64_t expires);
/* Remove t; returns whether it was pending. Its callback may still be running elsewhere. */
bool timer_delete(struct timer_list *t);
/* As timer_delete(), and wait for a running callback to finish. Thread context. */
bool timer_delete_sync(struct timer_list *t);
bool timer_pending(const struct timer_list *t);
/* Fault injection for selftests: ns each wheel timer waits between leaving the wheel and its
 * callback (0, the default, for none). */
extern uint64_t timer_expiry_delay_ns;
/* Fault injection for selftests: ns each idle-loop pass spends before stopping the tick. */
extern uint64_t tick_idle_delay_ns;

/* Per-CPU timer base (in struct cpu). */
struct timer_cpu_stats {
	uint64_t ticks; /* tick interrupts */
	uint64_t idle_tick_stops; /* times the idle loop stopped the tick */
	uint64_t softirqs; /* expiry passes */
	uint64_t callbacks; /* wheel callbacks run */
	uint64_t remote_ops; /* operations carried out for another CPU */
	uint64_t migrated_in; /* timers received from dead CPUs */
};

struct timer_base {
	local_lock_t lock;
	/* Guarded by lock: */
	struct timer_wheel wheel[2]; /* [0] standard, [1] deferrable */
	struct wheel_list expired; /* collected, not yet run */
	struct timer_list *running; /* callback in progress */
	/* This CPU only: */
	struct hrtimer tick;
	bool tick_stopped; /* tickless idle */
	bool online; /* clock event started */
	int softirq_pending;
	struct thread *thread; /* RT build: runs expiry and remote requests */
	struct llist_head requests; /* RT build: work for `thread` from other CPUs */
	struct spinlock req_lock; /* RT build: guards req_open against queuing */
	/* RT build: requests accepted and expiry run (timers:online up to its teardown) */
	bool req_open;
	int busy; /* RT build: the timer thread holds requests it took, or runs callbacks */
	bool req_lock_ready;
	struct timer_cpu_stats stats;
};

/* Interrupt exit, default build: run the timer softirq if raised (interrupts off). */
void timer_softirq_irq_exit(void);

/*
 * Idle loop hooks (interrupts off): before each halt, stop the tick if nothing is due within
 * one (or re-aim the stopped tick at the wheel's next expiry); on leaving idle to run a
 * thread, restart it.
 */
void tick_idle_enter(void);
void tick_idle_exit(void);

/* Boot, once: HZ from the command line, the clock-event interrupt handler. */
void time_init(void);
/*
 * The timers' cpuhp steps (kernel/cpuhp_table.c), each returning 0 or -errno.
 * timers:prepare: `cpu`'s bases (control CPU); its teardown moves every timer of the dead
 * `cpu` here, expiries kept (control CPU, after the death).
 * tick:starting: start the CPU's clock event and tick; its teardown stops them (on that
 * CPU, interrupts off; the boot CPU starts its own in kernel_main()).
 * timers:online: (RT) the timer thread, and requests from other CPUs accepted (thread
 * context on the CPU; -ENOMEM); its teardown stops taking requests and carries out those
 * already queued (the dying CPU's hotplug thread).
 */
int timers_prepare_cpu(unsigned int cpu);
int timers_dead_cpu(unsigned int cpu);
int tick_starting_cpu(unsigned int cpu);
int tick_dying_cpu(unsigned int cpu);
int timers_online_cpu(unsigned int cpu);
int timers_offline_cpu(unsigned int cpu);
/* Woken after every timers_dead_cpu(): who found a timer's CPU gone waits here. */
struct waitqueue;
extern struct waitqueue timers_migrate_wq;

/* Statistics of `cpu`: per-level wheel counters (both wheels summed) and the base's. */
void timer_get_stats(unsigned cpu, struct wheel_stats *wheel, struct timer_cpu_stats *base);

#endif
