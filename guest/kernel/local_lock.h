/* SPDX-License-Identifier: MIT */
/*
 * local_lock_t: a named lock for per-CPU data, as in Linux 5.8+.
 *
 * Default build (like mainline): local_lock() disables preemption, the _irqsave form also
 * interrupts, and nothing else happens; the lock field only records that it is held, so a
 * recursive acquisition on the same CPU (typically an interrupt handler taking a lock the
 * interrupted code holds without the _irqsave form) is reported, and local_trylock() can
 * fail instead of deadlocking.
 *
 * RT build (CONFIG_PREEMPT_RT, like PREEMPT_RT): the holder is only migration-disabled and
 * stays preemptible; the lock is a real per-CPU sleeping lock with priority inheritance, so
 * a higher-priority thread that does not need the lock preempts the holder at once, and one
 * that needs it boosts the holder. The _irqsave forms do not disable interrupts.
 *
 * The lock expression is evaluated after preemption/migration is disabled, so
 * `local_lock(&this_cpu()->rq.lock)` names the lock of the CPU the caller stays on.
 * With CONFIG_LOCKDEP every acquisition is also tracked by the lock validator.
 */
#ifndef PLUGVM_KERNEL_LOCAL_LOCK_H
#define PLUGVM_KERNEL_LOCAL_LOCK_H

#include <stdbool.h>

#include "arch.h"
#include "kernel/list.h"
#include "kernel/lockdep.h"
#include "kernel/preempt.h"
#include "kernel/spinlock.h"

struct thread;

#ifdef CONFIG_PREEMPT_RT
#define IS_ENABLED_RT 1
#else
#define IS_ENABLED_RT 0
#endif

typedef struct {
#ifdef CONFIG_PREEMPT_RT
	uintptr_t owner; /* struct thread *, bit 0 = has waiters; atomics */
	struct spinlock wait_lock; /* guards waiters and setting bit 0 */
	struct list_head waiters; /* blocked threads, highest priority first */
#else
	int acquired; /* held on this CPU */
#endif
	const char *name;
	struct lockdep_map dep_map;
} local_lock_t;

void local_lock_init(local_lock_t *l, const char *name);

/* Report a misuse (recursion, unlock of a free lock) once per lock. */
void local_lock_bug(local_lock_t *l, const char *what);

/* migrate_disable(): the thread stays on this CPU; in the default build that is preemption. */
#ifdef CONFIG_PREEMPT_RT
void migrate_disable(void);
void migrate_enable(void);
void rt_local_lock(local_lock_t *l);
bool rt_local_trylock(local_lock_t *l);
void rt_local_unlock(local_lock_t *l);

#define local_lock(lp)             \
	do {                       \
		migrate_disable(); \
		rt_local_lock(lp); \
	} while (0)
#define local_unlock(lp)             \
	do {                         \
		rt_local_unlock(lp); \
		migrate_enable();    \
	} while (0)
/* PREEMPT_RT semantics: interrupts stay enabled; flags is set to 0. */
#define local_lock_irqsave(lp, flags) \
	do {                          \
		(flags) = 0;          \
		local_lock(lp);       \
	} while (0)
#define local_unlock_irqrestore(lp, flags) \
	do {                               \
		(void)(flags);             \
		local_unlock(lp);          \
	} while (0)
/* Fails in hard interrupt context (a sleeping lock cannot be waited for there). */
#define local_trylock(lp)                            \
	({                                           \
		bool __ok = false;                   \
		if (!in_hardirq()) {                 \
			migrate_disable();           \
			__ok = rt_local_trylock(lp); \
			if (!__ok)                   \
				migrate_enable();    \
		}                                    \
		__ok;                                \
	})
#else
static inline void migrate_disable(void)
{
	preempt_disable();
}

static inline void migrate_enable(void)
{
	preempt_enable();
}

static inline void __local_lock_acquire(local_lock_t *l)
{
	if (unlikely(l->acquired))
		local_lock_bug(l, "acquired recursively on this CPU");
	l->acquired = 1;
	lockdep_acquire(&l->dep_map, 0, LOCKDEP_THIS_IP);
}

static inline void __local_lock_release(local_lock_t *l)
{
	lockdep_release(&l->dep_map, LOCKDEP_THIS_IP);
	if (unlikely(!l->acquired))
		local_lock_bug(l, "released while not held");
	l->acquired = 0;
}

static inline bool __local_lock_try(local_lock_t *l)
{
	if (l->acquired)
		return false;
	l->acquired = 1;
	lockdep_acquire(&l->dep_map, LOCKDEP_TRYLOCK, LOCKDEP_THIS_IP);
	return true;
}

#define local_lock(lp)                    \
	do {                              \
		preempt_disable();        \
		__local_lock_acquire(lp); \
	} while (0)
#define local_unlock(lp)                  \
	do {                              \
		__local_lock_release(lp); \
		preempt_enable();         \
	} while (0)
#define local_lock_irqsave(lp, flags)      \
	do {                               \
		(flags) = arch_irq_save(); \
		preempt_disable();         \
		__local_lock_acquire(lp);  \
	} while (0)
#define local_unlock_irqrestore(lp, flags)   \
	do {                                 \
		__local_lock_release(lp);    \
		preempt_enable_no_resched(); \
		arch_irq_restore(flags);     \
		preempt_check_resched();     \
	} while (0)
#define local_trylock(lp)                    \
	({                                   \
		bool __ok;                   \
		preempt_disable();           \
		__ok = __local_lock_try(lp); \
		if (!__ok)                   \
			preempt_enable();    \
		__ok;                        \
	})
#endif

/*
 * For the scheduler's run-queue lock, taken with interrupts already off (which alone pins
 * the caller to this CPU): no preemption or migration counting. In the RT build the lock is
 * still a real lock and must be free: nothing else on this CPU can hold it while interrupts
 * are off, and other CPUs never take it.
 */
#ifdef CONFIG_PREEMPT_RT
#define local_lock_irqs_off(lp)	  rt_local_lock(lp)
#define local_unlock_irqs_off(lp) rt_local_unlock(lp)
#else
#define local_lock_irqs_off(lp)	  __local_lock_acquire(lp)
#define local_unlock_irqs_off(lp) __local_lock_release(lp)
#endif

#define local_lock_assert_held(lp) lockdep_assert_held(&(lp)->dep_map)

#endif
