/* SPDX-License-Identifier: MIT */
/*
 * Kernel threads and the scheduler: fixed priorities 0..99 (higher wins, FIFO within a
 * priority, optional round-robin), one run queue per CPU, preemption on wake-up and on
 * interrupt return, reschedule IPIs for other CPUs, migration off a CPU going down.
 *
 * A thread is pinned to one CPU or may run on any active CPU. Wake-ups choose the CPU; a
 * wake-up for another CPU is handed over lock-free (wake_list) with a reschedule IPI, and
 * that CPU enqueues it under its own run-queue lock. So run queues are strictly per-CPU.
 */
#ifndef PLUGVM_KERNEL_SCHED_H
#define PLUGVM_KERNEL_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"
#include "kernel/compiler.h"
#include "kernel/cpu.h"
#include "kernel/list.h"
#include "kernel/lockdep.h"
#include "kernel/prioq.h"
#include "plugvm_load.h"

#define SCHED_PRIO_MIN	    0
#define SCHED_PRIO_MAX	    (PRIOQ_NR_PRIO - 1)
#define THREAD_ANY_CPU	    (-1)
#define THREAD_NAME_LEN	    16
#define THREAD_STACK_SIZE   16384
#define THREAD_MAX_PI_LOCKS 8

enum thread_state {
	THREAD_NEW, /* created, not started */
	THREAD_RUNNABLE, /* running or on a run queue (or being handed to one) */
	THREAD_SLEEPING, /* going to sleep: a wake-up now cancels the sleep */
	THREAD_BLOCKED, /* asleep and off the CPU: a wake-up enqueues it */
	THREAD_PARKED, /* pinned to a CPU that is not active; resumes when it is */
	THREAD_DEAD, /* exited; waiting for thread_join() */
};

enum sched_policy {
	SCHED_FIFO, /* runs until it blocks, yields or is preempted by a higher priority */
	SCHED_RR, /* as FIFO, but gives way to equal priority after a time slice */
};

struct thread {
	struct arch_context ctx; /* saved registers while switched out */
	struct prioq_node rq; /* run-queue entry; rq.prio = effective priority */
	int state; /* enum thread_state, changed with atomics */
	int base_prio; /* priority before inheritance */
	int policy;
	int slice_left; /* SCHED_RR ticks left */
	unsigned cpu; /* the CPU it runs on, or last ran on */
	int pinned; /* CPU number or THREAD_ANY_CPU */
	int on_cpu; /* its registers live on some CPU (not yet switched out) */
	int migrate_disabled; /* RT build: nesting of migrate_disable() */
	int saved_preempt; /* preemption count it slept with (a reported bug) */
	bool is_idle;
	bool percpu; /* per-CPU kernel thread: runs on its CPU while that is online, not active */
	bool rr_expired; /* SCHED_RR slice used up: requeue at the tail */
	bool bug_expected; /* provokes BUG reports on purpose (bug_expect()) */
	bool holds_cpu; /* pinned to `pinned` and holding it (thread_hold_cpu()) */
	struct llist_node wake_node; /* on a remote CPU's wake_list */
	struct list_head park_node; /* on the parked list */
	struct list_head all_node; /* on the global thread list */
	void *stack;
	int (*fn)(void *arg);
	void *arg;
	int exit_code;
	struct thread *joiner; /* sleeping in thread_join() */
	void *pi_locks[THREAD_MAX_PI_LOCKS]; /* RT local_locks held (priority inheritance) */
	unsigned nr_pi_locks;
	struct list_head pi_node; /* on an RT local_lock's waiter list */
	uint64_t wakeup_tsc; /* when it was last made runnable */
	uint64_t switch_in_tsc; /* when it last got a CPU (for hang reports) */
	uint64_t sleep_deadline_ns; /* sleeping until then at the latest (0: no deadline) */
	uint64_t hung_reported_ns; /* the deadline the hung-task check reported it for */
	uint64_t nr_switches;
	uint64_t nr_parks; /* times it was parked (its CPU went away), under sched_parked_lock */
	struct lockdep_task lockdep; /* held-locks stack of the lock validator */
	char name[THREAD_NAME_LEN];
};

