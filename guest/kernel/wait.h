/* SPDX-License-Identifier: MIT */
/* Wait queues and completions on top of thread_prepare_sleep()/thread_sleep()/thread_wake(). */
#ifndef PLUGVM_KERNEL_WAIT_H
#define PLUGVM_KERNEL_WAIT_H

#include <stdbool.h>

#include "kernel/list.h"
#include "kernel/sched.h"
#include "kernel/spinlock.h"

struct waitqueue {
	struct spinlock lock;
	struct list_head waiters; /* struct waiter, guarded by lock */
};

struct waiter {
	struct list_head node;
	struct thread *thread;
};

void waitqueue_init(struct waitqueue *wq, const char *name);
/* Queue w (once) and mark the caller sleeping; then check the condition, then thread_sleep(). */
void prepare_to_wait(struct waitqueue *wq, struct waiter *w);
/* Leave the queue and mark the caller running again. */
void finish_wait(struct waitqueue *wq, struct waiter *w);
/* Wake every waiter / the first one. Any context. Return how many were woken. */
unsigned wake_up_all(struct waitqueue *wq);
unsigned wake_up_one(struct waitqueue *wq);

/* Sleep until `cond` is true; `cond` is re-evaluated after every wake-up. Thread context. */
#define wait_event(wq, cond)                         \
	do {                                         \
		struct waiter __w;                   \
		list_init(&__w.node);                \
		for (;;) {                           \
			prepare_to_wait((wq), &__w); \
			if (cond)                    \
				break;               \
			thread_sleep();              \
		}                                    \
		finish_wait((wq), &__w);             \
	} while (0)

struct completion {
	struct waitqueue wq;
	unsigned done; /* guarded by wq.lock */
};

void completion_init(struct completion *c);
/* Let one waiter (or the next wait) through. Any context. */
void complete(struct completion *c);
/* Let every current and future waiter through. Any context. */
void complete_all(struct completion *c);
/* Sleep until complete(); consumes one completion. Thread context. */
void wait_for_completion(struct completion *c);
/* As wait_for_completion(), for at most `ns`; true if it was completed. Thread context. */
bool wait_for_completion_timeout(struct completion *c, uint64_t ns);
/* Forget earlier completions (nobody may be waiting). */
void reinit_completion(struct completion *c);

#endif
