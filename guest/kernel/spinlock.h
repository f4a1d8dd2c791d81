/* SPDX-License-Identifier: MIT */
/*
 * Ticket spinlocks: FIFO-fair, preemption disabled while held; the _irqsave forms also
 * keep local interrupts off. Never held across a sleep.
 */
#ifndef PLUGVM_KERNEL_SPINLOCK_H
#define PLUGVM_KERNEL_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "arch.h"
#include "kernel/lockdep.h"
#include "kernel/preempt.h"

struct spinlock {
	uint16_t next; /* ticket dispenser */
	uint16_t owner; /* ticket now served */
	const char *name;
	struct lockdep_map dep_map;
};

#define SPINLOCK_INIT(n)                                                           \
	{                                                                          \
		.next = 0, .owner = 0, .name = (n), .dep_map = LOCKDEP_MAP_INIT(n) \
	}

static inline void spin_lock_init(struct spinlock *l, const char *name)
{
	l->next = 0;
	l->owner = 0;
	l->name = name;
	lockdep_init_map(&l->dep_map, name);
}

/* The raw ticket operations: no preemption or lock-validator bookkeeping. */
static inline void __spin_lock(struct spinlock *l)
{
	uint16_t ticket = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);

	while (__atomic_load_n(&l->owner, __ATOMIC_ACQUIRE) != ticket)
		arch_cpu_relax();
}

static inline bool __spin_trylock(struct spinlock *l)
{
	uint16_t owner = __atomic_load_n(&l->owner, __ATOMIC_RELAXED);
	uint16_t expect = owner;

	return __atomic_compare_exchange_n(&l->next, &expect, (uint16_t)(owner + 1), false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline void __spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->owner, (uint16_t)(l->owner + 1), __ATOMIC_RELEASE);
}

static inline bool spin_is_locked(const struct spinlock *l)
{
	return __atomic_load_n(&l->owner, __ATOMIC_RELAXED) !=
	       __atomic_load_n(&l->next, __ATOMIC_RELAXED);
}

static inline void spin_lock(struct spinlock *l)
{
	preempt_disable();
	__spin_lock(l);
	lockdep_acquire(&l->dep_map, 0, LOCKDEP_THIS_IP);
}

static inline bool spin_trylock(struct spinlock *l)
{
	preempt_disable();
	if (!__spin_trylock(l)) {
		preempt_enable();
		return false;
	}
	lockdep_acquire(&l->dep_map, LOCKDEP_TRYLOCK, LOCKDEP_THIS_IP);
	return true;
}

static inline void spin_unlock(struct spinlock *l)
{
	lockdep_release(&l->dep_map, LOCKDEP_THIS_IP);
	__spin_unlock(l);
	preempt_enable();
}

static inline unsigned long spin_lock_irqsave(struct spinlock *l)
{
	unsigned long flags = arch_irq_save();

	preempt_disable();
	__spin_lock(l);
	lockdep_acquire(&l->dep_map, 0, LOCKDEP_THIS_IP);
	return flags;
}

static inline void spin_unlock_irqrestore(struct spinlock *l, unsigned long flags)
{
	lockdep_release(&l->dep_map, LOCKDEP_THIS_IP);
	__spin_unlock(l);
	preempt_enable_no_resched();
	arch_irq_restore(flags);
	preempt_check_resched();
}

#endif
