// SPDX-License-Identifier: MIT
/*
 * local_lock_t support: initialisation and misuse reports for both builds, and in the RT
 * build the real per-CPU lock behind it: an owner word (a thread pointer, bit 0 = "has
 * waiters") taken with one compare-and-swap when free, and a slow path where the waiter
 * sleeps in priority order and lends its priority to the owner (priority inheritance, one
 * level deep). Owner and waiters of a local_lock are always on the lock's own CPU: the
 * lock is reached through this_cpu() after migrate_disable(), and the owner stays put.
 */
#include "kernel/local_lock.h"

#include "kernel/bug.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/string.h"

void local_lock_init(local_lock_t *l, const char *name)
{
	memset(l, 0, sizeof(*l));
	l->name = name;
	lockdep_init_map(&l->dep_map, name);
#ifdef CONFIG_PREEMPT_RT
	spin_lock_init(&l->wait_lock, "local_lock.wait");
	list_init(&l->waiters);
#endif
}

void local_lock_bug(local_lock_t *l, const char *what)
{
	static int reports;

	if (__atomic_fetch_add(&reports, 1, __ATOMIC_RELAXED) < 10) {
		pr_bug("local_lock %s %s (cpu %u)\n", l->name, what, raw_smp_processor_id());
		arch_backtrace();
	}
}

#ifdef CONFIG_PREEMPT_RT

#define OWNER_WAITERS 1ul

void migrate_disable(void)
{
	struct thread *t = current_thread();

	if (t)
		t->migrate_disabled++;
	barrier();
}

void migrate_enable(void)
{
	struct thread *t = current_thread();

	barrier();
	if (!t)
		return;
	/* Look at this CPU before we may leave it: the check and the flag are one CPU's. */
	preempt_disable();
	if (--t->migrate_disabled == 0 && !this_cpu()->rq.active && !t->is_idle && t->pinned < 0)
		this_cpu()->need_resched = 1; /* stayed only for migrate_disable(): leave now */
	preempt_enable();
}

static void pi_push(struct thread *t, local_lock_t *l)
{
	if (t->nr_pi_locks < THREAD_MAX_PI_LOCKS)
		t->pi_locks[t->nr_pi_locks] = l;
	t->nr_pi_locks++;
}

static void pi_pop(struct thread *t, local_lock_t *l)
{
	unsigned i, n = t->nr_pi_locks < THREAD_MAX_PI_LOCKS ? t->nr_pi_locks : THREAD_MAX_PI_LOCKS;

	for (i = 0; i < n; i++) {
		if (t->pi_locks[i] == l) {
			memmove(&t->pi_locks[i], &t->pi_locks[i + 1],
				(n - i - 1) * sizeof(t->pi_locks[0]));
			break;
		}
	}
	if (t->nr_pi_locks)
		t->nr_pi_locks--;
}

/* t's priority: its own, or that of the most urgent waiter on a lock it holds. */
static int inherited_prio(struct thread *t)
{
	unsigned i, n = t->nr_pi_locks < THREAD_MAX_PI_LOCKS ? t->nr_pi_locks : THREAD_MAX_PI_LOCKS;
	int prio = t->base_prio;

	for (i = 0; i < n; i++) {
		local_lock_t *l = t->pi_locks[i];
		unsigned long flags = spin_lock_irqsave(&l->wait_lock);

		if (!list_empty(&l->waiters)) {
			struct thread *w = list_first_entry(&l->waiters, struct thread, pi_node);

			if (w->rq.prio > prio)
				prio = w->rq.prio;
		}
		spin_unlock_irqrestore(&l->wait_lock, flags);
	}
	return prio;
}

static void enqueue_waiter(local_lock_t *l, struct thread *me)
{
	struct thread *w;

	list_for_each_entry(w, &l->waiters, pi_node) {
		if (w->rq.prio < me->rq.prio) {
			__list_insert(&me->pi_node, w->pi_node.prev, &w->pi_node);
			return;
		}
	}
	list_add_tail(&me->pi_node, &l->waiters);
}

