// SPDX-License-Identifier: MIT
/*
 * The agent's commands as operations (see agent_requests.h): one request in flight each,
 * its reply turned into the next request or the client's answer. Every reply is checked
 * against what was asked before any of it is used: a guest's counts and lengths never set
 * how far the host reads or loops.
 */
#include "agent_requests.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../vm.h"
#include "agent.h"
#include "agent_json.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak" /* see control.c */
#endif

/* STATE events one cpuhp-set-target keeps: every state up and back down (a rollback). */
#define MAX_TARGET_STATES (2 * AGENT_STATES_MAX)

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

struct control_agent *control_agent_get(struct vm *vm)
{
	if (!vm->ctl_agent)
		vm->ctl_agent = calloc(1, sizeof(struct control_agent));
	return vm->ctl_agent;
}

void agent_set_error(struct qmp_error *err, int status, const char *what)
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
		/* The guest's word: any int, INT_MIN too (fuzz_agent: -INT_MIN overflowed). */
		qmp_error_set(err, "GenericError", "%s: the guest answered %s (%d)", what,
			      status < 0 && status > -4096 ? strerror(-status) : "an unknown error",
			      status);
	}
}

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
		agent_refresh_states(vm);
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
		agent_set_error(&err, status, what);
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

void agent_op_send(struct vm *vm, struct op *op, uint16_t type, const void *p, size_t len,
		   unsigned timeout_ms)
{
	int ret = agent_request(vm, type, p, len, timeout_ms, on_reply, op);

	if (ret)
		op_finish(vm, op, NULL, ret, "agent request");
}

static void send_index(struct vm *vm, struct op *op, uint16_t type, uint32_t first)
{
	struct plugvm_agent_index idx = { .first = first };

	agent_op_send(vm, op, type, &idx, sizeof(idx), AGENT_QUERY_TIMEOUT_MS);
}

struct op *agent_op_new(struct vm *vm, enum op_kind kind, struct qmp_error *err)
{
	bool table = kind == OP_STATES || kind == OP_REFRESH;
	struct op *op;

	if (!agent_connected(vm, NULL)) {
		agent_set_error(err, AGENT_ENOTCONN, "cannot ask the guest");
		return NULL;
	}
	op = calloc(1, sizeof(*op));
	if (op && table)
		op->table = calloc(AGENT_STATES_MAX, sizeof(*op->table));
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

void agent_op_start(struct vm *vm, enum op_kind kind, uint16_t type, const void *p, size_t len,
		    struct qmp_error *err)
{
	struct op *op = agent_op_new(vm, kind, err);