/*
 * The running thread: one %gs-relative load of this CPU's rq.curr (as Linux's
 * this_cpu_read(current_task)), so it is right even if the caller is preempted and moved
 * to another CPU just before or after it. NULL before the scheduler starts.
 */
static inline struct thread *current_thread(void)
{
	return arch_percpu_read_ptr(__builtin_offsetof(struct cpu, rq.curr));
}

/*
 * Create a thread that will run fn(arg) at `prio` (0..99) on `cpu` (THREAD_ANY_CPU: any
 * active CPU). It does not run until thread_start(). Returns NULL without memory.
 * Thread context or boot.
 */
struct thread *thread_create(const char *name, int (*fn)(void *), void *arg, int prio, int cpu);
/*
 * Yield to every runnable thread of this CPU, even lower-priority ones (a hotplug teardown
 * waiting for one to finish). Thread context.
 */
void thread_yield_to_lower(void);
/* Make a new thread runnable. */
void thread_start(struct thread *t);
/* thread_create() + thread_start(). */
struct thread *thread_run(const char *name, int (*fn)(void *), void *arg, int prio, int cpu);
/*
 * A per-CPU kernel thread bound to `cpu` (like Linux's smpboot threads): it may run there
 * from the STARTING section on (before the CPU is active) until the CPU dies, and is
 * parked while the CPU is away. Started at once (parked if `cpu` is not online yet).
 */
struct thread *kthread_run_on_cpu(const char *name, int (*fn)(void *), void *arg, int prio,
				  unsigned cpu);
/* End the calling thread with `code` (returned by thread_join()). */
__noreturn void thread_exit(int code);
/* Wait for t to exit, free it, return its exit code. One joiner per thread. Thread context. */
int thread_join(struct thread *t);
/* Let equal-priority threads run (FIFO: go to the tail of the priority). */
void thread_yield(void);
/*
 * Sleep until thread_wake(). The caller sets its state to THREAD_SLEEPING *before* it
 * checks its wake-up condition (thread_prepare_sleep), then calls thread_sleep(); a wake-up
 * in between makes thread_sleep() return at once. Thread context, preemption enabled.
 */
void thread_prepare_sleep(void);
void thread_sleep(void);
/*
 * Leave the sleep thread_prepare_sleep() began: the condition came true (before or after
 * thread_sleep() returned), so the caller is RUNNABLE again and a late wake-up finds
 * nothing to do (Linux's __set_current_state(TASK_RUNNING)). Thread context.
 */
void thread_cancel_sleep(void);
/*
 * Sleep until `cond` is true: prepare, check, sleep, and check again after every wake-up
 * (which may be spurious); whoever makes `cond` true then calls thread_wake() on us.
 * `cond` is read with the ordering it spells out (__atomic_load_n(..., ACQUIRE) for a
 * flag). Thread context, preemption enabled.
 */
#define thread_wait_until(cond)                 \
	do {                                    \
		for (;;) {                      \
			thread_prepare_sleep(); \
			if (cond)               \
				break;          \
			thread_sleep();         \
		}                               \
		thread_cancel_sleep();          \
	} while (0)
/* Wake a sleeping thread; returns false if it was not sleeping. Any context. */
bool thread_wake(struct thread *t);
/* Change the (base) priority. */
void thread_set_prio(struct thread *t, int prio);
/*
 * Set the priority t runs at now (priority inheritance). t must be the running thread or
 * wait on this CPU's run queue, or be asleep.
 */
void sched_set_effective_prio(struct thread *t, int prio);
void thread_set_policy(struct thread *t, enum sched_policy policy);
/* Pin to `cpu` or THREAD_ANY_CPU; a running thread moves at its next wake-up or yield. */
void thread_set_cpu(struct thread *t, int cpu);

/*
 * Pin the calling thread to `cpu` and hold it there: while it holds, taking `cpu` down is
 * refused with -EBUSY at its first teardown step (sched:active), before anything moves, and
 * its load latch says PLUGVM_LOAD_HELD. For real-time work that must not lose its CPU.
 * Thread context. 0; -ENODEV if `cpu` is not active (or going down); -EBUSY if the thread
 * already holds one.
 */
