// SPDX-License-Identifier: MIT
/*
 * The agent service: what each request of the agent channel does, and the events the guest
 * sends on its own (common/plugvm_agent.h). The transport (drivers/agent.c: virtio
 * framing, the agent thread, HELLO) calls in through struct agent_service; the requests
 * are answered here from what they ask about: cpuhp (states, CPUs, targets, failures),
 * timers, run queues, the lock validator, and workloads (apps/workload.c). Agent thread,
 * one request at a time.
 */
#include "apps/agent_service.h"

#include "apps/workload.h"
#include "arch.h"
#include "drivers/agent.h"
#include "kernel/cpu.h"
#include "kernel/cpuhp.h"
#include "kernel/errno.h"
#include "kernel/lockdep.h"
#include "kernel/sched.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "plugvm_agent.h"

/* The agent's status values are the kernel's errors, negated Linux errno both. */
_Static_assert(PLUGVM_AGENT_EINVAL == -EINVAL && PLUGVM_AGENT_EIO == -EIO &&
		   PLUGVM_AGENT_EBUSY == -EBUSY && PLUGVM_AGENT_ENODEV == -ENODEV &&
		   PLUGVM_AGENT_ENOSPC == -ENOSPC && PLUGVM_AGENT_ENOSYS == -ENOSYS &&
		   PLUGVM_AGENT_EPROTO == -EPROTO,
	       "agent status values");

static uint64_t lockdep_reports; /* seen by the event hook, reported by LOCK_STATS */

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

/* ---- events ------------------------------------------------------------------------ */

/*
 * STATE events cost the guest a virtio message each (a large part of a hot-add's emulated
 * guest code on kvm_pvm: bench/hotplug/breakdown measures it): they go out only while the
 * host asked for them (TRACE: a QMP client subscribed) and for the CPU a SET_TARGET is
 * moving.
 */
static int trace_on; /* set by TRACE, agent thread */
static int target_cpu = -1; /* the CPU of the SET_TARGET in progress, agent thread */

/* cpuhp trace hook: any CPU, any context (an arriving CPU with interrupts off). */
static void agent_trace(unsigned cpu, int state, bool up, uint64_t ns, int ret)
{
	struct plugvm_agent_ev_state ev = {
		.cpu = cpu, .state = state, .up = up, .result = ret, .ns = ns
	};

	if (!__atomic_load_n(&trace_on, __ATOMIC_ACQUIRE) &&
	    __atomic_load_n(&target_cpu, __ATOMIC_ACQUIRE) != (int)cpu)
		return;
	agent_send_event(PLUGVM_AGENT_EV_STATE, &ev, sizeof(ev));
}

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
	__atomic_add_fetch(&lockdep_reports, 1, __ATOMIC_RELAXED);
	agent_send_event(PLUGVM_AGENT_EV_LOCKDEP, &ev, sizeof(ev));
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

