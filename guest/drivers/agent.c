// SPDX-License-Identifier: MIT
/*
 * The agent channel's guest end (see agent.h). Every message is PLUGVM_AGENT_MSG_SIZE
 * bytes and goes out as one transmit buffer, so the host's stream stays framed however
 * the senders interleave. The receive stream is reassembled here (resync on bad magic).
 * dev_mutex is held by the agent thread while it uses the device and by the self-tests
 * that break it on purpose.
 */
#include "drivers/agent.h"

#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <linux/virtio_mmio.h>

#include "apps/workload.h"
#include "arch.h"
#include "drivers/virtio_mmio.h"
#include "kernel/cpu.h"
#include "kernel/cpuhp.h"
#include "kernel/errno.h"
#include "kernel/lockdep.h"
#include "kernel/mm.h"
#include "kernel/mutex.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "kernel/wait.h"
#include "plugvm_agent.h"
#include "plugvm_virtio.h"

#define MSG_SIZE      PLUGVM_AGENT_MSG_SIZE
#define TX_BUFS	      32
#define RX_BUFS	      8 /* one page of MSG_SIZE buffers */
#define EVENT_WAIT_NS 2000000ull /* events may come with interrupts off: short */
#define REPLY_WAIT_NS 100000000ull
#define AGENT_PRIO    70 /* above workloads and the hotplug driver; below cpuhp/N */

static struct virtio_dev *dev;
static struct virtio_tx tx;
static struct virtio_wait waiter;
static struct completion ready; /* the agent thread said hello and hooked its events */
static struct mutex dev_mutex;
static bool session; /* HELLO sent: events flow */

/* The agent thread (or whoever holds dev_mutex): */
static struct virtio_rx rx;
static uint8_t frame[MSG_SIZE];
static size_t frame_have;

static struct agent_stats stats; /* counters, updated with atomics */

