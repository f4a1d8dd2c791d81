// SPDX-License-Identifier: MIT
/*
 * Timer-wheel glue: timer_list on per-CPU wheels, expiry, requests from other CPUs, the
 * timers' hotplug (see timer.h for the design; the tick and jiffies are tick.c's).
 * Locking: a CPU's timer base is touched by that CPU only, under base->lock
 * (local_lock_irqsave: in the default build interrupts off, in the RT build a sleeping
 * lock in thread context); other CPUs ask the owner (IPI, or in RT the owner's timer
 * thread). The idle loop reads the wheels' next expiry without the lock: that value is
 * never later than the truth.
 */
#include "kernel/timer.h"

#include "kernel/bug.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/timer_internal.h"
#include "kernel/wait.h"

#define TIMER_THREAD_PRIO 50

static unsigned timer_cpu(const struct timer_list *t)
{
	return READ_ONCE(t->wt.flags) & TIMER_CPUMASK;
}

static struct timer_wheel *wheel_of(struct timer_base *b, const struct timer_list *t)
{
	return &b->wheel[(t->wt.flags & TIMER_DEFERRABLE) ? 1 : 0];
}

/* ---- operations on this CPU's base ----------------------------------------------------------- */

struct waitqueue timers_migrate_wq;

enum timer_op { OP_ADD, OP_MOD, OP_DEL };

/* Do `op` on t in this CPU's base. With OP_DEL/OP_MOD on a timer that is not here, sets
 * *moved. Returns whether t was pending. Takes the base lock. */
static bool local_op(enum timer_op op, struct timer_list *t, uint64_t expires, bool *moved)
{
	struct timer_base *b;
	unsigned long flags;
	bool was = false;
	unsigned self;

	local_lock_irqsave(&this_cpu()->tmr.lock, flags);
	b = this_base();
	self = smp_processor_id();
	if (wheel_timer_pending(&t->wt) && timer_cpu(t) != self) {
		*moved = true; /* pending elsewhere: the caller goes there */
		goto out;
	}
	if (op == OP_DEL) {
		was = wheel_del(wheel_of(b, t), &t->wt);
	} else {
		struct timer_wheel *w = wheel_of(b, t);

		/*
		 * Place it against the current jiffy, not the clock of the last expiry: the wheel
		 * only advances clk when something is due, and a timer placed against a stale clk
		 * lands on a coarser level (a 10-jiffy timeout 100 jiffies after the last expiry
		 * went to level 1 and fired up to 8 jiffies late). Forwarding stops at the next
		 * pending bucket, so nothing queued is skipped.
		 */
		wheel_forward(w, jiffies_update());
		if (wheel_timer_pending(&t->wt)) {
			was = wheel_mod(w, &t->wt, expires);
		} else {
			t->wt.flags = (t->wt.flags & ~TIMER_CPUMASK) | self;
			wheel_add(w, &t->wt, expires);
		}
	}
out:
	local_unlock_irqrestore(&this_cpu()->tmr.lock, flags);
	return was;
}

struct timer_req {
	enum timer_op op;
	struct timer_list *t;
	uint64_t expires;
	bool result;
	bool moved;
	int done;
	struct thread *waiter;
	struct llist_node node;
};

static void run_req(struct timer_req *r)
{
	this_base()->stats.remote_ops++;
	r->result = local_op(r->op, r->t, r->expires, &r->moved);
}

#ifndef CONFIG_PREEMPT_RT
static void req_ipi(void *arg)
{
	run_req(arg);
}
#endif

/* Have `cpu` carry out r. Returns -ENODEV if it is not online. Thread context in the RT build. */
static int call_owner(unsigned cpu, struct timer_req *r)
{
#ifdef CONFIG_PREEMPT_RT
	struct timer_base *b;

	unsigned long flags;

	if (!cpumask_test(&cpu_online_mask, cpu) || !cpu_base(cpu)->thread)
		return -ENODEV;
	b = cpu_base(cpu);
	r->done = 0;
	r->waiter = current_thread();
	flags = spin_lock_irqsave(&b->req_lock);
	if (!b->req_open) {
		spin_unlock_irqrestore(&b->req_lock, flags);
		return -ENODEV;
	}
	llist_add(&r->node, &b->requests);
	spin_unlock_irqrestore(&b->req_lock, flags);
	thread_wake(b->thread);
	thread_wait_until(__atomic_load_n(&r->done, __ATOMIC_ACQUIRE));
	return 0;
#else
	return smp_call_on_cpu(cpu, req_ipi, r);
#endif
}

