// SPDX-License-Identifier: MIT
/*
 * The control socket's commands that the guest agent answers (docs/qmp.md, docs/agent.md):
 * cpuhp states and targets, failure injection, timer / scheduler / lock statistics,
 * workloads, and the guest's events as QMP events. Every command is a deferred reply: it
 * sends one agent request, and each reply either sends the next (paged tables, one CPU at
 * a time) or answers the client. Main thread only, like the QMP server.
 */
#include "control_agent.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "../log.h"
#include "plugvm_abi.h"
#include "qmp.h"
#include "../vm.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak" /* see control.c */
#endif

#define QUERY_TIMEOUT_MS  30000
#define TARGET_TIMEOUT_MS 120000 /* a CPU down on a slow (emulated) host, with rollback */
#define MAX_STATES	  128
/* STATE events one cpuhp-set-target keeps: every state up and back down (a rollback). */
#define MAX_TARGET_STATES (2 * MAX_STATES)

/* The guest's cpuhp table, for names: refreshed on hello and by query-cpuhp-states. */
struct control_agent {
	uint32_t nr_states;
	struct plugvm_agent_state st[MAX_STATES];
	/*
	 * At most one refresh of the table on the guest's initiative: a guest repeating HELLO
	 * gets one more after the one in flight, not one each (issue 17 A.2).
	 */
	struct op *refresh;
	bool refresh_again;
	struct op *targets; /* set-target requests in flight (they collect STATE events) */
};

enum op_kind {
	OP_STATES,
	OP_CPUS,
	OP_TARGET,
	OP_FAIL,
	OP_TIMERS,
	OP_SCHED,
	OP_LOCKS,
	OP_WORK_START,
	OP_WORK_STOP,
	OP_REFRESH
};

struct op {
	enum op_kind kind;
	struct qmp_deferred *d; /* NULL for the internal refresh */
	struct json_object *acc; /* the answer being built */
	uint32_t next, last; /* paging / CPU range */
	uint32_t cpu;
	int32_t state;
	struct json_object *states; /* OP_TARGET: STATE events of this transition */
	uint32_t states_dropped; /* beyond MAX_TARGET_STATES */
	struct plugvm_agent_state *table; /* OP_STATES, OP_REFRESH: the table being read */
	uint32_t total;
	uint64_t sum_ns;
	struct op *next_target;
};

/*
 * The guest's possible CPUs as far as the host believes it: its HELLO's word, capped by the
 * VM's own maxcpus (a guest saying 0 or 2^32 - 1 must not set how long the host loops).
 */
static uint32_t guest_cpus(struct vm *vm)
{
	struct plugvm_agent_hello h;

	if (!agent_connected(vm, &h) || h.nr_cpus > vm->cfg->max_cpus)
		return vm->cfg->max_cpus;
	return h.nr_cpus;
}

static struct control_agent *ca_get(struct vm *vm)
{
	if (!vm->ctl_agent)
		vm->ctl_agent = calloc(1, sizeof(struct control_agent));
	return vm->ctl_agent;
}

void control_agent_free(struct vm *vm)
{
	free(vm->ctl_agent);
	vm->ctl_agent = NULL;
}

static const char *section_name(unsigned s)
{
	static const char *const names[] = { "prepare", "starting", "online" };

	return s < 3 ? names[s] : "unknown";
}

/* The name of state `id` (or its number when the table does not know it). */
static const char *state_name(struct vm *vm, int id, char *buf, size_t len)
{
	struct control_agent *ca = ca_get(vm);

	if (ca && id >= 0 && (uint32_t)id < ca->nr_states && ca->st[id].name[0])
		return ca->st[id].name;
	snprintf(buf, len, "%d", id);
	return buf;
}

static void add_state(struct vm *vm, struct json_object *o, const char *key, int id)
{
	char buf[16], idkey[32];

	json_object_object_add(o, key,
			       json_object_new_string(state_name(vm, id, buf, sizeof(buf))));
	snprintf(idkey, sizeof(idkey), "%s-id", key);
	json_object_object_add(o, idkey, json_object_new_int(id));
}

static void set_guest_error(struct qmp_error *err, int status, const char *what)
{
	switch (status) {
	case AGENT_ENOTCONN:
		qmp_error_set(err, "GenericError",
			      "%s: the guest agent is not connected (no virtio agent channel, or "
			      "the guest has not started its agent)",
			      what);
		break;
	case AGENT_ETIMEDOUT:
		qmp_error_set(err, "GenericError", "%s: the guest agent did not answer in time",
			      what);
		break;
	case AGENT_ESHUTDOWN:
		qmp_error_set(err, "GenericError", "%s: the VM is shutting down", what);
		break;
	case -EAGAIN:
		qmp_error_set(err, "GenericError", "%s: the agent channel is full, try again",
			      what);
		break;
	default:
		qmp_error_set(err, "GenericError", "%s: the guest answered %s (%d)", what,
			      strerror(-status), status);
	}
}

static void refresh_states(struct vm *vm);

