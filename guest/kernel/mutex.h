/* SPDX-License-Identifier: MIT */
/* A sleeping mutex: FIFO hand-off through a wait queue. Thread context only. */
#ifndef PLUGVM_KERNEL_MUTEX_H
#define PLUGVM_KERNEL_MUTEX_H

#include <stdbool.h>

#include "kernel/lockdep.h"
#include "kernel/wait.h"

struct mutex {
	struct thread *owner; /* atomics */
	struct waitqueue wq;
	struct lockdep_map dep_map;
};

void mutex_init(struct mutex *m, const char *name);
void mutex_lock(struct mutex *m);
bool mutex_trylock(struct mutex *m);
void mutex_unlock(struct mutex *m);
bool mutex_is_locked_by_me(const struct mutex *m);

#endif