static void count(uint64_t *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

/* ---- sending --------------------------------------------------------------------- */

static int send_msg(uint16_t type, uint32_t flags, uint32_t id, int32_t status, const void *payload,
		    uint32_t len, uint64_t wait_ns)
{
	struct plugvm_agent_msg m;
	int err;

	memset(&m, 0, sizeof(m));
	m.hdr.magic = PLUGVM_AGENT_MAGIC;
	m.hdr.version = PLUGVM_AGENT_VERSION;
	m.hdr.type = type;
	m.hdr.id = id;
	m.hdr.status = status;
	m.hdr.len = len;
	m.hdr.flags = flags;
	if (len)
		memcpy(m.payload, payload, len);
	err = virtio_tx_send(&tx, &m, sizeof(m), wait_ns);
	if (err == -EIO)
		virtio_wait_request_reset(&waiter);
	return err;
}

static void send_event(uint16_t type, const void *payload, uint32_t len)
{
	if (!READ_ONCE(session) ||
	    send_msg(type, PLUGVM_AGENT_F_EVENT, 0, 0, payload, len, EVENT_WAIT_NS))
		count(&stats.events_dropped);
	else
		count(&stats.events);
}

static void fill_hello(struct plugvm_agent_hello *h)
{
	memset(h, 0, sizeof(*h));
	h->version = PLUGVM_AGENT_VERSION;
	h->nr_cpus = nr_cpu_ids;
	h->nr_states = CPUHP_NR_STATES;
	h->online_state = CPUHP_ONLINE;
#ifdef CONFIG_PREEMPT_RT
	h->rt = 1;
#endif
}

static int send_hello(void)
{
	struct plugvm_agent_hello h;
	int err;

	fill_hello(&h);
	err =
	    send_msg(PLUGVM_AGENT_HELLO, PLUGVM_AGENT_F_EVENT, 0, 0, &h, sizeof(h), REPLY_WAIT_NS);
	if (!err)
		WRITE_ONCE(session, true);
	return err;
}

/* cpuhp trace hook: any CPU, any context (an arriving CPU with interrupts off). */
static void agent_trace(unsigned cpu, int state, bool up, uint64_t ns, int ret)
{
	struct plugvm_agent_ev_state ev = {
		.cpu = cpu, .state = state, .up = up, .result = ret, .ns = ns
	};

	send_event(PLUGVM_AGENT_EV_STATE, &ev, sizeof(ev));
}

static uint64_t lockdep_reports;

static void copy_name(char *dst, const char *src, size_t size)
{
	size_t n = src ? strnlen(src, size - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

/* lockdep_report_hook: after the report's printk lines, any context; must not sleep. */
static void agent_lockdep(const struct lockdep_report *r)
{
	struct plugvm_agent_ev_lockdep ev;

	memset(&ev, 0, sizeof(ev));
	ev.type = (uint32_t)r->type;
	ev.cpu = r->cpu;
	copy_name(ev.lock, r->name, sizeof(ev.lock));
	copy_name(ev.held, r->held, sizeof(ev.held));
	count(&lockdep_reports);
	send_event(PLUGVM_AGENT_EV_LOCKDEP, &ev, sizeof(ev));
}

/* ---- requests -------------------------------------------------------------------- */

static void fill_cpu(unsigned cpu, struct plugvm_agent_cpu *c)
{
	int failed = -1, err = cpuhp_last_error(cpu, &failed);
	int state = cpuhp_state(cpu);

	memset(c, 0, sizeof(*c));
	c->cpu = (uint16_t)cpu;
	if (cpumask_test(&cpu_present_mask, cpu))
		c->flags |= PLUGVM_AGENT_CPU_PRESENT;
	if (cpumask_test(&cpu_online_mask, cpu))
		c->flags |= PLUGVM_AGENT_CPU_ONLINE;
	if (state >= CPUHP_AP_SCHED_ACTIVE)
		c->flags |= PLUGVM_AGENT_CPU_ACTIVE;
	c->state = (int8_t)state;
	c->target = (int8_t)cpuhp_target(cpu);
	c->failed_state = (int8_t)(err ? failed : -1);
	c->last_error = (int16_t)err;
	c->fail_inject = (int8_t)cpuhp_fail_state(cpu);
}

static bool dynamic_state(int id)
{
	return (id >= CPUHP_BP_PREPARE_DYN && id <= CPUHP_BP_PREPARE_DYN_END) ||
	       (id >= CPUHP_AP_ONLINE_DYN && id <= CPUHP_AP_ONLINE_DYN_END);
}

static int req_list_states(const struct plugvm_agent_index *ix, void *out, uint32_t *len)
{
	struct plugvm_agent_states *s = out;
	uint32_t i;

	if (ix->first > CPUHP_NR_STATES)
		return PLUGVM_AGENT_EINVAL;
	s->total = CPUHP_NR_STATES;
	s->count = CPUHP_NR_STATES - ix->first;
	if (s->count > PLUGVM_AGENT_STATES_MAX)
		s->count = PLUGVM_AGENT_STATES_MAX;
	for (i = 0; i < s->count; i++) {
		struct plugvm_agent_state *st = &s->st[i];
		struct cpuhp_state_info info;
		int id = (int)(ix->first + i);

		memset(st, 0, sizeof(*st));
		st->id = id;
		st->section = (uint8_t)cpuhp_section_of(id);
		if (dynamic_state(id))
			st->flags |= PLUGVM_AGENT_STATE_DYNAMIC;
		if (!cpuhp_state_info(id, &info))
			continue; /* a free dynamic slot: name "" */
		copy_name(st->name, info.name, sizeof(st->name));
		if (info.can_rest)
			st->flags |= PLUGVM_AGENT_STATE_CAN_REST;
		if (info.can_fail)
			st->flags |= PLUGVM_AGENT_STATE_CAN_FAIL;
	}
	*len = 8 + s->count * (uint32_t)sizeof(s->st[0]);
	return 0;
}

static int req_get_cpus(const struct plugvm_agent_index *ix, void *out, uint32_t *len)
{
	struct plugvm_agent_cpus *c = out;
	uint32_t i;

	if (ix->first > nr_cpu_ids)
		return PLUGVM_AGENT_EINVAL;
	c->nr_cpus = nr_cpu_ids;
	c->count = nr_cpu_ids - ix->first;
	if (c->count > PLUGVM_AGENT_CPUS_MAX)
		c->count = PLUGVM_AGENT_CPUS_MAX;
	for (i = 0; i < c->count; i++)
		fill_cpu(ix->first + i, &c->cpu[i]);
	*len = 8 + c->count * (uint32_t)sizeof(c->cpu[0]);
	return 0;
}

static bool valid_state(int32_t state)
{
	return state >= 0 && state < CPUHP_NR_STATES;
}

static int req_set_target(const struct plugvm_agent_cpu_state *cs, void *out, uint32_t *len)
{
	struct plugvm_agent_target_done *t = out;
	uint64_t t0;
	int err, failed = -1;

	if (cs->cpu >= nr_cpu_ids || !valid_state(cs->state))
		return PLUGVM_AGENT_EINVAL;
	memset(t, 0, sizeof(*t));
	t->from = cpuhp_state(cs->cpu);
	t0 = arch_now_ns();
	err = cpuhp_set_target(cs->cpu, cs->state);
	t->ns = arch_now_ns() - t0;
	fill_cpu(cs->cpu, &t->cpu);
	if (err && cpuhp_last_error(cs->cpu, &failed) == 0)
		failed = -1; /* refused before it started (a bad target, say) */
	t->failed_state = err ? failed : -1;
	*len = sizeof(*t);
	return err;
}

static int req_fail(const struct plugvm_agent_cpu_state *cs)
{
	if (cs->cpu >= nr_cpu_ids || (cs->state != -1 && !valid_state(cs->state)))
		return PLUGVM_AGENT_EINVAL;
	return cpuhp_fail(cs->cpu, cs->state);
}

static int req_timer_stats(const struct plugvm_agent_index *ix, void *out, uint32_t *len)
{
	struct plugvm_agent_timer_stats *t = out;
	struct wheel_stats ws;
	struct timer_cpu_stats ts;
	unsigned i;

	_Static_assert(WHEEL_LVL_DEPTH == PLUGVM_AGENT_WHEEL_LEVELS, "wheel levels");
	if (ix->first >= nr_cpu_ids)
		return PLUGVM_AGENT_EINVAL;
	timer_get_stats(ix->first, &ws, &ts);
	memset(t, 0, sizeof(*t));
	t->cpu = ix->first;
	t->levels = PLUGVM_AGENT_WHEEL_LEVELS;
	t->ticks = ts.ticks;
	t->idle_tick_stops = ts.idle_tick_stops;
	t->softirqs = ts.softirqs;
	t->callbacks = ts.callbacks;
	t->remote_ops = ts.remote_ops;
	t->migrated_in = ts.migrated_in;
	t->clamped = ws.clamped;
	t->jiffy_ns = jiffies_to_ns(1);
	for (i = 0; i < PLUGVM_AGENT_WHEEL_LEVELS; i++) {
		t->lvl[i].added = ws.lvl[i].added;
		t->lvl[i].cancelled = ws.lvl[i].cancelled;
		t->lvl[i].expired = ws.lvl[i].expired;
		t->lvl[i].lateness_sum = ws.lvl[i].lateness_sum;
		t->lvl[i].lateness_max = ws.lvl[i].lateness_max;
	}
	*len = sizeof(*t);
	return 0;
}

static int req_sched_stats(const struct plugvm_agent_index *ix, void *out, uint32_t *len)
{
	struct plugvm_agent_sched_stats *s = out;
	struct sched_stats ss;
	struct cpu *c;

	if (ix->first >= nr_cpu_ids)
		return PLUGVM_AGENT_EINVAL;
	sched_get_stats(ix->first, &ss);
	memset(s, 0, sizeof(*s));
	s->cpu = ix->first;
	c = READ_ONCE(cpu_table[ix->first]);
	if (c) {
		/* A racy snapshot: rq.nr_running counts the running thread (not idle). */
		unsigned n = READ_ONCE(c->rq.nr_running);
		struct thread *curr = READ_ONCE(c->rq.curr);

		s->nr_running = n && curr && !curr->is_idle ? n - 1 : n;
	}
	s->switches = ss.switches;
	s->preemptions = ss.preemptions;
	s->wakeups_local = ss.wakeups_local;
	s->wakeups_remote = ss.wakeups_remote;
	s->migrations_in = ss.migrations_in;
	s->migrations_out = ss.migrations_out;
	s->idle_entries = ss.idle_entries;
	s->resched_ipis = ss.resched_ipis;
	*len = sizeof(*s);
	return 0;
}

static int req_lock_stats(void *out, uint32_t *len)
{
	struct plugvm_agent_lock_stats *l = out;
	struct lockdep_stats st;

	lockdep_get_stats(&st);
	memset(l, 0, sizeof(*l));
	l->acquisitions = st.acquisitions;
	l->releases = st.releases;
	l->inversions = st.inversions;
	l->not_held = st.not_held;
	l->held = st.held;
	l->bad_release = st.bad_release;
	l->recursion = st.recursion;
	l->classes = st.classes;
	l->dependencies = st.dependencies;
	l->max_depth = st.max_depth;
	l->enabled = st.enabled;
	l->reports = __atomic_load_n(&lockdep_reports, __ATOMIC_RELAXED);
	*len = sizeof(*l);
	return 0;
}

/* The bytes a request's argument needs: a shorter `len` is a bad argument. */
static uint32_t arg_size(uint16_t type)
{
	switch (type) {
	case PLUGVM_AGENT_LIST_STATES:
	case PLUGVM_AGENT_GET_CPUS:
	case PLUGVM_AGENT_TIMER_STATS:
	case PLUGVM_AGENT_SCHED_STATS:
		return sizeof(struct plugvm_agent_index);
	case PLUGVM_AGENT_SET_TARGET:
	case PLUGVM_AGENT_FAIL:
		return sizeof(struct plugvm_agent_cpu_state);
	case PLUGVM_AGENT_WORKLOAD_START:
		return sizeof(struct plugvm_agent_workload);
	case PLUGVM_AGENT_WORKLOAD_STOP:
		return sizeof(struct plugvm_agent_workload_id);
	default:
		return 0;
	}
}

/* Answer one request (magic already checked). Agent thread. */
static void handle(const struct plugvm_agent_msg *m)
{
	/* Arguments are copied out aligned; the reply payload is built in `out`. */
	union {
		struct plugvm_agent_index ix;
		struct plugvm_agent_cpu_state cs;
		struct plugvm_agent_workload w;
		struct plugvm_agent_workload_id wid;
	} a;
	union {
		struct plugvm_agent_hello hello;
		struct plugvm_agent_states states;
		struct plugvm_agent_cpus cpus;
		struct plugvm_agent_target_done done;
		struct plugvm_agent_timer_stats timers;
		struct plugvm_agent_sched_stats sched;
		struct plugvm_agent_lock_stats locks;
		struct plugvm_agent_workload_id wid;
		struct plugvm_agent_workload_result wres;
		uint8_t raw[PLUGVM_AGENT_PAYLOAD];
	} out;
	const struct plugvm_agent_hdr *h = &m->hdr;
	uint32_t len = 0;
	int st;

	count(&stats.requests);
	memset(&a, 0, sizeof(a));
	if (h->version != PLUGVM_AGENT_VERSION || h->len > PLUGVM_AGENT_PAYLOAD || h->flags) {
		/* Replies and events from the host, a future version, or junk. */
		count(&stats.malformed);
		st = PLUGVM_AGENT_EPROTO;
		goto reply;
	}
	if (h->len < arg_size(h->type)) {
		st = PLUGVM_AGENT_EINVAL;
		goto reply;
	}
	memcpy(&a, m->payload, arg_size(h->type));
	switch (h->type) {
	case PLUGVM_AGENT_HELLO:
		fill_hello(&out.hello);
		len = sizeof(out.hello);
		st = 0;
		break;
	case PLUGVM_AGENT_LIST_STATES:
		st = req_list_states(&a.ix, &out, &len);
		break;
	case PLUGVM_AGENT_GET_CPUS:
		st = req_get_cpus(&a.ix, &out, &len);
		break;
	case PLUGVM_AGENT_SET_TARGET:
		st = req_set_target(&a.cs, &out, &len);
		break;
	case PLUGVM_AGENT_FAIL:
		st = req_fail(&a.cs);
		break;
	case PLUGVM_AGENT_TIMER_STATS:
		st = req_timer_stats(&a.ix, &out, &len);
		break;
	case PLUGVM_AGENT_SCHED_STATS:
		st = req_sched_stats(&a.ix, &out, &len);
		break;
	case PLUGVM_AGENT_LOCK_STATS:
		st = req_lock_stats(&out, &len);
		break;
	case PLUGVM_AGENT_WORKLOAD_START:
		memset(&out.wid, 0, sizeof(out.wid));
		st = workload_start(&a.w, &out.wid.id);
		len = st ? 0 : sizeof(out.wid);
		break;
	case PLUGVM_AGENT_WORKLOAD_STOP:
		memset(&out.wres, 0, sizeof(out.wres));
		st = workload_stop(a.wid.id, &out.wres);
		len = st ? 0 : sizeof(out.wres);
		break;
	default:
		st = PLUGVM_AGENT_ENOSYS;
		break;
	}
reply:
	/* SET_TARGET answers with where the CPU is even when it failed. */
	if (st && h->type != PLUGVM_AGENT_SET_TARGET)
		len = 0;
	if (!send_msg(h->type, PLUGVM_AGENT_F_REPLY, h->id, st, &out, len, REPLY_WAIT_NS))
		count(&stats.replies);
}

/* ---- receiving --------------------------------------------------------------------- */

static void feed(const uint8_t *p, size_t n)
{
	static const uint8_t magic[4] = { PLUGVM_AGENT_MAGIC & 0xff,
					  (PLUGVM_AGENT_MAGIC >> 8) & 0xff,
					  (PLUGVM_AGENT_MAGIC >> 16) & 0xff,
					  PLUGVM_AGENT_MAGIC >> 24 };

	while (n) {
		size_t k;

		/* Byte by byte only until the magic is in: the rest is copied in one go. */
		if (frame_have < 4) {
			frame[frame_have++] = *p++;
			n--;
			if (frame[frame_have - 1] != magic[frame_have - 1]) {
				/* Drop the first byte, keep any magic prefix the rest forms. */
				count(&stats.skipped_bytes);
				memmove(frame, frame + 1, --frame_have);
				while (frame_have && memcmp(frame, magic, frame_have)) {
					count(&stats.skipped_bytes);
					memmove(frame, frame + 1, --frame_have);
				}
			}
			continue;
		}
		k = MSG_SIZE - frame_have;
		if (k > n)
			k = n;
		memcpy(frame + frame_have, p, k);
		frame_have += k;
		p += k;
		n -= k;
		if (frame_have == MSG_SIZE) {
			struct plugvm_agent_msg m;

			memcpy(&m, frame, sizeof(m));
			frame_have = 0;
			handle(&m);
		}
	}
}

/* Set the device up again and start a new session. dev_mutex held. */
static int reinit(void)
{
	int err;

	WRITE_ONCE(session, false);
	err = virtio_dev_start(dev, &tx);
	if (err)
		return err;
	frame_have = 0;
	if (rx.pool)
		virtio_rx_fill(&rx, true);
	count(&stats.resets);
	return send_hello();
}

/* Take what arrived, answer it, repost the buffers. dev_mutex held. */
static void poll_rx(void)
{
	const uint8_t *p;
	uint32_t len;

	/* A buffer is reposted only after its bytes were handled: one at a time. */
	while ((p = virtio_rx_get(&rx, &len))) {
		feed(p, len);
		virtio_rx_fill(&rx, false);
	}
}

static int agent_main(void *arg)
{
	(void)arg;
	mutex_lock(&dev_mutex);
	virtio_rx_fill(&rx, true);
	if (send_hello())
		pr_warn("agent: cannot say hello to the host\n");
	mutex_unlock(&dev_mutex);
	/* Events from now on; the boot bring-up is over (see agent.h). */
	cpuhp_set_trace(agent_trace);
	WRITE_ONCE(lockdep_report_hook, agent_lockdep);
	complete(&ready);
	for (;;) {
		bool reset = virtio_wait_next(&waiter, dev);

		mutex_lock(&dev_mutex);
		if (reset) {
			int err = reinit();

			if (err)
				pr_warn("agent: device reset failed (%d)\n", err);
			else
				printk("agent: device reset and re-initialised\n");
		}
		poll_rx();
		mutex_unlock(&dev_mutex);
	}
	return 0;
}

bool agent_init(void)
{
	dev = virtio_mmio_dev(PLUGVM_VIRTIO_SLOT_AGENT, VIRTIO_ID_CONSOLE);
	if (!dev)
		return false;
	if (virtio_tx_init(&tx, "agent_tx", dev, PLUGVM_VIRTIO_TXQ, TX_BUFS, MSG_SIZE) ||
	    virtio_dev_start(dev, &tx)) {
		pr_warn("agent: cannot start the agent channel\n");
		dev = NULL;
		return false;
	}
	mutex_init(&dev_mutex, "agent_dev");
	virtio_dev_set_irq(dev, virtio_wait_irq, &waiter);
	return true;
}

void agent_start(void)
{
	if (!dev)
		return;
	workload_init();
	_Static_assert(RX_BUFS * MSG_SIZE <= PAGE_SIZE, "receive buffers in one page");
	if (virtio_rx_init(&rx, dev, PLUGVM_VIRTIO_RXQ, RX_BUFS, MSG_SIZE)) {
		pr_warn("agent: no memory for the receive buffers\n");
		return;
	}
	completion_init(&ready);
	WRITE_ONCE(waiter.thread,
		   thread_run("agent", agent_main, NULL, AGENT_PRIO, THREAD_ANY_CPU));
	if (!waiter.thread)
		pr_warn("agent: cannot start the agent thread\n");
	/* What runs after us (self-tests, hotplug) is seen by the host's agent session. */
	else if (!wait_for_completion_timeout(&ready, 1000000000ull))
		pr_warn("agent: the agent thread did not start within 1 s\n");
}

struct virtio_dev *agent_device_claim(void)
{
	if (!dev || !waiter.thread)
		return NULL;
	mutex_lock(&dev_mutex);
	WRITE_ONCE(session, false);
	virtio_tx_pause(&tx, true);
	return dev;
}

int agent_device_release(void)
{
	int err = reinit();

	mutex_unlock(&dev_mutex);
	return err;
}

void agent_get_stats(struct agent_stats *st)
{
	st->requests = __atomic_load_n(&stats.requests, __ATOMIC_RELAXED);
	st->replies = __atomic_load_n(&stats.replies, __ATOMIC_RELAXED);
	st->events = __atomic_load_n(&stats.events, __ATOMIC_RELAXED);
	st->events_dropped = __atomic_load_n(&stats.events_dropped, __ATOMIC_RELAXED);
	st->malformed = __atomic_load_n(&stats.malformed, __ATOMIC_RELAXED);
	st->skipped_bytes = __atomic_load_n(&stats.skipped_bytes, __ATOMIC_RELAXED);
	st->resets = __atomic_load_n(&stats.resets, __ATOMIC_RELAXED);
}
