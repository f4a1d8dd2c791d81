// SPDX-License-Identifier: MIT
/*
 * The host end of the agent channel. vCPU threads frame the guest's bytes into messages
 * and queue them (bounded: a guest flooding events loses the excess, counted); the main
 * loop matches replies to requests in flight, hands events to the control socket and
 * expires requests the guest never answers. A driver reset of the agent device ends the
 * session: its requests fail with AGENT_ENOTCONN until the guest says hello again.
 *
 * A guest can write messages much faster than the main loop handles them, so neither side
 * does unbounded work under `lock`: a vCPU frames into its own batch and takes the lock
 * once per AGENT_BATCH messages to copy them in (or count them dropped), and the main loop
 * takes at most AGENT_BATCH per lock hold and AGENT_BUDGET per AGENT_PERIOD_MS, leaving
 * the rest queued: a flooding guest gets a bounded share of the main thread, which stays
 * free to answer QMP and signals (test_agent.c, test_flood.py).
 */
#include "agent.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "../clock.h"
#include "../devices/virtio_console.h"
#include "../log.h"
#include "../vm.h"

#define QUEUE_MAX 4096 /* guest messages waiting for the main loop (2 MiB) */

struct pending {
	uint32_t id;
	uint64_t deadline_ns;
	agent_reply_fn fn;
	void *ctx;
	struct pending *next;
};

/* A queued guest message, or a reset marker (reset == true). */
struct qmsg {
	struct plugvm_agent_msg m;
	bool reset;
};

struct agent {
	struct vm *vm;
	int event_fd;
	/* Guarded by the agent device's lock (the virtio_agent_ops callers, vCPU threads): */
	struct agent_framer framer;
	struct plugvm_agent_msg *batch; /* AGENT_BATCH framed, not yet queued */
	unsigned nr_batch;
	struct log_ratelimit drop_rl;
	/* Guarded by lock (vCPU threads and the main loop), each hold O(AGENT_BATCH): */
	pthread_mutex_t lock;
	struct qmsg *queue; /* ring of QUEUE_MAX */
	unsigned q_head, q_len;
	uint64_t dropped, skipped;
	/* Main thread only: */
	struct qmsg *work; /* AGENT_BATCH taken from the queue in one hold */
	uint64_t period_start_ns; /* the budget's period */
	unsigned period_done; /* messages handled in it */
	bool backlog; /* the budget ran out: the next pass is at the period's end */
	struct log_ratelimit rl;
	bool connected;
	struct plugvm_agent_hello hello;
	uint32_t next_id;
	struct pending *pending; /* by deadline, earliest first */
	unsigned nr_pending; /* at most AGENT_MAX_PENDING */
	struct log_ratelimit timeout_rl;
	void (*event_fn)(struct vm *vm, const struct plugvm_agent_msg *m);
	uint64_t requests, replies, events, timeouts, malformed;
};

static void channel_rx(void *opaque, const uint8_t *buf, size_t len);
static void channel_reset(void *opaque);

int agent_init(struct vm *vm)
{
	struct agent *a;

	if (!vm->virtio)
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a || !(a->queue = calloc(QUEUE_MAX, sizeof(*a->queue))) ||
	    !(a->batch = calloc(AGENT_BATCH, sizeof(*a->batch))) ||
	    !(a->work = calloc(AGENT_BATCH, sizeof(*a->work)))) {
		if (a) {
			free(a->queue);
			free(a->batch);
		}
		free(a);
		log_error("out of memory");
		return -ENOMEM;
	}
	a->vm = vm;
	a->next_id = 1;
	pthread_mutex_init(&a->lock, NULL);
	a->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (a->event_fd < 0) {
		int err = errno;

		log_error("eventfd: %s", strerror(err));
		free(a->queue);
		free(a->batch);
		free(a->work);
		free(a);
		return -err;
	}
	vm->agent = a;
	virtio_agent_set_ops(vm, &(struct virtio_agent_ops){
				     .opaque = a, .rx = channel_rx, .reset = channel_reset });
	return 0;
}

static void fail_all(struct agent *a, int status)
{
	struct pending *p;

	while ((p = a->pending)) {
		a->pending = p->next;
		a->nr_pending--;
		p->fn(a->vm, p->ctx, status, NULL);
		free(p);
	}
}

void agent_shutdown(struct vm *vm)
{
	if (vm->agent)
		fail_all(vm->agent, AGENT_ESHUTDOWN);
}

void agent_exit(struct vm *vm)
{
	struct agent *a = vm->agent;

	if (!a)
		return;
	fail_all(a, AGENT_ESHUTDOWN);
	close(a->event_fd);
	pthread_mutex_destroy(&a->lock);
	free(a->queue);
	free(a->batch);
	free(a->work);
	free(a);
	vm->agent = NULL;
}

