// SPDX-License-Identifier: MIT
/*
 * The load accumulators and their latch writer (sched_load.h). Compiled into the guest
 * (called by sched.c's update points) and into the host unit test.
 */
#include "kernel/sched_load.h"

void sched_load_start(struct sched_load *l, uint64_t now_ns)
{
	l->last_ns = now_ns;
	l->idle = false;
	l->nr_running = 0;
	l->online = true;
}

void sched_load_stop(struct sched_load *l, uint64_t now_ns)
{
	sched_load_account(l, now_ns, false, 0);
	l->online = false;
}

bool sched_load_account(struct sched_load *l, uint64_t now_ns, bool idle, uint32_t nr_running)
{
	bool changed = idle != l->idle;

	if (now_ns > l->last_ns) {
		uint64_t dt = now_ns - l->last_ns;

		if (!l->idle) {
			l->busy_ns += dt;
			if (l->nr_running >= 2)
				l->wait_ns += dt;
		}
		l->last_ns = now_ns;
	}
	l->idle = idle;
	l->nr_running = nr_running;
	return changed;
}

bool sched_load_tick_due(const struct sched_load *l)
{
	return l->last_ns - l->published_ns >= SCHED_LOAD_TICK_PUBLISH_NS;
}

void sched_load_published(struct sched_load *l)
{
	l->published_ns = l->last_ns;
}

void sched_load_publish(struct plugvm_load_latch *latch, const struct sched_load *l, uint32_t flags)
{
	struct plugvm_load_cpu rec = {
		.flags = (flags & PLUGVM_LOAD_HELD) | (l->online ? PLUGVM_LOAD_ONLINE : 0),
		.nr_running = l->idle ? 0 : l->nr_running,
		.now_ns = l->last_ns,
		.busy_ns = l->busy_ns,
		.wait_ns = l->wait_ns,
	};
	uint32_t seq = latch->seq;

	/* An odd count a hostile test left behind is made even first: readers never wait. */
	seq += seq & 1;
	__atomic_store_n(&latch->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	latch->copy[0] = rec;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&latch->seq, seq + 2, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	latch->copy[1] = rec;
}