static void rt_lock_slow(local_lock_t *l, struct thread *me)
{
	if (!arch_irqs_enabled() || in_interrupt()) {
		/* Cannot sleep here: a design error (the run-queue lock is never contended). */
		local_lock_bug(l, "contended where the waiter cannot sleep");
		for (;;) {
			uintptr_t free = 0;

			if (__atomic_compare_exchange_n(&l->owner, &free, (uintptr_t)me, false,
							__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				return;
			arch_cpu_relax();
		}
	}
	for (;;) {
		unsigned long flags = spin_lock_irqsave(&l->wait_lock);
		uintptr_t v = __atomic_load_n(&l->owner, __ATOMIC_RELAXED);
		struct thread *owner;

		if (!(v & ~OWNER_WAITERS)) {
			/* Free (maybe with waiters queued: we may still take it). */
			uintptr_t nv =
			    (uintptr_t)me | (list_empty(&l->waiters) ? 0 : OWNER_WAITERS);

			if (__atomic_compare_exchange_n(&l->owner, &v, nv, false, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED)) {
				spin_unlock_irqrestore(&l->wait_lock, flags);
				return;
			}
			spin_unlock_irqrestore(&l->wait_lock, flags);
			continue;
		}
		if (!(v & OWNER_WAITERS) &&
		    !__atomic_compare_exchange_n(&l->owner, &v, v | OWNER_WAITERS, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			spin_unlock_irqrestore(&l->wait_lock, flags);
			continue; /* owner changed under us */
		}
		owner = (struct thread *)(v & ~OWNER_WAITERS);
		enqueue_waiter(l, me);
		thread_prepare_sleep();
		spin_unlock_irqrestore(&l->wait_lock, flags);
		if (owner->rq.prio < me->rq.prio)
			sched_set_effective_prio(owner, me->rq.prio);
		thread_sleep();
		/*
		 * The unlocker takes us off the waiter list before it wakes us. Any other wake-up
		 * (a stale timer, a racing wake_up) leaves us queued: dequeue before retrying, or
		 * the next enqueue would link us in twice.
		 */
		flags = spin_lock_irqsave(&l->wait_lock);
		if (!list_empty(&me->pi_node))
			list_del(&me->pi_node);
		spin_unlock_irqrestore(&l->wait_lock, flags);
	}
}

void rt_local_lock(local_lock_t *l)
{
	struct thread *me = current_thread();
	uintptr_t free = 0;

	if (!__atomic_compare_exchange_n(&l->owner, &free, (uintptr_t)me, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		rt_lock_slow(l, me);
	pi_push(me, l);
	/* The validator's graph lock wants its callers unpreemptible. */
	preempt_disable();
	lockdep_acquire(&l->dep_map, 0, (unsigned long)__builtin_return_address(0));
	preempt_enable();
}

bool rt_local_trylock(local_lock_t *l)
{
	struct thread *me = current_thread();
	uintptr_t free = 0;

	if (!__atomic_compare_exchange_n(&l->owner, &free, (uintptr_t)me, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return false;
	pi_push(me, l);
	preempt_disable();
	lockdep_acquire(&l->dep_map, LOCKDEP_TRYLOCK, (unsigned long)__builtin_return_address(0));
	preempt_enable();
	return true;
}

void rt_local_unlock(local_lock_t *l)
{
	struct thread *me = current_thread(), *wake = NULL;
	uintptr_t mine = (uintptr_t)me;
	unsigned long flags;
	int prio;

	preempt_disable();
	lockdep_release(&l->dep_map, (unsigned long)__builtin_return_address(0));
	preempt_enable();
	pi_pop(me, l);
	if ((__atomic_load_n(&l->owner, __ATOMIC_RELAXED) & ~OWNER_WAITERS) != mine)
		local_lock_bug(l, "released by a thread that does not hold it");
	if (!__atomic_compare_exchange_n(&l->owner, &mine, 0, false, __ATOMIC_RELEASE,
					 __ATOMIC_RELAXED)) {
		/* Waiters: hand the lock back free and wake the most urgent one. */
		flags = spin_lock_irqsave(&l->wait_lock);
		if (!list_empty(&l->waiters)) {
			wake = list_first_entry(&l->waiters, struct thread, pi_node);
			list_del(&wake->pi_node);
		}
		__atomic_store_n(&l->owner, list_empty(&l->waiters) ? 0 : OWNER_WAITERS,
				 __ATOMIC_RELEASE);
		spin_unlock_irqrestore(&l->wait_lock, flags);
	}
	if (me->rq.prio != me->base_prio) {
		/* Boosted: drop to what the locks still held call for. */
		prio = inherited_prio(me);
		if (prio != me->rq.prio)
			sched_set_effective_prio(me, prio);
	}
	if (wake)
		thread_wake(wake);
}

#endif /* CONFIG_PREEMPT_RT */