/* The refresh in flight ended with `status`: start the one a HELLO asked for meanwhile. */
static void refresh_done(struct vm *vm, int status)
{
	struct control_agent *ca = vm->ctl_agent;

	if (!ca)
		return;
	ca->refresh = NULL;
	if (!ca->refresh_again)
		return;
	ca->refresh_again = false;
	/* Not after a reset (the next HELLO asks again) or at shutdown. */
	if (status != AGENT_ENOTCONN && status != AGENT_ESHUTDOWN)
		refresh_states(vm);
}

static void op_free(struct op *op)
{
	json_object_put(op->acc);
	json_object_put(op->states);
	free(op->table);
	free(op);
}

/* Answer the client (ret owned) or fail with `status`, and free op. */
static void op_finish(struct vm *vm, struct op *op, struct json_object *ret, int status,
		      const char *what)
{
	struct qmp_error err = { 0 };

	if (status)
		set_guest_error(&err, status, what);
	if (op->kind == OP_TARGET && vm->ctl_agent) {
		struct op **pp;

		for (pp = &vm->ctl_agent->targets; *pp; pp = &(*pp)->next_target)
			if (*pp == op) {
				*pp = op->next_target;
				break;
			}
	}
	if (op->d)
		qmp_deferred_return(op->d, status ? NULL : ret, status ? &err : NULL);
	if (status || !op->d)
		json_object_put(ret);
	if (op->kind == OP_REFRESH) {
		op_free(op);
		refresh_done(vm, status);
		return;
	}
	op_free(op);
}

static void on_reply(struct vm *vm, void *ctx, int status, const struct plugvm_agent_msg *m);

/* Send the next request of `op`; on failure answer with the error. */
static void op_send(struct vm *vm, struct op *op, uint16_t type, const void *p, size_t len,
		    unsigned timeout_ms)
{
	int ret = agent_request(vm, type, p, len, timeout_ms, on_reply, op);

	if (ret)
		op_finish(vm, op, NULL, ret, "agent request");
}

static void send_index(struct vm *vm, struct op *op, uint16_t type, uint32_t first)
{
	struct plugvm_agent_index idx = { .first = first };

	op_send(vm, op, type, &idx, sizeof(idx), QUERY_TIMEOUT_MS);
}

/* Start an operation from a command: the reply is deferred. */
static struct op *op_new(struct vm *vm, enum op_kind kind, struct qmp_error *err)
{
	bool table = kind == OP_STATES || kind == OP_REFRESH;
	struct op *op;

	if (!agent_connected(vm, NULL)) {
		set_guest_error(err, AGENT_ENOTCONN, "cannot ask the guest");
		return NULL;
	}
	op = calloc(1, sizeof(*op));
	if (op && table)
		op->table = calloc(MAX_STATES, sizeof(*op->table));
	/* Deferred last: once deferred, the command must not fail any more. */
	if (op && (!table || op->table) && kind != OP_REFRESH)
		op->d = qmp_defer(vm->qmp);
	if (!op || (table && !op->table) || (kind != OP_REFRESH && !op->d)) {
		if (op)
			free(op->table);
		free(op);
		qmp_error_set(err, "GenericError", "out of memory");
		return NULL;
	}
	op->kind = kind;
	return op;
}

/* ---- replies ------------------------------------------------------------------------ */

static bool payload_ok(const struct plugvm_agent_msg *m, size_t need)
{
	return m->hdr.len >= need;
}

static struct json_object *cpu_json(struct vm *vm, const struct plugvm_agent_cpu *c)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "cpu", json_object_new_int(c->cpu));
	json_object_object_add(o, "present",
			       json_object_new_boolean(c->flags & PLUGVM_AGENT_CPU_PRESENT));
	json_object_object_add(o, "online",
			       json_object_new_boolean(c->flags & PLUGVM_AGENT_CPU_ONLINE));
	json_object_object_add(o, "active",
			       json_object_new_boolean(c->flags & PLUGVM_AGENT_CPU_ACTIVE));
	add_state(vm, o, "state", c->state);
	add_state(vm, o, "target", c->target);
	if (c->fail_inject >= 0)
		add_state(vm, o, "fail", c->fail_inject);
	if (c->last_error) {
		json_object_object_add(o, "last-error", json_object_new_int(c->last_error));
		add_state(vm, o, "failed-state", c->failed_state);
	}
	return o;
}