	if (op)
		agent_op_send(vm, op, type, p, len, AGENT_QUERY_TIMEOUT_MS);
}

/* Per-CPU statistics: the CPUs one after another (OP_TIMERS, OP_SCHED). */
static uint16_t per_cpu_type(const struct op *op)
{
	return op->kind == OP_TIMERS ? PLUGVM_AGENT_TIMER_STATS : PLUGVM_AGENT_SCHED_STATS;
}

void agent_op_start_per_cpu(struct vm *vm, struct op *op, uint32_t first, uint32_t last)
{
	op->acc = json_object_new_array();
	op->cpu = op->next = first;
	op->last = last;
	send_index(vm, op, per_cpu_type(op), op->next);
}

void agent_op_start_target(struct vm *vm, struct op *op, uint32_t cpu, int32_t state)
{
	struct control_agent *ca = control_agent_get(vm); /* made by the command already */
	struct plugvm_agent_cpu_state cs = { .cpu = cpu, .state = state };

	op->cpu = cpu;
	op->state = state;
	op->states = json_object_new_array();
	op->next_target = ca->targets;
	ca->targets = op;
	agent_op_send(vm, op, PLUGVM_AGENT_SET_TARGET, &cs, sizeof(cs), AGENT_TARGET_TIMEOUT_MS);
}

bool agent_target_pending(struct vm *vm, uint32_t cpu)
{
	struct op *op;

	for (op = vm->ctl_agent ? vm->ctl_agent->targets : NULL; op; op = op->next_target)
		if (op->cpu == cpu)
			return true;
	return false;
}

/* ---- replies ------------------------------------------------------------------------ */

static bool payload_ok(const struct plugvm_agent_msg *m, size_t need)
{
	return m->hdr.len >= need;
}

/*
 * A page of a paged table (the state table, the CPU list): 8 bytes of header, then `count`
 * entries of `size` bytes, at most `max`, and some progress while `next` < `total`.
 */
static bool page_ok(const struct plugvm_agent_msg *m, uint32_t count, uint32_t max, size_t size,
		    uint32_t next, uint32_t total)
{
	return payload_ok(m, 8) && count <= max && m->hdr.len >= 8 + count * size &&
	       (count || next >= total);
}

/*
 * The reply's payload, `len` bytes, copied to `out`; a shorter one ends the operation
 * with EPROTO (`what` failed) and returns false.
 */
static bool take_payload(struct vm *vm, struct op *op, const struct plugvm_agent_msg *m, void *out,
			 size_t len, const char *what)
{
	if (!payload_ok(m, len)) {
		op_finish(vm, op, NULL, PLUGVM_AGENT_EPROTO, what);
		return false;
	}
	memcpy(out, m->payload, len);
	return true;
}

static void reply_states(struct vm *vm, struct op *op, const struct plugvm_agent_msg *m)
{
	struct control_agent *ca = control_agent_get(vm);
	struct plugvm_agent_states s;
	uint32_t i;

	memcpy(&s, m->payload, sizeof(s));
	if (!page_ok(m, s.count, PLUGVM_AGENT_STATES_MAX, sizeof(s.st[0]), op->next, s.total) ||
	    s.total > AGENT_STATES_MAX || op->next + s.count > s.total) {
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
	agent_states_set(&ca->states, op->table, op->total);
	if (op->kind == OP_REFRESH) {
		op_finish(vm, op, NULL, 0, NULL);
		return;
	}
	op->acc = agent_states_json(&ca->states);
	op_finish(vm, op, json_object_get(op->acc), 0, NULL);
}

static void reply_cpus(struct vm *vm, struct op *op, const struct plugvm_agent_msg *m)
{
	struct control_agent *ca = control_agent_get(vm);
	struct plugvm_agent_cpus c;
	uint32_t i;

	memcpy(&c, m->payload, sizeof(c));
	if (!page_ok(m, c.count, PLUGVM_AGENT_CPUS_MAX, sizeof(c.cpu[0]), op->next, c.nr_cpus)) {
		op_finish(vm, op, NULL, PLUGVM_AGENT_EPROTO, "query-cpuhp");
		return;
	}
	if (!op->acc)
		op->acc = json_object_new_array();
	for (i = 0; i < c.count; i++)
		json_object_array_add(op->acc, agent_json_cpu(ca ? &ca->states : NULL, &c.cpu[i]));
	op->next += c.count;
	if (op->next < c.nr_cpus && op->next < vm->cfg->max_cpus) {
		send_index(vm, op, PLUGVM_AGENT_GET_CPUS, op->next);
		return;
	}
	op_finish(vm, op, json_object_get(op->acc), 0, NULL);
}

static void reply_target(struct vm *vm, struct op *op, int status, const struct plugvm_agent_msg *m)
{
	struct control_agent *ca = control_agent_get(vm);
	const struct agent_states *t = ca ? &ca->states : NULL;
	struct plugvm_agent_target_done done;
	struct json_object *o;

	/* A request the guest refused outright is an error; a transition that failed in a
	 * callback (and rolled back) is an answer, with the states it ran. */
	if (status == PLUGVM_AGENT_EINVAL || status == PLUGVM_AGENT_ENODEV ||
	    status == PLUGVM_AGENT_EBUSY || status == PLUGVM_AGENT_EPROTO ||
	    status == PLUGVM_AGENT_ENOSYS || !payload_ok(m, sizeof(done))) {
		op_finish(vm, op, NULL, status ? status : PLUGVM_AGENT_EPROTO, "cpuhp-set-target");
		return;
	}
	memcpy(&done, m->payload, sizeof(done));
	o = json_object_new_object();
	json_object_object_add(o, "cpu", json_object_new_int((int)op->cpu));
	json_object_object_add(o, "success", json_object_new_boolean(status == 0));
	if (status) {
		json_object_object_add(o, "error", json_object_new_int(status));
		agent_states_add(t, o, "failed-state", done.failed_state);
	}
	agent_states_add(t, o, "from", done.from);
	agent_states_add(t, o, "state", done.cpu.state);
	agent_states_add(t, o, "target", op->state);
	json_object_object_add(o, "ns", json_object_new_int64((int64_t)done.ns));
	json_object_object_add(o, "states-ns", json_object_new_int64((int64_t)op->sum_ns));
	json_object_object_add(o, "states", json_object_get(op->states));
	if (op->states_dropped)
		json_object_object_add(o, "states-dropped",
				       json_object_new_int64((int64_t)op->states_dropped));
	op_finish(vm, op, o, 0, NULL);
}

/* One CPU's statistics into op->acc. False (op finished with an error) if malformed. */
static bool reply_per_cpu(struct vm *vm, struct op *op, const struct plugvm_agent_msg *m)
{
	struct plugvm_agent_timer_stats t;
	struct plugvm_agent_sched_stats s;

	if (op->kind == OP_TIMERS) {
		if (!take_payload(vm, op, m, &t, sizeof(t), "query-timers"))
			return false;
		json_object_array_add(op->acc, agent_json_timers(&t));
	} else {
		if (!take_payload(vm, op, m, &s, sizeof(s), "query-sched"))
			return false;
		json_object_array_add(op->acc, agent_json_sched(&s));
	}
	return true;
}

/* The next CPU of a per-CPU walk, or the answer after the last. */
static void per_cpu_next(struct vm *vm, struct op *op)
{
	if (++op->next <= op->last) {
		send_index(vm, op, per_cpu_type(op), op->next);
		return;
	}
	op_finish(vm, op, json_object_get(op->acc), 0, NULL);
}

static void on_reply(struct vm *vm, void *ctx, int status, const struct plugvm_agent_msg *m)
{
	struct op *op = ctx;
	struct plugvm_agent_lock_stats l;
	struct plugvm_agent_workload_id w;
	struct plugvm_agent_workload_result wr;
	struct json_object *o;

	if (op->kind == OP_TARGET && m) {
		reply_target(vm, op, status, m);
		return;
	}
	/* ENODEV/EINVAL for one CPU is skipped when walking all of them. */
	if (status && (op->kind == OP_TIMERS || op->kind == OP_SCHED) && m && op->last > op->cpu &&
	    (status == PLUGVM_AGENT_ENODEV || status == PLUGVM_AGENT_EINVAL)) {
		per_cpu_next(vm, op);
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
	case OP_TRACE:
		op_finish(vm, op, NULL, 0, NULL);
		break;
	case OP_TIMERS:
	case OP_SCHED:
		if (reply_per_cpu(vm, op, m))
			per_cpu_next(vm, op);
		break;
	case OP_LOCKS:
		if (take_payload(vm, op, m, &l, sizeof(l), "query-locks"))
			op_finish(vm, op, agent_json_locks(&l), 0, NULL);
		break;
	case OP_WORK_START:
		if (!take_payload(vm, op, m, &w, sizeof(w), "workload-start"))
			break;
		o = json_object_new_object();
		json_object_object_add(o, "id", json_object_new_int((int)w.id));
		op_finish(vm, op, o, 0, NULL);
		break;
	case OP_WORK_STOP:
		if (take_payload(vm, op, m, &wr, sizeof(wr), "workload-stop"))
			op_finish(vm, op, agent_json_workload(&wr), 0, NULL);
		break;
	case OP_TARGET:
		break;
	}
}

/* ---- the guest's initiative ------------------------------------------------------------ */

void agent_refresh_states(struct vm *vm)
{
	struct control_agent *ca = control_agent_get(vm);
	struct qmp_error err = { 0 };
	struct op *op;

	if (!ca)
		return;
	if (ca->refresh) {
		ca->refresh_again = true;
		return;
	}
	op = agent_op_new(vm, OP_REFRESH, &err);
	if (!op)
		return;
	ca->refresh = op;
	send_index(vm, op, PLUGVM_AGENT_LIST_STATES, 0);
}

void agent_target_event(struct vm *vm, const struct plugvm_agent_ev_state *e, struct json_object *o)
{
	struct op *op;

	for (op = vm->ctl_agent ? vm->ctl_agent->targets : NULL; op; op = op->next_target) {
		if (op->cpu != e->cpu)
			continue;
		/* Up to 120 s of a guest's events: keep what a transition can run. */
		if (json_object_array_length(op->states) >= MAX_TARGET_STATES) {
			op->states_dropped++;
			continue;
		}
		json_object_array_add(op->states, json_object_get(o));
		op->sum_ns += e->ns;
	}
}
