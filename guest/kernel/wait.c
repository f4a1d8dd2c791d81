// SPDX-License-Identifier: MIT
/* Wait queues and completions. */
#include "kernel/wait.h"

#include "kernel/hrtimer.h"

#define COMPLETION_ALL (~0u / 2)

void waitqueue_init(struct waitqueue *wq, const char *name)
{
	spin_lock_init(&wq->lock, name);
	list_init(&wq->waiters);
}

void prepare_to_wait(struct waitqueue *wq, struct waiter *w)
{
	unsigned long flags = spin_lock_irqsave(&wq->lock);

	w->thread = current_thread();
	if (list_empty(&w->node))
		list_add_tail(&w->node, &wq->waiters);
	thread_prepare_sleep();
	spin_unlock_irqrestore(&wq->lock, flags);
}

void finish_wait(struct waitqueue *wq, struct waiter *w)
{
	unsigned long flags;

	thread_cancel_sleep();
	flags = spin_lock_irqsave(&wq->lock);
	if (!list_empty(&w->node))
		list_del(&w->node);
	spin_unlock_irqrestore(&wq->lock, flags);
}

static unsigned wake_up(struct waitqueue *wq, unsigned max)
{
	unsigned long flags = spin_lock_irqsave(&wq->lock);
	struct waiter *w, *tmp;
	unsigned n = 0;

	list_for_each_entry_safe(w, tmp, &wq->waiters, node) {
		if (n == max)
			break;
		/* The waiter leaves the queue itself (finish_wait), so one that was not
		 * asleep yet still sees its condition on the next check. */
		if (thread_wake(w->thread))
			n++;
	}
	spin_unlock_irqrestore(&wq->lock, flags);
	return n;
}

unsigned wake_up_all(struct waitqueue *wq)
{
	return wake_up(wq, ~0u);
}

unsigned wake_up_one(struct waitqueue *wq)
{
	return wake_up(wq, 1);
}

void completion_init(struct completion *c)
{
	waitqueue_init(&c->wq, "completion");
	c->done = 0;
}

void complete(struct completion *c)
{
	unsigned long flags = spin_lock_irqsave(&c->wq.lock);

	if (c->done < COMPLETION_ALL)
		c->done++;
	spin_unlock_irqrestore(&c->wq.lock, flags);
	wake_up_one(&c->wq);
}

void complete_all(struct completion *c)
{
	unsigned long flags = spin_lock_irqsave(&c->wq.lock);

	c->done = COMPLETION_ALL;
	spin_unlock_irqrestore(&c->wq.lock, flags);
	wake_up_all(&c->wq);
}

static bool try_consume(struct completion *c)
{
	unsigned long flags = spin_lock_irqsave(&c->wq.lock);
	bool ok = c->done > 0;

	if (ok && c->done < COMPLETION_ALL)
		c->done--;
	spin_unlock_irqrestore(&c->wq.lock, flags);
	return ok;
}

void wait_for_completion(struct completion *c)
{
	wait_event(&c->wq, try_consume(c));
}

struct timeout_waker {
	struct hrtimer timer;
	struct thread *thread;
};

static enum hrtimer_restart timeout_wake(struct hrtimer *t)
{
	thread_wake(container_of(t, struct timeout_waker, timer)->thread);
	return HRTIMER_NORESTART;
}

bool wait_for_completion_timeout(struct completion *c, uint64_t ns)
{
	uint64_t deadline = arch_now_ns() + ns;
	struct timeout_waker tw;
	struct waiter w;
	bool ok;

	if (try_consume(c))
		return true;
	list_init(&w.node);
	hrtimer_init(&tw.timer, timeout_wake);
	tw.thread = current_thread();
	WRITE_ONCE(tw.thread->sleep_deadline_ns, deadline); /* for the hung-task check */
	hrtimer_start(&tw.timer, deadline, HRTIMER_ABS);
	for (;;) {
		prepare_to_wait(&c->wq, &w);
		ok = try_consume(c);
		if (ok || arch_now_ns() >= deadline)
			break;
		thread_sleep();
	}
	finish_wait(&c->wq, &w);
	WRITE_ONCE(tw.thread->sleep_deadline_ns, 0);
	hrtimer_cancel(&tw.timer); /* also waits out a wake-up still running elsewhere */
	return ok;
}

void reinit_completion(struct completion *c)
{
	unsigned long flags = spin_lock_irqsave(&c->wq.lock);

	c->done = 0;
	spin_unlock_irqrestore(&c->wq.lock, flags);
}