static void reply_states(struct vm *vm, struct op *op, const struct plugvm_agent_msg *m)
{
	struct control_agent *ca = ca_get(vm);
	struct plugvm_agent_states s;
	uint32_t i;

	memcpy(&s, m->payload, sizeof(s));
	if (!payload_ok(m, 8) || s.count > PLUGVM_AGENT_STATES_MAX ||
	    m->hdr.len < 8 + s.count * sizeof(s.st[0]) || s.total > MAX_STATES ||
	    op->next + s.count > s.total || (!s.count && op->next < s.total)) {
		op_finish(vm, op, NULL, PLUGVM_AGENT_EPROTO, "query-cpuhp-states");
		return;
	}
	/* Read into the op; the cache changes only once the whole table is in, so names
	 * resolve against a complete table while another request runs between the pages. */
	if (op->next == 0)
		op->total = s.total;
	if (s.total != op->total) {
		op_finish(vm, op, NULL, PLUGVM_AGENT_EPROTO, "query-cpuhp-states");
		return;
	}
	for (i = 0; i < s.count; i++) {
		struct plugvm_agent_state *st = &s.st[i];
		uint32_t id = op->next + i;

		/* Names reach QMP clients and terminals: valid UTF-8, no control characters. */
		agent_str_clean(st->name, sizeof(st->name));
		op->table[id] = *st;
		op->table[id].id = (int32_t)id;
	}
	op->next += s.count;
	if (op->next < s.total) {
		send_index(vm, op, PLUGVM_AGENT_LIST_STATES, op->next);
		return;
	}
	memset(ca->st, 0, sizeof(ca->st));
	memcpy(ca->st, op->table, op->total * sizeof(ca->st[0]));
	ca->nr_states = op->total;
	if (op->kind == OP_REFRESH) {
		op_finish(vm, op, NULL, 0, NULL);
		return;
	}
	op->acc = json_object_new_array();
	for (i = 0; i < ca->nr_states; i++) {
		struct json_object *o;

		if (!ca->st[i].name[0])
			continue; /* a free dynamic slot */
		o = json_object_new_object();
		json_object_object_add(o, "id", json_object_new_int((int)i));
		json_object_object_add(o, "name", json_object_new_string(ca->st[i].name));
		json_object_object_add(o, "section",
				       json_object_new_string(section_name(ca->st[i].section)));
		json_object_object_add(
		    o, "can-rest",
		    json_object_new_boolean(ca->st[i].flags & PLUGVM_AGENT_STATE_CAN_REST));
		json_object_object_add(
		    o, "can-fail",
		    json_object_new_boolean(ca->st[i].flags & PLUGVM_AGENT_STATE_CAN_FAIL));
		json_object_object_add(
		    o, "dynamic",
		    json_object_new_boolean(ca->st[i].flags & PLUGVM_AGENT_STATE_DYNAMIC));
		json_object_array_add(op->acc, o);
	}
	op_finish(vm, op, json_object_get(op->acc), 0, NULL);
}

static void reply_cpus(struct vm *vm, struct op *op, const struct plugvm_agent_msg *m)
{
	struct plugvm_agent_cpus c;
	uint32_t i;

	memcpy(&c, m->payload, sizeof(c));
	if (!payload_ok(m, 8) || c.count > PLUGVM_AGENT_CPUS_MAX ||
	    m->hdr.len < 8 + c.count * sizeof(c.cpu[0]) || (!c.count && op->next < c.nr_cpus)) {
		op_finish(vm, op, NULL, PLUGVM_AGENT_EPROTO, "query-cpuhp");
		return;
	}
	if (!op->acc)
		op->acc = json_object_new_array();
	for (i = 0; i < c.count; i++)
		json_object_array_add(op->acc, cpu_json(vm, &c.cpu[i]));
	op->next += c.count;
	if (op->next < c.nr_cpus && op->next < vm->cfg->max_cpus) {
		send_index(vm, op, PLUGVM_AGENT_GET_CPUS, op->next);
		return;
	}
	op_finish(vm, op, json_object_get(op->acc), 0, NULL);
}

static void reply_target(struct vm *vm, struct op *op, int status, const struct plugvm_agent_msg *m)
{
	struct plugvm_agent_target_done t;
	struct json_object *o;

	/* A request the guest refused outright is an error; a transition that failed in a
	 * callback (and rolled back) is an answer, with the states it ran. */
	if (status == PLUGVM_AGENT_EINVAL || status == PLUGVM_AGENT_ENODEV ||
	    status == PLUGVM_AGENT_EBUSY || status == PLUGVM_AGENT_EPROTO ||
	    status == PLUGVM_AGENT_ENOSYS || !payload_ok(m, sizeof(t))) {
		op_finish(vm, op, NULL, status ? status : PLUGVM_AGENT_EPROTO, "cpuhp-set-target");
		return;
	}
	memcpy(&t, m->payload, sizeof(t));
	o = json_object_new_object();
	json_object_object_add(o, "cpu", json_object_new_int((int)op->cpu));
	json_object_object_add(o, "success", json_object_new_boolean(status == 0));
	if (status) {
		json_object_object_add(o, "error", json_object_new_int(status));
		add_state(vm, o, "failed-state", t.failed_state);
	}
	add_state(vm, o, "from", t.from);
	add_state(vm, o, "state", t.cpu.state);
	add_state(vm, o, "target", op->state);
	json_object_object_add(o, "ns", json_object_new_int64((int64_t)t.ns));
	json_object_object_add(o, "states-ns", json_object_new_int64((int64_t)op->sum_ns));
	json_object_object_add(o, "states", json_object_get(op->states));
	if (op->states_dropped)
		json_object_object_add(o, "states-dropped",
				       json_object_new_int64((int64_t)op->states_dropped));
	op_finish(vm, op, o, 0, NULL);
}

