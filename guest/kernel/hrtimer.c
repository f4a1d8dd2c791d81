// SPDX-License-Identifier: MIT
/*
 * High-resolution timers on per-CPU red-black timer queues. The clock event is programmed
 * only when the earliest expiry changes (and not at all while the expiry loop runs: it
 * programs once at the end). Cross-CPU operations are IPIs to the owning CPU, which finds
 * the timer in its own queue with interrupts off: a callback running there has finished
 * by the time the IPI is taken.
 */
#include "kernel/hrtimer.h"

#include "kernel/cpu.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "kernel/wait.h"

static struct hrtimer_base *this_base(void)
{
	return &this_cpu()->hrt;
}

static struct hrtimer *node_timer(struct tq_node *n)
{
	return n ? container_of(n, struct hrtimer, node) : NULL;
}

/* Program the clock event for the queue's first timer. Interrupts off, lock held. */
static void reprogram(struct hrtimer_base *b)
{
	struct hrtimer *first = node_timer(tq_first(&b->queue));
	uint64_t when = first ? first->node.expires : UINT64_MAX;

	if (b->in_interrupt || when == b->programmed_ns)
		return;
	b->programmed_ns = when;
	b->stats.reprograms++;
	if (when == UINT64_MAX)
		arch_timer_stop();
	else
		arch_timer_set_deadline(arch_ns_to_tsc(when));
}

void hrtimer_init(struct hrtimer *t, enum hrtimer_restart (*fn)(struct hrtimer *))
{
	tq_node_init(&t->node);
	t->fn = fn;
	t->cpu = -1;
	t->running_on = -1;
	t->cancelled = false;
}

bool hrtimer_queued(const struct hrtimer *t)
{
	return tq_queued(&t->node);
}

/* Remove t from this CPU's queue if it is there. Interrupts off. */
static bool remove_local(struct hrtimer_base *b, struct hrtimer *t)
{
	bool first;

	if (!tq_queued(&t->node) || READ_ONCE(t->cpu) != (int)smp_processor_id())
		return false;
	first = tq_del(&b->queue, &t->node);
	WRITE_ONCE(t->cpu, -1);
	b->stats.cancelled++;
	if (first)
		reprogram(b);
	return true;
}

struct remote_cancel {
	struct hrtimer *t;
	bool removed;
	bool moved; /* not on that CPU any more: look again */
};

static void cancel_on_owner(void *arg)
{
	struct remote_cancel *rc = arg;
	struct hrtimer_base *b = this_base();

	local_lock_irqs_off(&b->lock);
	if (READ_ONCE(rc->t->cpu) != (int)smp_processor_id() && b->running != rc->t)
		rc->moved = READ_ONCE(rc->t->cpu) >= 0;
	else
		rc->removed = remove_local(b, rc->t);
	local_unlock_irqs_off(&b->lock);
}

bool hrtimer_cancel(struct hrtimer *t)
{
	struct hrtimer_base *b;
	unsigned long flags;
	bool removed = false;
	int cpu;

	for (;;) {
		flags = arch_irq_save();
		b = this_base();
		local_lock_irqs_off(&b->lock);
		if (b->running == t)
			t->cancelled = true; /* from its own callback */
		cpu = READ_ONCE(t->cpu);
		if (cpu < 0 && READ_ONCE(t->running_on) >= 0 &&
		    READ_ONCE(t->running_on) != (int)smp_processor_id())
			cpu = READ_ONCE(t->running_on); /* wait out its callback there */
		if (cpu < 0 || cpu == (int)smp_processor_id()) {
			removed = remove_local(b, t);
			local_unlock_irqs_off(&b->lock);
			arch_irq_restore(flags);
			return removed;
		}
		local_unlock_irqs_off(&b->lock);
		arch_irq_restore(flags);
		{
			struct remote_cancel rc = { t, false, false };

			if (smp_call_on_cpu((unsigned)cpu, cancel_on_owner, &rc) == 0 && !rc.moved)
				return rc.removed;
		}
		/* It moved between our look and the IPI (or that CPU went away): again. */
		if (!cpumask_test(&cpu_online_mask, (unsigned)cpu) && preemptible())
			wait_event(&timers_migrate_wq, READ_ONCE(t->cpu) != cpu);
		else
			arch_cpu_relax();
	}
}

