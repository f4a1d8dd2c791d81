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
#include "kernel/preempt.h"

struct spinlock {
	uint16_t next; /* ticket dispenser */
	uint16_t owner; /* ticket now served */
	int holder_cpu; /* debugging aid: -1 when free */
	const char *name;
};

#define SPINLOCK_INIT(n)                                             \
	{                                                            \
		.next = 0, .owner = 0, .holder_cpu = -1, .name = (n) \
	}

static inline void spin_lock_init(struct spinlock *l, const char *name)
{
	l->next = 0;
	l->owner = 0;
	l->holder_cpu = -1;
	l->name = name;
}

/* Acquire without touching preemption: callers that already disabled it. */
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
}

static inline void spin_unlock(struct spinlock *l)
{
	__spin_unlock(l);
	preempt_enable();
}

static inline unsigned long spin_lock_irqsave(struct spinlock *l)
{
	unsigned long flags = arch_irq_save();

	preempt_disable();
	__spin_lock(l);
	return flags;
}

static inline void spin_unlock_irqrestore(struct spinlock *l, unsigned long flags)
{
	__spin_unlock(l);
	preempt_enable_no_resched();
	arch_irq_restore(flags);
	preempt_check_resched();
}

#endif