static void add_u64(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_int64((int64_t)v));
}

/* A uint64_t member of a payload struct, as a QMP key. */
struct u64_field {
	const char *key;
	size_t off;
};
#define U64(type, member, key)              \
	{                                   \
		key, offsetof(type, member) \
	}

static void add_fields(struct json_object *o, const void *base, const struct u64_field *f, size_t n)
{
	uint64_t v;
	size_t i;

	for (i = 0; i < n; i++) {
		memcpy(&v, (const uint8_t *)base + f[i].off, sizeof(v));
		add_u64(o, f[i].key, v);
	}
}
#define ADD_FIELDS(o, base, f) add_fields(o, base, f, sizeof(f) / sizeof(f[0]))

static const struct u64_field timer_fields[] = {
	U64(struct plugvm_agent_timer_stats, ticks, "ticks"),
	U64(struct plugvm_agent_timer_stats, idle_tick_stops, "idle-tick-stops"),
	U64(struct plugvm_agent_timer_stats, softirqs, "softirqs"),
	U64(struct plugvm_agent_timer_stats, callbacks, "callbacks"),
	U64(struct plugvm_agent_timer_stats, remote_ops, "remote-ops"),
	U64(struct plugvm_agent_timer_stats, migrated_in, "migrated-in"),
	U64(struct plugvm_agent_timer_stats, clamped, "clamped"),
	U64(struct plugvm_agent_timer_stats, jiffy_ns, "tick-ns"),
};
static const struct u64_field level_fields[] = {
	U64(struct plugvm_agent_wheel_level, added, "added"),
	U64(struct plugvm_agent_wheel_level, cancelled, "cancelled"),
	U64(struct plugvm_agent_wheel_level, expired, "expired"),
	U64(struct plugvm_agent_wheel_level, lateness_sum, "lateness-sum"),
	U64(struct plugvm_agent_wheel_level, lateness_max, "lateness-max"),
};
static const struct u64_field sched_fields[] = {
	U64(struct plugvm_agent_sched_stats, switches, "switches"),
	U64(struct plugvm_agent_sched_stats, preemptions, "preemptions"),
	U64(struct plugvm_agent_sched_stats, wakeups_local, "wakeups-local"),
	U64(struct plugvm_agent_sched_stats, wakeups_remote, "wakeups-remote"),
	U64(struct plugvm_agent_sched_stats, migrations_in, "migrations-in"),
	U64(struct plugvm_agent_sched_stats, migrations_out, "migrations-out"),
	U64(struct plugvm_agent_sched_stats, idle_entries, "idle-entries"),
	U64(struct plugvm_agent_sched_stats, resched_ipis, "resched-ipis"),
};
static const struct u64_field lock_fields[] = {
	U64(struct plugvm_agent_lock_stats, acquisitions, "acquisitions"),
	U64(struct plugvm_agent_lock_stats, releases, "releases"),
	U64(struct plugvm_agent_lock_stats, inversions, "inversions"),
	U64(struct plugvm_agent_lock_stats, not_held, "not-held"),
	U64(struct plugvm_agent_lock_stats, held, "held"),
	U64(struct plugvm_agent_lock_stats, bad_release, "bad-release"),
	U64(struct plugvm_agent_lock_stats, recursion, "recursion"),
	U64(struct plugvm_agent_lock_stats, reports, "reports"),
};
static const struct u64_field workload_fields[] = {
	U64(struct plugvm_agent_workload_result, ns, "ns"),
	U64(struct plugvm_agent_workload_result, iterations, "iterations"),
	U64(struct plugvm_agent_workload_result, timers_armed, "timers-armed"),
	U64(struct plugvm_agent_workload_result, timers_cancelled, "timers-cancelled"),
	U64(struct plugvm_agent_workload_result, timers_fired, "timers-fired"),
};

/* One CPU's statistics into op->acc. False (op finished with an error) if malformed. */
static bool reply_timers(struct vm *vm, struct op *op, const struct plugvm_agent_msg *m)
{
	struct plugvm_agent_timer_stats t;
	struct json_object *o, *lv;
	unsigned i;

	if (!payload_ok(m, sizeof(t))) {
		op_finish(vm, op, NULL, PLUGVM_AGENT_EPROTO, "query-timers");
		return false;
	}
	memcpy(&t, m->payload, sizeof(t));
	o = json_object_new_object();
	json_object_object_add(o, "cpu", json_object_new_int((int)t.cpu));
	ADD_FIELDS(o, &t, timer_fields);
	lv = json_object_new_array();
	for (i = 0; i < PLUGVM_AGENT_WHEEL_LEVELS && i < t.levels; i++) {
		struct json_object *l = json_object_new_object();

		json_object_object_add(l, "level", json_object_new_int((int)i));
		ADD_FIELDS(l, &t.lvl[i], level_fields);
		json_object_array_add(lv, l);
	}
	json_object_object_add(o, "levels", lv);
	json_object_array_add(op->acc, o);
	return true;
}

