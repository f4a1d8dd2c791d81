/* SPDX-License-Identifier: MIT */
/*
 * The ready queue of one CPU: a FIFO list per fixed priority (0..99, higher wins) and a
 * bitmap of non-empty priorities, so enqueue, dequeue and pick are O(1). Pure data
 * structure: the scheduler holds the run queue's lock (irqs off) around every call.
 */
#ifndef PLUGVM_KERNEL_RQ_H
#define PLUGVM_KERNEL_RQ_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/list.h"

#define SCHED_PRIO_MIN 0
#define SCHED_PRIO_MAX 99
#define SCHED_NR_PRIO  (SCHED_PRIO_MAX + 1)

/* The part of a thread the ready queue knows. */
struct rq_entity {
	struct list_head node; /* on lists[prio] while queued */
	int prio; /* effective priority; change only while not queued */
	bool queued;
};

struct rq_queue {
	uint64_t bitmap[(SCHED_NR_PRIO + 63) / 64];
	struct list_head lists[SCHED_NR_PRIO];
	unsigned nr;
};

void rqq_init(struct rq_queue *q);
void rqq_entity_init(struct rq_entity *e, int prio);

/* Queue e at the tail of its priority (at the head if `head`: a preempted thread resumes first). */
void rqq_enqueue(struct rq_queue *q, struct rq_entity *e, bool head);
/* Remove a queued e. */
void rqq_dequeue(struct rq_queue *q, struct rq_entity *e);
/* The next entity to run (highest priority, first in FIFO order), or NULL; not removed. */
struct rq_entity *rqq_peek(const struct rq_queue *q);
/* Highest queued priority, or -1 when empty. */
int rqq_top_prio(const struct rq_queue *q);

#endif