int agent_fd(const struct vm *vm)
{
	return vm->agent ? vm->agent->event_fd : -1;
}

static void wake_main_loop(struct agent *a)
{
	static const uint64_t one = 1;

	if (write(a->event_fd, &one, sizeof(one)) < 0)
		log_debug("agent: eventfd: %s", strerror(errno));
}

/*
 * Queue the batch (what fits; the rest is counted dropped), then a reset marker if
 * `reset`. One hold of a->lock, O(AGENT_BATCH). The device's lock held.
 */
static void flush_batch(struct agent *a, bool reset)
{
	unsigned i, n = a->nr_batch, queued;
	uint64_t dropped;

	a->nr_batch = 0;
	pthread_mutex_lock(&a->lock);
	queued = QUEUE_MAX - a->q_len < n ? QUEUE_MAX - a->q_len : n;
	for (i = 0; i < queued; i++) {
		struct qmsg *q = &a->queue[(a->q_head + a->q_len++) % QUEUE_MAX];

		q->m = a->batch[i];
		q->reset = false;
	}
	if (reset && a->q_len < QUEUE_MAX) {
		a->queue[(a->q_head + a->q_len++) % QUEUE_MAX].reset = true;
		queued++;
	}
	a->dropped += n - (queued < n ? queued : n);
	dropped = a->dropped;
	a->skipped = a->framer.skipped;
	pthread_mutex_unlock(&a->lock);
	if (queued)
		wake_main_loop(a);
	if (queued < n && log_ratelimit_ok(&a->drop_rl, 1))
		log_warn("agent: guest messages arrive faster than they are handled: %llu dropped",
			 (unsigned long long)dropped);
}

static void framed(void *ctx, const struct plugvm_agent_msg *m)
{
	struct agent *a = ctx;

	a->batch[a->nr_batch++] = *m;
	if (a->nr_batch == AGENT_BATCH)
		flush_batch(a, false);
}

/* Bytes the guest sent: vCPU thread, the agent device's lock held (virtio_agent_ops). */
static void channel_rx(void *opaque, const uint8_t *buf, size_t len)
{
	struct agent *a = opaque;

	agent_framer_feed(&a->framer, buf, len, framed, a);
	flush_batch(a, false);
}

/* The guest's driver reset the device: the session ends. As channel_rx(). */
static void channel_reset(void *opaque)
{
	struct agent *a = opaque;

	agent_framer_reset(&a->framer);
	/* A marker after what was framed before the reset, so replies among it still count. */
	flush_batch(a, true);
}

/* A reply: the request in flight with its id gets it (and leaves the list). */
static void complete_request(struct agent *a, const struct plugvm_agent_msg *m)
{
	struct pending **pp, *p;

	for (pp = &a->pending; (p = *pp); pp = &p->next)
		if (p->id == m->hdr.id)
			break;
	if (!p) {
		/* Late (timed out) or invented: nothing waits for it. */
		log_debug("agent: reply %u to no request in flight", m->hdr.id);
		return;
	}
	*pp = p->next;
	a->nr_pending--;
	a->replies++;
	p->fn(a->vm, p->ctx, m->hdr.status, m);
	free(p);
}

/* One framed message from the guest, checked: a reply, or an event for the control socket. */
static void receive_message(struct agent *a, const struct plugvm_agent_msg *m)
{
	const char *why = agent_msg_check(m);

	if (why) {
		a->malformed++;
		log_guest_warn(&a->rl, "agent: malformed message from the guest (type %u): %s",
			       m->hdr.type, why);
		return;
	}
	if (m->hdr.flags == PLUGVM_AGENT_F_REPLY) {
		complete_request(a, m);
		return;
	}
	a->events++;
	if (m->hdr.type == PLUGVM_AGENT_HELLO) {
		if (m->hdr.len < sizeof(a->hello)) {
			a->malformed++;
			return;
		}
		memcpy(&a->hello, m->payload, sizeof(a->hello));
		if (!a->connected)
			log_info("agent: guest agent connected (%u CPUs, %u cpuhp states)",
				 a->hello.nr_cpus, a->hello.nr_states);
		a->connected = true;
	}
	if (a->event_fn)
		a->event_fn(a->vm, m);
}

/* The list is ordered by deadline: only its head can be due. */
static void check_timeouts(struct agent *a)
{
	struct pending *p;
	uint64_t now = clock_now_ns();

	while ((p = a->pending) && p->deadline_ns <= now) {
		a->pending = p->next;
		a->nr_pending--;
		a->timeouts++;
		log_guest_warn(&a->timeout_rl, "agent: request %u not answered in time", p->id);
		p->fn(a->vm, p->ctx, AGENT_ETIMEDOUT, NULL);
		free(p);
	}
}