static bool reply_sched(struct vm *vm, struct op *op, const struct plugvm_agent_msg *m)
{
	struct plugvm_agent_sched_stats s;
	struct json_object *o;

	if (!payload_ok(m, sizeof(s))) {
		op_finish(vm, op, NULL, PLUGVM_AGENT_EPROTO, "query-sched");
		return false;
	}
	memcpy(&s, m->payload, sizeof(s));
	o = json_object_new_object();
	json_object_object_add(o, "cpu", json_object_new_int((int)s.cpu));
	json_object_object_add(o, "nr-running", json_object_new_int((int)s.nr_running));
	ADD_FIELDS(o, &s, sched_fields);
	json_object_array_add(op->acc, o);
	return true;
}

static struct json_object *locks_json(const struct plugvm_agent_lock_stats *l)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "enabled", json_object_new_boolean(l->enabled));
	ADD_FIELDS(o, l, lock_fields);
	add_u64(o, "classes", l->classes);
	add_u64(o, "dependencies", l->dependencies);
	add_u64(o, "max-depth", l->max_depth);
	return o;
}

static struct json_object *workload_json(const struct plugvm_agent_workload_result *w)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_int((int)w->id));
	json_object_object_add(o, "threads", json_object_new_int((int)w->threads));
	ADD_FIELDS(o, w, workload_fields);
	return o;
}

/* Per-CPU statistics: ENODEV/EINVAL for one CPU is skipped when walking all of them. */
static void per_cpu_next(struct vm *vm, struct op *op, uint16_t type)
{
	if (++op->next <= op->last) {
		send_index(vm, op, type, op->next);
		return;
	}
	op_finish(vm, op, json_object_get(op->acc), 0, NULL);
}

static void on_reply(struct vm *vm, void *ctx, int status, const struct plugvm_agent_msg *m)
{
	struct op *op = ctx;

	if (op->kind == OP_TARGET && m) {
		reply_target(vm, op, status, m);
		return;
	}
	if (status && (op->kind == OP_TIMERS || op->kind == OP_SCHED) && m && op->last > op->cpu &&
	    (status == PLUGVM_AGENT_ENODEV || status == PLUGVM_AGENT_EINVAL)) {
		per_cpu_next(vm, op,
			     op->kind == OP_TIMERS ? PLUGVM_AGENT_TIMER_STATS
						   : PLUGVM_AGENT_SCHED_STATS);
		return;
	}
	if (status || !m) {
		op_finish(vm, op, NULL, status ? status : PLUGVM_AGENT_EPROTO, "agent");
		return;
	}
	switch (op->kind) {
	case OP_STATES:
	case OP_REFRESH:
		reply_states(vm, op, m);
		break;
	case OP_CPUS:
		reply_cpus(vm, op, m);
		break;
	case OP_FAIL:
		op_finish(vm, op, NULL, 0, NULL);
		break;
	case OP_TIMERS:
		if (reply_timers(vm, op, m))
			per_cpu_next(vm, op, PLUGVM_AGENT_TIMER_STATS);
		break;
	case OP_SCHED:
		if (reply_sched(vm, op, m))
			per_cpu_next(vm, op, PLUGVM_AGENT_SCHED_STATS);
		break;
	case OP_LOCKS: {
		struct plugvm_agent_lock_stats l;

		if (!payload_ok(m, sizeof(l))) {
			op_finish(vm, op, NULL, PLUGVM_AGENT_EPROTO, "query-locks");
			break;
		}
		memcpy(&l, m->payload, sizeof(l));
		op_finish(vm, op, locks_json(&l), 0, NULL);
		break;
	}
	case OP_WORK_START: {
		struct plugvm_agent_workload_id w;
		struct json_object *o;

		if (!payload_ok(m, sizeof(w))) {
			op_finish(vm, op, NULL, PLUGVM_AGENT_EPROTO, "workload-start");
			break;
		}
		memcpy(&w, m->payload, sizeof(w));
		o = json_object_new_object();
		json_object_object_add(o, "id", json_object_new_int((int)w.id));
		op_finish(vm, op, o, 0, NULL);
		break;
	}
	case OP_WORK_STOP: {
		struct plugvm_agent_workload_result w;

		if (!payload_ok(m, sizeof(w))) {
			op_finish(vm, op, NULL, PLUGVM_AGENT_EPROTO, "workload-stop");
			break;
		}
		memcpy(&w, m->payload, sizeof(w));
		op_finish(vm, op, workload_json(&w), 0, NULL);
		break;
	}
	case OP_TARGET:
		break;
	}
}

/* ---- events ------------------------------------------------------------------------- */

static void refresh_states(struct vm *vm)
{
	struct control_agent *ca = ca_get(vm);
	struct qmp_error err = { 0 };
	struct op *op;

	if (!ca)
		return;
	if (ca->refresh) {
		ca->refresh_again = true;
		return;
	}
	op = op_new(vm, OP_REFRESH, &err);
	if (!op)
		return;
	ca->refresh = op;
	send_index(vm, op, PLUGVM_AGENT_LIST_STATES, 0);
}

