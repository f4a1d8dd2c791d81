/* SPDX-License-Identifier: MIT */
/*
 * A priority queue of fixed priorities: a FIFO list per priority (0..99, higher first) and
 * a bitmap of non-empty priorities, so add, delete and peek are O(1). It is each run
 * queue's set of ready threads (kernel/sched_rq.h). Pure data structure: the scheduler
 * holds the run queue's lock (interrupts off) around every call.
 */
#ifndef PLUGVM_KERNEL_PRIOQ_H
#define PLUGVM_KERNEL_PRIOQ_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/list.h"

#define PRIOQ_NR_PRIO 100 /* priorities 0..99 */

/* The part of a queued item (a thread) the queue knows. */
struct prioq_node {
	struct list_head node; /* on lists[prio] while queued */
	int prio; /* effective priority; change only while not queued */
	bool queued;
};

struct prioq {
	uint64_t bitmap[(PRIOQ_NR_PRIO + 63) / 64];
	struct list_head lists[PRIOQ_NR_PRIO];
	unsigned nr;
};

void prioq_init(struct prioq *q);
void prioq_node_init(struct prioq_node *e, int prio);

/* Queue e at the tail of its priority (at the head if `head`: a preempted thread resumes first). */
void prioq_add(struct prioq *q, struct prioq_node *e, bool head);
/* Remove a queued e. */
void prioq_del(struct prioq *q, struct prioq_node *e);
/* The next node to run (highest priority, first in FIFO order), or NULL; not removed. */
struct prioq_node *prioq_peek(const struct prioq *q);
/* Highest queued priority, or -1 when empty. */
int prioq_top_prio(const struct prioq *q);

#endif