void agent_process(struct vm *vm)
{
	struct agent *a = vm->agent;
	uint64_t count, now;
	unsigned n, i;
	bool more = false;

	if (!a)
		return;
	if (read(a->event_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
		log_debug("agent: eventfd: %s", strerror(errno));
	now = clock_now_ns();
	if (now - a->period_start_ns >= AGENT_PERIOD_MS * 1000000ull) {
		a->period_start_ns = now;
		a->period_done = 0;
	}
	while (a->period_done < AGENT_BUDGET) {
		n = AGENT_BUDGET - a->period_done < AGENT_BATCH ? AGENT_BUDGET - a->period_done
								: AGENT_BATCH;
		pthread_mutex_lock(&a->lock);
		if (n > a->q_len)
			n = a->q_len;
		for (i = 0; i < n; i++)
			a->work[i] = a->queue[(a->q_head + i) % QUEUE_MAX];
		a->q_head = (a->q_head + n) % QUEUE_MAX;
		a->q_len -= n;
		more = a->q_len > 0;
		pthread_mutex_unlock(&a->lock);
		for (i = 0; i < n; i++) {
			const struct qmsg *q = &a->work[i];

			if (!q->reset) {
				receive_message(a, &q->m);
				continue;
			}
			if (a->connected)
				log_info("agent: the guest reset the agent channel");
			a->connected = false;
			fail_all(a, AGENT_ENOTCONN);
		}
		a->period_done += n;
		if (!more)
			break;
	}
	/* Spent: what is queued, or comes meanwhile, waits for the next period. */
	a->backlog = more || a->period_done >= AGENT_BUDGET;
	check_timeouts(a);
}

int agent_next_timeout_ms(const struct vm *vm)
{
	const struct agent *a = vm->agent;
	uint64_t now, first = UINT64_MAX;

	if (!a)
		return -1;
	if (a->backlog)
		first = a->period_start_ns + AGENT_PERIOD_MS * 1000000ull;
	if (a->pending && a->pending->deadline_ns < first)
		first = a->pending->deadline_ns;
	if (first == UINT64_MAX)
		return -1;
	now = clock_now_ns();
	return first <= now ? 0 : (int)((first - now) / 1000000 + 1);
}

int agent_request(struct vm *vm, uint16_t type, const void *payload, size_t len,
		  unsigned timeout_ms, agent_reply_fn fn, void *ctx)
{
	struct agent *a = vm->agent;
	struct plugvm_agent_msg m;
	struct pending *p, **pp;
	int ret;

	if (!a || !a->connected)
		return AGENT_ENOTCONN;
	if (len > PLUGVM_AGENT_PAYLOAD)
		return -EINVAL;
	if (a->nr_pending >= AGENT_MAX_PENDING)
		return -EAGAIN;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	memset(&m, 0, sizeof(m));
	m.hdr.magic = PLUGVM_AGENT_MAGIC;
	m.hdr.version = PLUGVM_AGENT_VERSION;
	m.hdr.type = type;
	m.hdr.id = a->next_id++;
	if (!a->next_id)
		a->next_id = 1;
	m.hdr.len = (uint32_t)len;
	if (len)
		memcpy(m.payload, payload, len);
	ret = virtio_agent_send(vm, &m, sizeof(m));
	if (ret) {
		free(p);
		return ret == -ENODEV ? AGENT_ENOTCONN : ret;
	}
	p->id = m.hdr.id;
	p->deadline_ns = clock_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	p->fn = fn;
	p->ctx = ctx;
	/* Ordered by deadline; at most AGENT_MAX_PENDING entries to pass. */
	for (pp = &a->pending; *pp && (*pp)->deadline_ns <= p->deadline_ns; pp = &(*pp)->next)
		;
	p->next = *pp;
	*pp = p;
	a->nr_pending++;
	a->requests++;
	return 0;
}

bool agent_connected(const struct vm *vm, struct plugvm_agent_hello *hello)
{
	const struct agent *a = vm->agent;

	if (!a || !a->connected)
		return false;
	if (hello)
		*hello = a->hello;
	return true;
}

void agent_set_event_fn(struct vm *vm, void (*fn)(struct vm *vm, const struct plugvm_agent_msg *m))
{
	if (vm->agent)
		vm->agent->event_fn = fn;
}

void agent_get_stats(const struct vm *vm, struct agent_stats *st)
{
	struct agent *a = vm->agent;

	memset(st, 0, sizeof(*st));
	if (!a)
		return;
	st->requests = a->requests;
	st->replies = a->replies;
	st->events = a->events;
	st->timeouts = a->timeouts;
	st->malformed = a->malformed;
	pthread_mutex_lock(&a->lock);
	st->skipped_bytes = a->skipped;
	st->dropped = a->dropped;
	st->queued = a->q_len;
	pthread_mutex_unlock(&a->lock);
}