void control_agent_event(struct vm *vm, const struct plugvm_agent_msg *m)
{
	struct control_agent *ca = ca_get(vm);

	if (!ca)
		return;
	if (m->hdr.type == PLUGVM_AGENT_HELLO) {
		refresh_states(vm);
		return;
	}
	if (m->hdr.type == PLUGVM_AGENT_EV_STATE &&
	    m->hdr.len >= sizeof(struct plugvm_agent_ev_state)) {
		struct plugvm_agent_ev_state e;
		struct json_object *o;
		struct op *op;

		memcpy(&e, m->payload, sizeof(e));
		o = json_object_new_object();
		json_object_object_add(o, "cpu", json_object_new_int((int)e.cpu));
		add_state(vm, o, "state", e.state);
		json_object_object_add(o, "direction",
				       json_object_new_string(e.up ? "up" : "down"));
		add_u64(o, "ns", e.ns);
		json_object_object_add(o, "result", json_object_new_int(e.result));
		for (op = ca->targets; op; op = op->next_target) {
			if (op->cpu != e.cpu)
				continue;
			/* Up to 120 s of a guest's events: keep what a transition can run. */
			if (json_object_array_length(op->states) >= MAX_TARGET_STATES) {
				op->states_dropped++;
				continue;
			}
			json_object_array_add(op->states, json_object_get(o));
			op->sum_ns += e.ns;
		}
		if (vm->qmp)
			qmp_server_event_key(vm->qmp, CONTROL_SUB_CPUHP, "CPUHP_STATE", e.cpu, o);
		else
			json_object_put(o);
		return;
	}
	if (m->hdr.type == PLUGVM_AGENT_EV_LOCKDEP &&
	    m->hdr.len >= sizeof(struct plugvm_agent_ev_lockdep)) {
		struct plugvm_agent_ev_lockdep e;
		struct json_object *o;

		memcpy(&e, m->payload, sizeof(e));
		agent_str_clean(e.lock, sizeof(e.lock));
		agent_str_clean(e.held, sizeof(e.held));
		o = json_object_new_object();
		json_object_object_add(o, "cpu", json_object_new_int((int)e.cpu));
		json_object_object_add(o, "type", json_object_new_int((int)e.type));
		json_object_object_add(o, "lock", json_object_new_string(e.lock));
		json_object_object_add(o, "held", json_object_new_string(e.held));
		if (vm->qmp)
			qmp_server_event_key(vm->qmp, 0, "GUEST_LOCKDEP_WARNING", e.cpu, o);
		else
			json_object_put(o);
	}
}

/* ---- commands ----------------------------------------------------------------------- */

/* A cpu argument within the guest's CPUs; -1 after setting err. */
static int arg_cpu(struct vm *vm, struct json_object *args, const char *key, struct qmp_error *err)
{
	uint32_t nr = guest_cpus(vm);
	struct json_object *v;
	int64_t cpu;

	if (!json_object_object_get_ex(args, key, &v))
		return -2; /* absent */
	cpu = json_object_get_int64(v);
	if (cpu < 0 || cpu >= nr) {
		if (nr)
			qmp_error_set(err, "GenericError", "'%s' must be a CPU number from 0 to %u",
				      key, nr - 1);
		else
			qmp_error_set(err, "GenericError", "'%s': the guest has no CPU", key);
		return -1;
	}
	return (int)cpu;
}

/* A state argument: a name from the guest's table or an id. -2 for "none" / -1 (clear). */
static int arg_state(struct vm *vm, struct json_object *v, bool allow_none, struct qmp_error *err)
{
	struct control_agent *ca = ca_get(vm);
	uint32_t i;

	if (json_object_is_type(v, json_type_int)) {
		int64_t id = json_object_get_int64(v);

		if (allow_none && id == -1)
			return -2;
		if (id < 0 || id >= (int64_t)ca->nr_states) {
			qmp_error_set(err, "GenericError",
				      "state %lld is not a cpuhp state id (0..%u)", (long long)id,
				      ca->nr_states ? ca->nr_states - 1 : 0);
			return -1;
		}
		return (int)id;
	}
	if (!json_object_is_type(v, json_type_string)) {
		qmp_error_set(err, "GenericError", "'state' must be a state name or id");
		return -1;
	}
	if (allow_none && !strcmp(json_object_get_string(v), "none"))
		return -2;
	for (i = 0; i < ca->nr_states; i++)
		if (ca->st[i].name[0] && !strcmp(ca->st[i].name, json_object_get_string(v)))
			return (int)i;
	qmp_error_set(err, "GenericError",
		      "'%.64s' is not a cpuhp state (query-cpuhp-states lists them)",
		      json_object_get_string(v));
	return -1;
}

static struct json_object *query_cpuhp_states(void *ctx, struct json_object *args,
					      struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct op *op = op_new(vm, OP_STATES, err);

	(void)args;
	if (op)
		send_index(vm, op, PLUGVM_AGENT_LIST_STATES, 0);
	return NULL;
}