int thread_hold_cpu(unsigned cpu);
/* Stop holding (the thread stays pinned). A thread that exits holding releases it. */
void thread_release_cpu(void);

/* Switch to the best runnable thread of this CPU. Thread context, preemption enabled. */
void schedule(void);
/* Interrupt exit: preempt the interrupted thread if needed (interrupts off). */
void sched_irq_exit(void);
/* Timer tick: round-robin time slices. Interrupt context. */
void sched_tick(void);

/*
 * Boot: turn the running boot context into CPU 0's idle thread (run queue init included).
 */
void sched_init_boot_cpu(void);
/*
 * The scheduler's cpuhp steps (kernel/cpuhp_table.c), each returning 0 or -errno.
 * sched:prepare: `cpu`'s run queue and its idle thread on the CPU's idle stack (control
 * CPU, before the CPU runs; -ENOMEM). Its teardown frees the idle thread (control CPU,
 * after the CPU died).
 */
int sched_prepare_cpu(unsigned int cpu);
int sched_dead_cpu(unsigned int cpu);
/* sched:starting, on the arriving CPU (interrupts off): its idle context becomes current,
 * its per-CPU threads may run. */
int sched_starting_cpu(unsigned int cpu);
/* sched:starting teardown, on the dying CPU (interrupts off): stop taking even per-CPU
 * threads; park or hand over whatever is still queued. The caller (its hotplug thread)
 * stays. */
int sched_dying_cpu(unsigned int cpu);
/* Resume the per-CPU threads parked for `cpu` (which must be online). */
void sched_unpark_percpu(unsigned cpu);
/* Park the running per-CPU thread (interrupts off) until its CPU comes back; returns with
 * interrupts off, on the CPU's next life. */
void sched_park_current(void);
/* sched:active: let `cpu` take threads, and resume the threads parked for it. */
int sched_activate_cpu(unsigned int cpu);
/*
 * sched:active teardown: stop `cpu` taking threads, wait until no CPU can still be handing
 * it one, and move every movable thread it has to other active CPUs; threads pinned to it
 * are parked (not lost). Each one moved or parked counts in its sched_stats.evacuated.
 * Runs on `cpu` itself (its hotplug thread). Returns 0; -EBUSY, with nothing changed,
 * while a thread holds `cpu` (thread_hold_cpu()).
 */
int sched_deactivate_cpu(unsigned int cpu);
/*
 * The load latches (common/plugvm_load.h): from this call on, each CPU publishes its
 * figures into area[its APIC ID] (if below nr) at its update points: every tick while busy,
 * idle entry and exit, and once with ONLINE clear when it goes down. `area` stays the
 * kernel's for good (registering it with plugvm is drivers/load.c's). Once, at boot.
 */
void sched_load_set_area(struct plugvm_load_latch *area, uint32_t nr);
/* The idle loop of the calling CPU. */
__noreturn void sched_idle(void);

/* A snapshot of `cpu`'s counters (zeros for a CPU without a run queue). */
void sched_get_stats(unsigned cpu, struct sched_stats *st);
/* Print every thread: state, CPU, priorities, and a sleeping one's backtrace (diagnostics). */
void sched_dump_threads(void);

/*
 * Hung-task check: report (BUG lines) every thread blocked `bound_ns` past its sleep
 * deadline, once per deadline. Returns how many were newly reported. Thread context.
 */
unsigned sched_check_hung(uint64_t now_ns, uint64_t bound_ns);
/*
 * Soft-lockup check of the calling CPU, from its watchdog interrupt: how long (ns) a thread
 * more urgent than the running one has waited on its run queue, else 0; and the running
 * thread in *curr. Interrupts off.
 */
uint64_t sched_stuck_ns(uint64_t now_tsc, struct thread **curr);

/* Times a thread slept with preemption disabled (each also printed as a BUG line). */
extern uint64_t sched_atomic_sleep_bugs;

#endif