/* Route an operation on a pending timer to the CPU that holds it. */
static bool timer_op(enum timer_op op, struct timer_list *t, uint64_t expires)
{
	for (;;) {
		struct timer_req r = { .op = op, .t = t, .expires = expires };
		unsigned cpu = timer_cpu(t);
		bool moved = false, was;

		/* A hint: local_op() looks again with the lock held and says if it moved. */
		if (!wheel_timer_pending(&t->wt) || cpu == raw_smp_processor_id()) {
			if (op == OP_DEL && !wheel_timer_pending(&t->wt))
				return false;
			was = local_op(op, t, expires, &moved);
			if (!moved)
				return was;
			continue;
		}
		if (call_owner(cpu, &r) == 0 && !r.moved)
			return r.result;
		/* It moved (or its CPU died and it is being migrated): look again. */
		if (!cpumask_test(&cpu_online_mask, cpu) && preemptible())
			wait_event(&timers_migrate_wq,
				   !wheel_timer_pending(&t->wt) || timer_cpu(t) != cpu);
		else
			arch_cpu_relax();
	}
}

void timer_setup(struct timer_list *t, void (*fn)(struct timer_list *t), unsigned flags)
{
	wheel_timer_init(&t->wt);
	t->wt.flags = flags & TIMER_USER_FLAGS;
	t->fn = fn;
	t->last_cpu = -1;
}

void timer_add(struct timer_list *t, uint64_t expires)
{
	bool moved = false;

	local_op(OP_ADD, t, expires, &moved);
}

int timer_add_on(struct timer_list *t, uint64_t expires, unsigned cpu)
{
	struct timer_req r = { .op = OP_ADD, .t = t, .expires = expires };

	t->wt.flags |= TIMER_PINNED;
	/* Stay on this CPU between the check and the add, or the timer lands elsewhere. */
	migrate_disable();
	if (cpu == smp_processor_id()) {
		timer_add(t, expires);
		migrate_enable();
		return 0;
	}
	migrate_enable();
	return call_owner(cpu, &r);
}

bool mod_timer(struct timer_list *t, uint64_t expires)
{
	return timer_op(OP_MOD, t, expires);
}

bool timer_delete(struct timer_list *t)
{
	return timer_op(OP_DEL, t, 0);
}

bool timer_pending(const struct timer_list *t)
{
	return wheel_timer_pending(&t->wt);
}

/*
 * The CPU whose base runs t's callback, or has taken t off its wheel to run it; -1 if none.
 * Racy reads of other CPUs' bases; the caller has made t not pending first.
 */
static bool runs_on(int cpu, const struct timer_list *t)
{
	return cpu >= 0 && cpu < NR_CPUS && cpu_table[cpu] &&
	       READ_ONCE(cpu_base(cpu)->running) == t;
}