static struct json_object *query_cpuhp(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct op *op = op_new(vm, OP_CPUS, err);

	(void)args;
	if (op)
		send_index(vm, op, PLUGVM_AGENT_GET_CPUS, 0);
	return NULL;
}

static struct json_object *cpuhp_set_target(void *ctx, struct json_object *args,
					    struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct control_agent *ca = ca_get(vm);
	struct plugvm_agent_cpu_state cs;
	struct json_object *v;
	struct op *op;
	int cpu, state;

	if (!agent_connected(vm, NULL)) {
		set_guest_error(err, AGENT_ENOTCONN, "cpuhp-set-target");
		return NULL;
	}
	cpu = arg_cpu(vm, args, "cpu", err);
	if (cpu < 0)
		return NULL;
	json_object_object_get_ex(args, "state", &v);
	state = arg_state(vm, v, false, err);
	if (state < 0)
		return NULL;
	for (op = ca->targets; op; op = op->next_target)
		if (op->cpu == (uint32_t)cpu) {
			qmp_error_set(err, "GenericError", "cpu %d is already moving to a target",
				      cpu);
			return NULL;
		}
	op = op_new(vm, OP_TARGET, err);
	if (!op)
		return NULL;
	op->cpu = (uint32_t)cpu;
	op->state = state;
	op->states = json_object_new_array();
	op->next_target = ca->targets;
	ca->targets = op;
	cs.cpu = (uint32_t)cpu;
	cs.state = state;
	op_send(vm, op, PLUGVM_AGENT_SET_TARGET, &cs, sizeof(cs), TARGET_TIMEOUT_MS);
	return NULL;
}

static struct json_object *cpuhp_fail(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct plugvm_agent_cpu_state cs;
	struct json_object *v;
	struct op *op;
	int cpu, state;

	if (!agent_connected(vm, NULL)) {
		set_guest_error(err, AGENT_ENOTCONN, "cpuhp-fail");
		return NULL;
	}
	cpu = arg_cpu(vm, args, "cpu", err);
	if (cpu < 0)
		return NULL;
	json_object_object_get_ex(args, "state", &v);
	state = arg_state(vm, v, true, err);
	if (state == -1)
		return NULL;
	op = op_new(vm, OP_FAIL, err);
	if (!op)
		return NULL;
	cs.cpu = (uint32_t)cpu;
	cs.state = state == -2 ? -1 : state;
	op_send(vm, op, PLUGVM_AGENT_FAIL, &cs, sizeof(cs), QUERY_TIMEOUT_MS);
	return NULL;
}

static struct json_object *per_cpu_query(struct vm *vm, struct json_object *args, enum op_kind kind,
					 uint16_t type, struct qmp_error *err)
{
	uint32_t nr = guest_cpus(vm);
	struct op *op;
	int cpu;

	if (!agent_connected(vm, NULL)) {
		set_guest_error(err, AGENT_ENOTCONN, "statistics");
		return NULL;
	}
	cpu = arg_cpu(vm, args, "cpu", err);
	if (cpu == -1)
		return NULL;
	if (cpu < 0 && !nr)
		return json_object_new_array(); /* a guest without CPUs has no statistics */
	op = op_new(vm, kind, err);
	if (!op)
		return NULL;
	op->acc = json_object_new_array();
	op->cpu = op->next = cpu >= 0 ? (uint32_t)cpu : 0;
	op->last = cpu >= 0 ? (uint32_t)cpu : nr - 1;
	send_index(vm, op, type, op->next);
	return NULL;
}

static struct json_object *query_timers(void *ctx, struct json_object *args, struct qmp_error *err)
{
	return per_cpu_query(ctx, args, OP_TIMERS, PLUGVM_AGENT_TIMER_STATS, err);
}

static struct json_object *query_sched(void *ctx, struct json_object *args, struct qmp_error *err)
{
	return per_cpu_query(ctx, args, OP_SCHED, PLUGVM_AGENT_SCHED_STATS, err);
}

static struct json_object *query_locks(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct op *op = op_new(vm, OP_LOCKS, err);

	(void)args;
	if (op)
		op_send(vm, op, PLUGVM_AGENT_LOCK_STATS, NULL, 0, QUERY_TIMEOUT_MS);
	return NULL;
}