static int req_list_states(const void *arg, void *out, uint32_t *len)
{
	const struct plugvm_agent_index *ix = arg;
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

static int req_get_cpus(const void *arg, void *out, uint32_t *len)
{
	const struct plugvm_agent_index *ix = arg;
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

static int req_set_target(const void *arg, void *out, uint32_t *len)
{
	const struct plugvm_agent_cpu_state *cs = arg;
	struct plugvm_agent_target_done *t = out;
	uint64_t t0;
	int err, failed = -1;

	if (cs->cpu >= nr_cpu_ids || !valid_state(cs->state))
		return PLUGVM_AGENT_EINVAL;
	memset(t, 0, sizeof(*t));
	t->from = cpuhp_state(cs->cpu);
	t0 = arch_now_ns();
	__atomic_store_n(&target_cpu, (int)cs->cpu, __ATOMIC_RELEASE); /* its STATE events */
	err = cpuhp_set_target(cs->cpu, cs->state);
	__atomic_store_n(&target_cpu, -1, __ATOMIC_RELEASE);
	t->ns = arch_now_ns() - t0;
	fill_cpu(cs->cpu, &t->cpu);
	if (err && cpuhp_last_error(cs->cpu, &failed) == 0)
		failed = -1; /* refused before it started (a bad target, say) */
	t->failed_state = err ? failed : -1;
	*len = sizeof(*t);
	return err;
}

static int req_fail(const void *arg, void *out, uint32_t *len)
{
	const struct plugvm_agent_cpu_state *cs = arg;

	(void)out;
	(void)len;
	if (cs->cpu >= nr_cpu_ids || (cs->state != -1 && !valid_state(cs->state)))
		return PLUGVM_AGENT_EINVAL;
	return cpuhp_fail(cs->cpu, cs->state);
}

static int req_trace(const void *arg, void *out, uint32_t *len)
{
	const struct plugvm_agent_trace *tr = arg;

	(void)out;
	(void)len;
	if (tr->on > 1 || tr->reserved)
		return PLUGVM_AGENT_EINVAL;
	__atomic_store_n(&trace_on, (int)tr->on, __ATOMIC_RELEASE);
	return 0;
}

static int req_timer_stats(const void *arg, void *out, uint32_t *len)
{
	const struct plugvm_agent_index *ix = arg;
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

static int req_sched_stats(const void *arg, void *out, uint32_t *len)
{
	const struct plugvm_agent_index *ix = arg;
	struct plugvm_agent_sched_stats *s = out;
	struct sched_stats ss;
	struct cpu *c;

	if (ix->first >= nr_cpu_ids)
		return PLUGVM_AGENT_EINVAL;
	sched_get_stats(ix->first, &ss);
	memset(s, 0, sizeof(*s));
	s->cpu = ix->first;
	c = READ_ONCE(cpu_table[ix->first]);
	/* A racy snapshot of the queue, the running thread not counted, as the ABI says. */
	if (c)
		s->nr_running = READ_ONCE(c->rq.nr_running);
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

static int req_lock_stats(const void *arg, void *out, uint32_t *len)
{
	struct plugvm_agent_lock_stats *l = out;
	struct lockdep_stats st;

	(void)arg;
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

static int req_hello(const void *arg, void *out, uint32_t *len)
{
	(void)arg;
	fill_hello(out);
	*len = sizeof(struct plugvm_agent_hello);
	return 0;
}

static int req_workload_start(const void *arg, void *out, uint32_t *len)
{
	struct plugvm_agent_workload_id *wid = out;
	int st;

	memset(wid, 0, sizeof(*wid));
	st = workload_start(arg, &wid->id);
	*len = sizeof(*wid);
	return st;
}

static int req_workload_stop(const void *arg, void *out, uint32_t *len)
{
	const struct plugvm_agent_workload_id *wid = arg;

	memset(out, 0, sizeof(struct plugvm_agent_workload_result));
	*len = sizeof(struct plugvm_agent_workload_result);
	return workload_stop(wid->id, out);
}

/*
 * Every request: the bytes its argument needs (a shorter `len` is a bad argument) and
 * what answers it, building the reply payload in `out` and its length in *len.
 */
static const struct agent_request {
	uint32_t arg_size;
	int (*fn)(const void *arg, void *out, uint32_t *len);
} requests[] = {
	[PLUGVM_AGENT_HELLO] = { .fn = req_hello },
	[PLUGVM_AGENT_LIST_STATES] = { .arg_size = sizeof(struct plugvm_agent_index),
				       .fn = req_list_states },
	[PLUGVM_AGENT_GET_CPUS] = { .arg_size = sizeof(struct plugvm_agent_index),
				    .fn = req_get_cpus },
	[PLUGVM_AGENT_SET_TARGET] = { .arg_size = sizeof(struct plugvm_agent_cpu_state),
				      .fn = req_set_target },
	[PLUGVM_AGENT_FAIL] = { .arg_size = sizeof(struct plugvm_agent_cpu_state), .fn = req_fail },
	[PLUGVM_AGENT_TIMER_STATS] = { .arg_size = sizeof(struct plugvm_agent_index),
				       .fn = req_timer_stats },
	[PLUGVM_AGENT_SCHED_STATS] = { .arg_size = sizeof(struct plugvm_agent_index),
				       .fn = req_sched_stats },
	[PLUGVM_AGENT_LOCK_STATS] = { .fn = req_lock_stats },
	[PLUGVM_AGENT_WORKLOAD_START] = { .arg_size = sizeof(struct plugvm_agent_workload),
					  .fn = req_workload_start },
	[PLUGVM_AGENT_WORKLOAD_STOP] = { .arg_size = sizeof(struct plugvm_agent_workload_id),
					 .fn = req_workload_stop },
	[PLUGVM_AGENT_TRACE] = { .arg_size = sizeof(struct plugvm_agent_trace), .fn = req_trace },
};

static int request(uint16_t type, const void *arg, uint32_t arg_len, void *out, uint32_t *len)
{
	const struct agent_request *r = type < ARRAY_SIZE(requests) ? &requests[type] : NULL;
	int st;

	*len = 0;
	if (!r || !r->fn)
		return PLUGVM_AGENT_ENOSYS;
	if (arg_len < r->arg_size)
		return PLUGVM_AGENT_EINVAL;
	st = r->fn(arg, out, len);
	/* SET_TARGET answers with where the CPU is even when it failed. */
	if (st && type != PLUGVM_AGENT_SET_TARGET)
		*len = 0;
	return st;
}

/*
 * The session began (HELLO sent): from now on lock reports go out, and cpuhp callbacks as
 * agent_trace() says.
 */
static void started(void)
{
	cpuhp_set_trace(agent_trace);
	WRITE_ONCE(lockdep_report_hook, agent_lockdep);
}

static const struct agent_service service = {
	.hello = fill_hello,
	.request = request,
	.started = started,
};

void agent_service_start(void)
{
	workload_init();
	agent_start(&service);
}
