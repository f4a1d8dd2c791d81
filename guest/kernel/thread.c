// SPDX-License-Identifier: MIT
/*
 * A kernel thread's life: created with its stack and context (it first runs in
 * thread_entry(), the second half of the switch to it), started, ended with thread_exit(),
 * freed by its one joiner. Every thread is on sched_threads from creation to join.
 */
#include "kernel/sched.h"

#include "kernel/bug.h"
#include "kernel/mm.h"
#include "kernel/printk.h"
#include "kernel/sched_internal.h"

struct spinlock sched_threads_lock = SPINLOCK_INIT("sched.all");
struct list_head sched_threads = LIST_HEAD_INIT(sched_threads);

/* A new thread's first instructions, on its own stack (arch_context_init's entry). */
static void thread_entry(void *arg)
{
	struct thread *t = arg;

	sched_finish_switch();
	preempt_count_add(-1); /* the count __schedule() took for the switch to us */
	arch_irq_enable();
	thread_exit(t->fn(t->arg));
}

struct thread *thread_create(const char *name, int (*fn)(void *), void *arg, int prio, int cpu)
{
	struct thread *t = kzalloc(sizeof(*t));

	if (!t)
		return NULL;
	t->stack = page_alloc(THREAD_STACK_SIZE / PAGE_SIZE);
	if (!t->stack) {
		kfree(t);
		return NULL;
	}
	if (prio < SCHED_PRIO_MIN)
		prio = SCHED_PRIO_MIN;
	if (prio > SCHED_PRIO_MAX)
		prio = SCHED_PRIO_MAX;
	prioq_node_init(&t->rq, prio);
	t->base_prio = prio;
	t->state = THREAD_NEW;
	t->policy = SCHED_FIFO;
	t->slice_left = RR_SLICE_TICKS;
	t->pinned = cpu;
	t->cpu = cpu >= 0 ? (unsigned)cpu : raw_smp_processor_id(); /* a hint */
	t->fn = fn;
	t->arg = arg;
	list_init(&t->park_node);
	list_init(&t->pi_node);
	lockdep_task_init(&t->lockdep);
	snprintf(t->name, sizeof(t->name), "%s", name);
	arch_context_init(&t->ctx, (char *)t->stack + THREAD_STACK_SIZE, thread_entry, t);
	{
		unsigned long flags = spin_lock_irqsave(&sched_threads_lock);

		list_add_tail(&t->all_node, &sched_threads);
		spin_unlock_irqrestore(&sched_threads_lock, flags);
	}
	return t;
}

void thread_start(struct thread *t)
{
	__atomic_store_n(&t->state, THREAD_BLOCKED, __ATOMIC_RELEASE);
	thread_wake(t);
}

struct thread *thread_run(const char *name, int (*fn)(void *), void *arg, int prio, int cpu)
{
	struct thread *t = thread_create(name, fn, arg, prio, cpu);

	if (t)
		thread_start(t);
	return t;
}

struct thread *kthread_run_on_cpu(const char *name, int (*fn)(void *), void *arg, int prio,
				  unsigned cpu)
{
	struct thread *t = thread_create(name, fn, arg, prio, (int)cpu);

	if (t) {
		t->percpu = true;
		thread_start(t);
	}
	return t;
}

__noreturn void thread_exit(int code)
{
	struct thread *t = current_thread(), *joiner;

	if (lockdep_depth() > 0) {
		pr_bug("thread %s exits holding %u locks\n", t->name, lockdep_depth());
		lockdep_print_held_locks();
	}
	if (t->holds_cpu)
		thread_release_cpu(); /* its CPU may go once the thread is gone */
	t->exit_code = code;
	arch_irq_disable();
	/*
	 * Store DEAD, then read the joiner; thread_join() stores the joiner, then reads the
	 * state: one of us sees the other. The joiner cannot return (nor be freed) before our
	 * switch away is complete, so waking it here, with interrupts off, is safe.
	 */
	__atomic_store_n(&t->state, THREAD_DEAD, __ATOMIC_SEQ_CST);
	joiner = __atomic_load_n(&t->joiner, __ATOMIC_SEQ_CST);
	if (joiner)
		thread_wake(joiner);
	__schedule(SCHED_MODE_SLEEP);
	panic("dead thread %s ran again", t->name);
}

int thread_join(struct thread *t)
{
	struct thread *me = current_thread();
	int code;

	__atomic_store_n(&t->joiner, me, __ATOMIC_SEQ_CST);
	thread_wait_until(__atomic_load_n(&t->state, __ATOMIC_SEQ_CST) == THREAD_DEAD);
	/* Dead, maybe still switching away on its CPU (interrupts off there: a short wait). */
	while (__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE))
		arch_cpu_relax();
	code = t->exit_code;
	{
		unsigned long flags = spin_lock_irqsave(&sched_threads_lock);

		list_del(&t->all_node);
		spin_unlock_irqrestore(&sched_threads_lock, flags);
	}
	page_free(t->stack, THREAD_STACK_SIZE / PAGE_SIZE);
	kfree(t);
	return code;
}