static struct json_object *workload_start(void *ctx, struct json_object *args,
					  struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct plugvm_agent_workload w = { 0 };
	struct json_object *v;
	const char *kind;
	struct op *op;
	int64_t n;

	json_object_object_get_ex(args, "kind", &v);
	kind = json_object_get_string(v);
	if (!strcmp(kind, "hog"))
		w.kind = PLUGVM_AGENT_WORK_HOG;
	else if (!strcmp(kind, "timers"))
		w.kind = PLUGVM_AGENT_WORK_TIMERS;
	else if (!strcmp(kind, "mixed"))
		w.kind = PLUGVM_AGENT_WORK_HOG | PLUGVM_AGENT_WORK_TIMERS;
	else {
		qmp_error_set(err, "GenericError", "'kind' must be hog, timers or mixed");
		return NULL;
	}
	n = json_object_object_get_ex(args, "threads", &v) ? json_object_get_int64(v) : 2;
	if (n < 1 || n > 64) {
		qmp_error_set(err, "GenericError", "'threads' must be 1 to 64");
		return NULL;
	}
	w.threads = (uint32_t)n;
	n = json_object_object_get_ex(args, "period-us", &v) ? json_object_get_int64(v) : 1000;
	if (n < 10 || n > 10000000) {
		qmp_error_set(err, "GenericError", "'period-us' must be 10 to 10000000");
		return NULL;
	}
	w.period_us = (uint32_t)n;
	op = op_new(vm, OP_WORK_START, err);
	if (op)
		op_send(vm, op, PLUGVM_AGENT_WORKLOAD_START, &w, sizeof(w), QUERY_TIMEOUT_MS);
	return NULL;
}

static struct json_object *workload_stop(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct plugvm_agent_workload_id w = { 0 };
	struct json_object *v;
	struct op *op;
	int64_t id;

	json_object_object_get_ex(args, "id", &v);
	id = json_object_get_int64(v);
	if (id < 0 || id > UINT32_MAX) {
		qmp_error_set(err, "GenericError", "'id' is not a workload id");
		return NULL;
	}
	w.id = (uint32_t)id;
	op = op_new(vm, OP_WORK_STOP, err);
	if (op)
		op_send(vm, op, PLUGVM_AGENT_WORKLOAD_STOP, &w, sizeof(w), QUERY_TIMEOUT_MS);
	return NULL;
}

static struct json_object *cpuhp_subscribe(void *ctx, struct json_object *args,
					   struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *v;
	bool on = !json_object_object_get_ex(args, "enable", &v) || json_object_get_boolean(v);

	if (!qmp_subscribe(vm->qmp, CONTROL_SUB_CPUHP, on))
		qmp_error_set(err, "GenericError", "no client to subscribe");
	return NULL;
}

static struct json_object *query_agent(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct plugvm_agent_hello h;
	struct agent_stats st;
	struct json_object *o = json_object_new_object();
	/* Connected: the agent said hello and its state table is known (names resolve). */
	bool up = agent_connected(vm, &h) && vm->ctl_agent && vm->ctl_agent->nr_states;

	(void)args;
	(void)err;
	agent_get_stats(vm, &st);
	json_object_object_add(o, "present", json_object_new_boolean(vm->agent != NULL));
	json_object_object_add(o, "connected", json_object_new_boolean(up));
	if (up) {
		json_object_object_add(o, "version", json_object_new_int((int)h.version));
		json_object_object_add(o, "cpus", json_object_new_int((int)h.nr_cpus));
		json_object_object_add(o, "states", json_object_new_int((int)h.nr_states));
		json_object_object_add(o, "rt", json_object_new_boolean(h.rt));
	}
	add_u64(o, "requests", st.requests);
	add_u64(o, "replies", st.replies);
	add_u64(o, "events", st.events);
	add_u64(o, "timeouts", st.timeouts);
	add_u64(o, "malformed", st.malformed);
	add_u64(o, "skipped-bytes", st.skipped_bytes);
	add_u64(o, "dropped", st.dropped);
	return o;
}

static const struct qmp_arg cpu_opt_args[] = {
	{ "cpu", json_type_int, false },
	{ NULL, json_type_null, false },
};
static const struct qmp_arg target_args[] = {
	{ "cpu", json_type_int, true },
	{ "state", json_type_null, true },
	{ NULL, json_type_null, false },
};
static const struct qmp_arg workload_start_args[] = {
	{ "kind", json_type_string, true },
	{ "threads", json_type_int, false },
	{ "period-us", json_type_int, false },
	{ NULL, json_type_null, false },
};
static const struct qmp_arg workload_stop_args[] = {
	{ "id", json_type_int, true },
	{ NULL, json_type_null, false },
};
static const struct qmp_arg subscribe_args[] = {
	{ "enable", json_type_boolean, false },
	{ NULL, json_type_null, false },
};

const struct qmp_command control_agent_commands[] = {
	{ "query-agent", query_agent, NULL },
	{ "query-cpuhp-states", query_cpuhp_states, NULL },
	{ "query-cpuhp", query_cpuhp, NULL },
	{ "cpuhp-set-target", cpuhp_set_target, target_args },
	{ "cpuhp-fail", cpuhp_fail, target_args },
	{ "cpuhp-subscribe", cpuhp_subscribe, subscribe_args },
	{ "query-timers", query_timers, cpu_opt_args },
	{ "query-sched", query_sched, cpu_opt_args },
	{ "query-locks", query_locks, NULL },
	{ "workload-start", workload_start, workload_start_args },
	{ "workload-stop", workload_stop, workload_stop_args },
	{ NULL, NULL, NULL },
};