void hrtimer_start(struct hrtimer *t, uint64_t ns, enum hrtimer_mode mode)
{
	struct hrtimer_base *b;
	unsigned long flags;
	bool was_first = false;

	if (mode == HRTIMER_REL)
		ns += arch_now_ns();
	/*
	 * Queued on another CPU: cancel it there first. Decide with interrupts off, on the CPU
	 * we then queue it on: a check made before a migration would leave it in two queues.
	 */
	for (;;) {
		int cpu;

		flags = arch_irq_save();
		cpu = READ_ONCE(t->cpu);
		if (cpu < 0 || cpu == (int)smp_processor_id())
			break;
		arch_irq_restore(flags);
		hrtimer_cancel(t);
	}
	b = this_base();
	local_lock_irqs_off(&b->lock);
	if (tq_queued(&t->node) && t->cpu == (int)smp_processor_id())
		was_first = tq_del(&b->queue, &t->node);
	t->node.expires = ns;
	t->cancelled = false;
	WRITE_ONCE(t->cpu, (int)smp_processor_id());
	b->stats.started++;
	/* First now, or first before and pushed back: the clock event follows the queue head
	 * (left at the old head, it would fire early, for nothing). */
	if (tq_add(&b->queue, &t->node) || was_first)
		reprogram(b);
	local_unlock_irqs_off(&b->lock);
	arch_irq_restore(flags);
}

uint64_t hrtimer_forward(struct hrtimer *t, uint64_t now, uint64_t interval)
{
	uint64_t overruns;

	if (!interval || t->node.expires > now)
		return 0;
	overruns = (now - t->node.expires) / interval + 1;
	t->node.expires += overruns * interval;
	return overruns;
}

uint64_t hrtimer_next_expiry_except(const struct hrtimer *except)
{
	struct hrtimer_base *b = this_base();
	struct tq_node *n = tq_first(&b->queue);

	if (n && node_timer(n) == except)
		n = tq_next(n);
	return n ? n->expires : UINT64_MAX;
}

void hrtimer_interrupt(void)
{
	struct hrtimer_base *b = this_base();
	struct hrtimer *t;
	uint64_t now;

	local_lock_irqs_off(&b->lock);
	b->stats.interrupts++;
	b->in_interrupt = true;
	b->programmed_ns = UINT64_MAX; /* the one-shot fired */
	for (;;) {
		enum hrtimer_restart r;

		now = arch_now_ns();
		t = node_timer(tq_first(&b->queue));
		if (!t || t->node.expires > now)
			break;
		if (now - t->node.expires > b->stats.lateness_max_ns)
			b->stats.lateness_max_ns = now - t->node.expires;
		tq_del(&b->queue, &t->node);
		WRITE_ONCE(t->running_on, (int)smp_processor_id());
		WRITE_ONCE(t->cpu, -1);
		b->running = t;
		b->stats.expired++;
		t->cancelled = false;
		/* The callback may start or cancel timers here: drop the lock around it. */
		local_unlock_irqs_off(&b->lock);
		r = t->fn(t);
		local_lock_irqs_off(&b->lock);
		b->running = NULL;
		if (r == HRTIMER_RESTART && !t->cancelled && !tq_queued(&t->node)) {
			WRITE_ONCE(t->cpu, (int)smp_processor_id());
			tq_add(&b->queue, &t->node);
		}
		/* After this store the timer's owner may free it: touch t no more. */
		__atomic_store_n(&t->running_on, -1, __ATOMIC_RELEASE);
	}
	b->in_interrupt = false;
	reprogram(b);
	local_unlock_irqs_off(&b->lock);
}

/* ---- sleeping ------------------------------------------------------------------------------ */

struct sleeper {
	struct hrtimer timer;
	struct thread *thread;
	volatile int done;
};

