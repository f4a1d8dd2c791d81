/* SPDX-License-Identifier: MIT */
/*
 * What the scheduler's files share, not for the rest of the kernel (it uses sched.h):
 * kernel/sched.c (run queues, placement, the switch, sleeping and waking), thread.c (a
 * thread's life), sched_hotplug.c (the run queues of CPUs that come and go) and
 * sched_debug.c (diagnostics). The locking rules are sched.c's.
 */
#ifndef PLUGVM_KERNEL_SCHED_INTERNAL_H
#define PLUGVM_KERNEL_SCHED_INTERNAL_H

#include "kernel/cpu.h"
#include "kernel/local_lock.h"
#include "kernel/sched.h"
#include "kernel/spinlock.h"

enum sched_mode {
	SCHED_MODE_SLEEP, /* voluntary: sleep, exit, or plain schedule() */
	SCHED_MODE_YIELD, /* voluntary: to the tail of the priority */
	SCHED_MODE_PREEMPT, /* involuntary: stays at the head of its priority */
};

#define RR_SLICE_TICKS 10

/* Threads waiting for a CPU that takes them (pinned to one that is away, say). */
extern struct spinlock sched_parked_lock;
extern struct list_head sched_parked; /* guarded by sched_parked_lock */
/* Every thread from creation to join, for sched_dump_threads() and the hung-task check. */
extern struct spinlock sched_threads_lock;
extern struct list_head sched_threads; /* guarded by sched_threads_lock */

static inline struct rq *this_rq(void)
{
	return &this_cpu()->rq;
}

static inline struct rq *cpu_rq(unsigned cpu)
{
	struct cpu *c = cpu < NR_CPUS ? READ_ONCE(cpu_table[cpu]) : NULL;

	return c ? &c->rq : NULL;
}

static inline bool cpu_active(unsigned cpu)
{
	struct rq *rq = cpu_rq(cpu);

	return rq && __atomic_load_n(&rq->active, __ATOMIC_ACQUIRE);
}

/* Would `cpu` take t now? Per-CPU threads from STARTING on, all others once active. */
static inline bool cpu_takes(const struct thread *t, unsigned cpu)
{
	struct rq *rq = cpu_rq(cpu);

	if (!rq)
		return false;
	if (t->percpu && t->pinned == (int)cpu)
		return __atomic_load_n(&rq->online, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&rq->active, __ATOMIC_ACQUIRE);
}

/* Interrupts off, then the run-queue lock. */
static inline struct rq *rq_lock_irqsave(unsigned long *flags)
{
	struct rq *rq;

	*flags = arch_irq_save();
	rq = this_rq();
	local_lock_irqs_off(&rq->lock);
	return rq;
}

static inline void rq_unlock_irqrestore(struct rq *rq, unsigned long flags)
{
	local_unlock_irqs_off(&rq->lock);
	arch_irq_restore(flags);
	preempt_check_resched();
}

static inline void set_need_resched(void)
{
	this_cpu()->need_resched = 1;
}

/* ---- run-queue bookkeeping (rq lock held, interrupts off) ------------------------------ */

static inline void rq_update_curr(struct rq *rq)
{
	WRITE_ONCE(rq->curr_prio, rq->curr->is_idle ? -1 : rq->curr->rq.prio);
}

static inline void rq_enqueue(struct rq *rq, struct thread *t, bool head)
{
	prioq_add(&rq->queue, &t->rq, head);
	WRITE_ONCE(rq->nr_running, rq->nr_running + 1);
}

static inline void rq_dequeue(struct rq *rq, struct thread *t)
{
	prioq_del(&rq->queue, &t->rq);
	WRITE_ONCE(rq->nr_running, rq->nr_running - 1);
}

/* ---- the load latches (sched_load.h; interrupts off, on the CPU itself) ------------------ */

/* Set once by sched_load_set_area(): nr first, then the area (release). */
extern struct plugvm_load_latch *sched_load_area;
extern uint32_t sched_load_nr;

/* Publish this CPU's figures into its latch, if the area is set and has its APIC ID. */
static inline void rq_load_publish(struct rq *rq)
{
	struct plugvm_load_latch *area = __atomic_load_n(&sched_load_area, __ATOMIC_ACQUIRE);
	uint32_t apic_id = this_cpu()->apic_id;

	if (area && apic_id < sched_load_nr)
		sched_load_publish(&area[apic_id], &rq->load,
				   READ_ONCE(rq->nr_held) ? PLUGVM_LOAD_HELD : 0);
	sched_load_published(&rq->load);
}

/*
 * An update point of this CPU's load: account up to now with `idle` and the run queue's
 * count from here on, and publish when the idle state changed or, on a busy `tick`, when
 * SCHED_LOAD_TICK_PUBLISH_NS passed since the last publish. Nothing once the CPU stopped
 * (sched_load_stop()).
 */
static inline void rq_load_update(struct rq *rq, bool idle, bool tick)
{
	if (!rq->load.online)
		return;
	/* The running thread is not in the queue (nr_running counts the queue). */
	uint32_t runnable = rq->nr_running + (idle || rq->curr->is_idle ? 0u : 1u);

	if (sched_load_account(&rq->load, arch_now_ns(), idle, runnable) ||
	    (tick && sched_load_tick_due(&rq->load)))
		rq_load_publish(rq);
}

/* Take the wake-ups other CPUs handed us. */
void rq_drain_wake_list(struct rq *rq);

/* ---- placement (interrupts off) --------------------------------------------------------- */

/* Put t on the parked list (state PARKED) until a CPU takes it. */
void sched_park(struct thread *t);
/* The CPU for t about to become runnable (a hint: read racily, corrected by preemption). */
unsigned sched_select_cpu(const struct thread *t);
/* Give a RUNNABLE thread to `cpu` (maybe this one), or park it if nobody takes it. */
void sched_hand_over(struct thread *t, unsigned cpu);
/* VEC_RESCHEDULE: take what other CPUs handed over. */
void sched_resched_ipi(unsigned vector, void *arg);

/* ---- the switch ------------------------------------------------------------------------- */

/* Switch to the best runnable thread of this CPU (mode: why the running one leaves). */
void __schedule(enum sched_mode mode);
/* The resumed (or new) thread's half of a switch: release the one switched away from. */
void sched_finish_switch(void);

#endif