static int callback_cpu(const struct timer_list *t)
{
	int last, cur;

	/* Pairs with run_timers(): a timer seen off its list is seen running. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	last = READ_ONCE(t->last_cpu);
	cur = (int)timer_cpu(t);
	return runs_on(last, t) ? last : runs_on(cur, t) ? cur : -1;
}

/* Wait until `cpu` no longer runs t's callback; returns whether a request deleted t there. */
static bool wait_callback(struct timer_list *t, int cpu)
{
#ifdef CONFIG_PREEMPT_RT
	/* The timer thread takes requests between callbacks: once ours is done, so is the
	 * callback. */
	struct timer_req r = { .op = OP_DEL, .t = t };

	if (call_owner((unsigned)cpu, &r) == 0)
		return r.result;
	/*
	 * The CPU is going down: its timers:online teardown lets the callback finish before the
	 * CPU goes on (and we may be on that CPU, above the timer thread: let it run).
	 */
	while (callback_cpu(t) == cpu)
		thread_yield_to_lower();
#else
	/* The callback runs in another CPU's softirq (ours cannot be interrupted by us). */
	while (callback_cpu(t) == cpu)
		arch_cpu_relax();
#endif
	return false;
}

bool timer_delete_sync(struct timer_list *t)
{
	bool was = timer_delete(t);
	/* Read racily: it matters only in interrupt context or our own timer thread, where this
	 * CPU is stable. */
	struct timer_base *self = cpu_base(raw_smp_processor_id());
	int cpu;

	if ((in_interrupt() || current_thread() == self->thread) && READ_ONCE(self->running) == t) {
		pr_bug("timer_delete_sync() from its own callback\n");
		return was;
	}
	/*
	 * A callback may have re-armed its timer while we waited (or another CPU did, and its
	 * expiry waited for this callback, see run_timers()): delete again after each wait.
	 */
	while ((cpu = callback_cpu(t)) >= 0) {
		was |= wait_callback(t, cpu);
		was |= timer_delete(t);
	}
	return was;
}

/* ---- expiry ------------------------------------------------------------------------------------ */

uint64_t timer_expiry_delay_ns;

void timer_fault_delay(const uint64_t *knob)
{
	uint64_t ns = READ_ONCE(*knob), until;

	if (!ns)
		return;
	until = arch_now_ns() + ns;
	while (arch_now_ns() < until)
		arch_cpu_relax();
}

#ifdef CONFIG_PREEMPT_RT
static void run_requests(struct timer_base *b);
#endif

/*
 * run_timers() on b: wait until `cpu` has finished t's callback (t is still on b's expired
 * list). Returns false if b stops running timers meanwhile (RT: its CPU is going down; t is
 * left pending there and moves with b's timers).
 */
static bool wait_prev_callback(struct timer_base *b, struct timer_list *t, int cpu)
{
	(void)b;
	while (READ_ONCE(cpu_base((unsigned)cpu)->running) == t) {
#ifdef CONFIG_PREEMPT_RT
		/*
		 * That callback may wait for a request to us: keep serving them. Our CPU's
		 * timers:online teardown waits for us to stop: do not wait for the callback then.
		 */
		if (!__atomic_load_n(&b->req_open, __ATOMIC_SEQ_CST))
			return false;
		run_requests(b);
		thread_yield_to_lower();
#else
		arch_cpu_relax();
#endif
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return true;
}

static void run_timers(void)
{
	struct timer_base *b;
	struct wheel_timer *wt;
	unsigned long flags;
	uint64_t now = jiffies_update();

	local_lock_irqsave(&this_cpu()->tmr.lock, flags);
	b = this_base();
	b->stats.softirqs++;
	wheel_collect(&b->wheel[0], now, &b->expired);
	wheel_collect(&b->wheel[1], now, &b->expired);
	while ((wt = wheel_list_first(&b->expired))) {
		struct timer_list *t = container_of(wt, struct timer_list, wt);
		int prev = t->last_cpu, self = (int)smp_processor_id();

		/*
		 * Re-armed here by another CPU while its callback still ran where it last expired:
		 * a callback never runs on two CPUs at once, so wait for that one, the timer still
		 * pending here (Linux keeps such a timer on the running base instead; ours are
		 * touched by their owner only). Then look at the list again.
		 */
		if (prev >= 0 && prev != self &&
		    READ_ONCE(cpu_base((unsigned)prev)->running) == t) {
			bool go_on;

			local_unlock_irqrestore(&this_cpu()->tmr.lock, flags);
			go_on = wait_prev_callback(b, t, prev);
			local_lock_irqsave(&this_cpu()->tmr.lock, flags);
			b = this_base();
			if (!go_on)
				break;
			continue;
		}
		/*
		 * Running before it leaves the list: timer_delete_sync() on another CPU reads the
		 * two without our lock, and one that finds the timer no longer pending must find
		 * it running, or it returns before the callback starts
		 * (selftest=timer_delete_sync_expiry).
		 */
		WRITE_ONCE(b->running, t);
		WRITE_ONCE(t->last_cpu, self);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		wheel_list_pop(&b->expired);
		/* Fault injection: hold the timer between leaving the wheel and its callback. */
		timer_fault_delay(&timer_expiry_delay_ns);
		b->stats.callbacks++;
		/* The base lock is held only around the wheel, never around a callback. */
		local_unlock_irqrestore(&this_cpu()->tmr.lock, flags);
		t->fn(t);
		local_lock_irqsave(&this_cpu()->tmr.lock, flags);
		b = this_base();
		/* Pairs with the acquire in wait_prev_callback() and callback_cpu(). */
		__atomic_store_n(&b->running, NULL, __ATOMIC_RELEASE);
	}
	local_unlock_irqrestore(&this_cpu()->tmr.lock, flags);
}

bool timers_due(struct timer_base *b, uint64_t now)
{
	return now >= READ_ONCE(b->wheel[0].next_expiry) ||
	       now >= READ_ONCE(b->wheel[1].next_expiry) || !wheel_list_empty(&b->expired);
}

void timers_raise_softirq(struct timer_base *b)
{
	__atomic_store_n(&b->softirq_pending, 1, __ATOMIC_RELEASE);
#ifdef CONFIG_PREEMPT_RT
	if (b->thread)
		thread_wake(b->thread);
#endif
}

void timer_softirq_irq_exit(void)
{
#ifndef CONFIG_PREEMPT_RT
	struct timer_base *b = this_base();

	if (in_interrupt() || !__atomic_load_n(&b->softirq_pending, __ATOMIC_ACQUIRE))
		return;
	while (__atomic_exchange_n(&b->softirq_pending, 0, __ATOMIC_ACQ_REL)) {
		preempt_count_add(SOFTIRQ_OFFSET);
		arch_irq_enable();
		run_timers();
		arch_irq_disable();
		preempt_count_add(-SOFTIRQ_OFFSET);
	}
#endif
}

#ifdef CONFIG_PREEMPT_RT
/* Per-CPU timer thread: wheel callbacks and requests from other CPUs, preemptible. */
/* Carry out every request queued on b and wake each requester. */
static void run_requests(struct timer_base *b)
{
	struct llist_node *n = llist_reverse(llist_del_all(&b->requests));

	while (n) {
		struct timer_req *r = container_of(n, struct timer_req, node);
		struct thread *waiter = r->waiter;

		n = n->next;
		run_req(r);
		__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
		thread_wake(waiter);
	}
}

static int timer_thread(void *arg)
{
	struct timer_base *b = arg;

	for (;;) {
		bool open = __atomic_load_n(&b->req_open, __ATOMIC_ACQUIRE);

		thread_prepare_sleep();
		if ((!open || !__atomic_load_n(&b->softirq_pending, __ATOMIC_ACQUIRE)) &&
		    llist_empty(&b->requests))
			thread_sleep();
		thread_cancel_sleep();
		/*
		 * Busy before taking and before looking at the gate: timers_offline_cpu()
		 * closes the gate, then waits while we are busy, so it never returns with a
		 * batch of requests in our hands or a callback half run (this thread is
		 * parked where it stands when the CPU dies; a callback stopped there would
		 * let timer_delete_sync() return before it finished).
		 */
		__atomic_store_n(&b->busy, 1, __ATOMIC_SEQ_CST);
		run_requests(b);
		if (__atomic_load_n(&b->req_open, __ATOMIC_SEQ_CST) &&
		    __atomic_exchange_n(&b->softirq_pending, 0, __ATOMIC_ACQ_REL))
			run_timers();
		__atomic_store_n(&b->busy, 0, __ATOMIC_RELEASE);
	}
	return 0;
}
#endif

/* ---- boot and hotplug ---------------------------------------------------------------------------- */

void time_init(void)
{
	tick_init();
	waitqueue_init(&timers_migrate_wq, "timers_migrate");
}

int timers_prepare_cpu(unsigned int cpu)
{
	struct timer_base *b = cpu_base(cpu);
	uint64_t now = jiffies_update();

	local_lock_init(&b->lock, "timer_base.lock");
	wheel_init(&b->wheel[0], now);
	wheel_init(&b->wheel[1], now);
	wheel_list_init(&b->expired);
	b->running = NULL;
	b->tick_stopped = false;
	b->online = false;
	b->softirq_pending = 0;
	b->requests.first = NULL;
	memset(&b->stats, 0, sizeof(b->stats));
	hrtimer_init(&b->tick, tick_hrtimer_fn);
	hrtimers_prepare_cpu(cpu);
	if (!b->req_lock_ready) { /* once: a caller may still hold it from a past life */
		spin_lock_init(&b->req_lock, "timer_base.req");
		b->req_lock_ready = true;
	}
	return 0;
}

int timers_online_cpu(unsigned int cpu)
{
#ifdef CONFIG_PREEMPT_RT
	struct timer_base *b = cpu_base(cpu);
	char name[16];

	unsigned long flags;

	if (!b->thread) { /* created at the first bring-up; parked while the CPU is away */
		snprintf(name, sizeof(name), "ktimers/%u", cpu);
		b->thread = kthread_run_on_cpu(name, timer_thread, b, TIMER_THREAD_PRIO, cpu);
		if (!b->thread)
			return -ENOMEM;
	}
	flags = spin_lock_irqsave(&b->req_lock);
	b->req_open = true;
	spin_unlock_irqrestore(&b->req_lock, flags);
	return 0;
#else
	(void)cpu;
	return 0;
#endif
}

int timers_offline_cpu(unsigned int cpu)
{
#ifdef CONFIG_PREEMPT_RT
	struct timer_base *b = cpu_base(cpu);
	unsigned long flags;

	flags = spin_lock_irqsave(&b->req_lock);
	__atomic_store_n(&b->req_open, false, __ATOMIC_SEQ_CST);
	spin_unlock_irqrestore(&b->req_lock, flags);
	/*
	 * What was queued before the gate closed: carry it out here, on the owning CPU. The
	 * timer thread may hold a batch of requests or be inside a callback, preempted by us:
	 * let it finish, or those requesters would sleep until this CPU came back (or
	 * forever) and the callback would stay half run. It marks itself busy before taking
	 * either, so work taken after our drain is seen here; expiry stays off after that
	 * (the wheel moves to a live CPU at timers:prepare).
	 */
	do {
		run_requests(b);
		if (__atomic_load_n(&b->busy, __ATOMIC_SEQ_CST))
			thread_yield_to_lower();
	} while (__atomic_load_n(&b->busy, __ATOMIC_SEQ_CST) || !llist_empty(&b->requests));
#else
	(void)cpu; /* cross-CPU calls close with the online mask (smp_cpu_offline) */
#endif
	return 0;
}

/* Point every timer queued in w at `cpu` (before the wheel moves them there). */
static void retarget(struct timer_wheel *w, unsigned cpu)
{
	unsigned lvl;

	for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++) {
		uint64_t map = w->pending[lvl]; /* only the non-empty buckets */

		while (map) {
			struct wheel_node *n =
			    w->buckets[WHEEL_LVL_OFFS(lvl) + __builtin_ctzll(map)];

			map &= map - 1;
			for (; n; n = n->next) {
				struct wheel_timer *wt = container_of(n, struct wheel_timer, node);

				WRITE_ONCE(wt->flags, (wt->flags & ~TIMER_CPUMASK) | cpu);
			}
		}
	}
}

int timers_dead_cpu(unsigned int cpu)
{
	struct timer_base *dead = cpu_base(cpu), *b;
	struct wheel_timer *wt;
	unsigned long flags;
	unsigned self, moved = 0, i;
	uint64_t now;

	local_lock_irqsave(&this_cpu()->tmr.lock, flags);
	b = this_base();
	self = smp_processor_id();
	now = jiffies_update();
	/* The dead CPU runs nothing: its base is ours to empty without its lock. */
	for (i = 0; i < 2; i++) {
		retarget(&dead->wheel[i], self);
		wheel_forward(&b->wheel[i], now); /* placed against now, as local_op() */
		moved += wheel_migrate(&b->wheel[i], &dead->wheel[i]);
	}
	/*
	 * Collected but never run: queue them here, expiries unchanged (they are due). Taken,
	 * not popped: a popped timer reads idle until wheel_add(), and a timer_delete_sync()
	 * elsewhere would return in between and find it armed again afterwards.
	 */
	while ((wt = wheel_list_take(&dead->expired))) {
		struct timer_list *t = container_of(wt, struct timer_list, wt);

		t->wt.flags = (t->wt.flags & ~TIMER_CPUMASK) | self;
		wheel_add(wheel_of(b, t), &t->wt, t->wt.expires);
		moved++;
	}
	b->stats.migrated_in += moved;
	if (moved && timers_due(b, now))
		timers_raise_softirq(b);
	local_unlock_irqrestore(&this_cpu()->tmr.lock, flags);
	hrtimers_dead_cpu(cpu);
	wake_up_all(&timers_migrate_wq);
	return 0;
}

void timer_get_stats(unsigned cpu, struct wheel_stats *wheel, struct timer_cpu_stats *base)
{
	struct cpu *c = cpu < NR_CPUS ? cpu_table[cpu] : NULL;
	struct wheel_stats w1;

	memset(wheel, 0, sizeof(*wheel));
	memset(base, 0, sizeof(*base));
	if (!c)
		return;
	/* Racy snapshots of counters: fine for reports. */
	wheel_read_stats(&c->tmr.wheel[0], wheel);
	wheel_read_stats(&c->tmr.wheel[1], &w1);
	wheel_stats_accumulate(wheel, &w1);
	*base = c->tmr.stats;
}