static enum hrtimer_restart wake_sleeper(struct hrtimer *t)
{
	struct sleeper *s = container_of(t, struct sleeper, timer);

	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
	thread_wake(s->thread);
	return HRTIMER_NORESTART;
}

void sleep_until(uint64_t ns)
{
	struct sleeper s;

	if (ns <= arch_now_ns())
		return;
	hrtimer_init(&s.timer, wake_sleeper);
	s.thread = current_thread();
	s.done = 0;
	WRITE_ONCE(s.thread->sleep_deadline_ns, ns); /* for the hung-task check */
	thread_prepare_sleep();
	hrtimer_start(&s.timer, ns, HRTIMER_ABS);
	while (!__atomic_load_n(&s.done, __ATOMIC_ACQUIRE)) {
		thread_sleep();
		thread_prepare_sleep();
	}
	thread_cancel_sleep();
	WRITE_ONCE(s.thread->sleep_deadline_ns, 0);
	hrtimer_cancel(&s.timer); /* also waits out a callback still running elsewhere */
}

void sleep_ns(uint64_t ns)
{
	sleep_until(arch_now_ns() + ns);
}

/* ---- hotplug ---------------------------------------------------------------------------------- */

void hrtimers_prepare_cpu(unsigned cpu)
{
	struct hrtimer_base *b = &cpu_table[cpu]->hrt;

	local_lock_init(&b->lock, "hrtimer_base.lock");
	tq_init(&b->queue);
	b->running = NULL;
	b->programmed_ns = UINT64_MAX;
	b->in_interrupt = false;
	b->nohz_suppress_tick = false;
	memset(&b->stats, 0, sizeof(b->stats));
}

unsigned hrtimers_dead_cpu(unsigned cpu)
{
	struct hrtimer_base *dead = &cpu_table[cpu]->hrt, *b;
	struct tq_node *n;
	unsigned long flags;
	unsigned moved = 0;

	flags = arch_irq_save();
	b = this_base();
	local_lock_irqs_off(&b->lock);
	/* The dead CPU runs nothing any more: its queue is ours to empty. */
	while ((n = tq_first(&dead->queue))) {
		struct hrtimer *t = node_timer(n);

		tq_del(&dead->queue, n);
		WRITE_ONCE(t->cpu, (int)smp_processor_id());
		tq_add(&b->queue, n);
		moved++;
	}
	reprogram(b);
	local_unlock_irqs_off(&b->lock);
	arch_irq_restore(flags);
	return moved;
}

void hrtimer_get_stats(unsigned cpu, struct hrtimer_stats *st)
{
	struct cpu *c = cpu < NR_CPUS ? cpu_table[cpu] : NULL;

	if (c)
		*st = c->hrt.stats;
	else
		memset(st, 0, sizeof(*st));
}

uint64_t hrtimer_programmed_ns(unsigned cpu)
{
	struct cpu *c = cpu < NR_CPUS ? READ_ONCE(cpu_table[cpu]) : NULL;

	return c ? READ_ONCE(c->hrt.programmed_ns) : UINT64_MAX;
}

void hrtimer_dump_bases(void)
{
	uint64_t now = arch_now_ns();
	unsigned cpu;

	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		struct hrtimer_base *b;
		struct tq_node *first;

		if (!cpu_table[cpu])
			continue;
		b = &cpu_table[cpu]->hrt;
		first = READ_ONCE(b->queue.leftmost);
		printk("hrtimer cpu %u%s: %lu queued, first in %ld us, programmed in %ld us%s\n",
		       cpu, cpumask_test(&cpu_online_mask, cpu) ? "" : " (offline)",
		       (unsigned long)READ_ONCE(b->queue.count),
		       first ? (long)((int64_t)(first->expires - now) / 1000) : 0L,
		       b->programmed_ns == UINT64_MAX
			   ? -1L
			   : (long)((int64_t)(b->programmed_ns - now) / 1000),
		       b->in_interrupt ? ", in interrupt" : "");
	}
}
