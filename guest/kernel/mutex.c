// SPDX-License-Identifier: MIT
/* Sleeping mutex: compare-and-swap on the owner, sleep on a wait queue when taken. */
#include "kernel/mutex.h"

#include "kernel/bug.h"
#include "kernel/printk.h"

void mutex_init(struct mutex *m, const char *name)
{
	m->owner = NULL;
	waitqueue_init(&m->wq, name);
	lockdep_init_map(&m->dep_map, name);
}

static bool try_take(struct mutex *m)
{
	struct thread *none = NULL;

	return __atomic_compare_exchange_n(&m->owner, &none, current_thread(), false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

bool mutex_trylock(struct mutex *m)
{
	if (!try_take(m))
		return false;
	preempt_disable();
	lockdep_acquire(&m->dep_map, LOCKDEP_TRYLOCK, LOCKDEP_THIS_IP);
	preempt_enable();
	return true;
}

void mutex_lock(struct mutex *m)
{
	if (in_interrupt())
		pr_bug("mutex_lock(%s) in interrupt context\n", m->wq.lock.name);
	wait_event(&m->wq, try_take(m));
	preempt_disable();
	lockdep_acquire(&m->dep_map, 0, LOCKDEP_THIS_IP);
	preempt_enable();
}

void mutex_unlock(struct mutex *m)
{
	preempt_disable();
	lockdep_release(&m->dep_map, LOCKDEP_THIS_IP);
	preempt_enable();
	if (__atomic_load_n(&m->owner, __ATOMIC_RELAXED) != current_thread())
		pr_bug("mutex %s released by a thread that does not hold it\n", m->wq.lock.name);
	__atomic_store_n(&m->owner, NULL, __ATOMIC_RELEASE);
	wake_up_one(&m->wq);
}

bool mutex_is_locked_by_me(const struct mutex *m)
{
	return __atomic_load_n(&m->owner, __ATOMIC_RELAXED) == current_thread();
}
