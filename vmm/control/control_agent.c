// SPDX-License-Identifier: MIT
/*
 * The control socket's commands that the guest agent answers (docs/qmp.md, docs/agent.md):
 * cpuhp states and targets, failure injection, timer / scheduler / lock statistics,
 * workloads; and the guest's events as QMP events. Each command checks its arguments and
 * starts an operation (agent_requests.h), whose reply is deferred. Main thread only, like
 * the QMP server.
 */
#include "control_agent.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../vm.h"
#include "agent.h"
#include "agent_json.h"
#include "agent_requests.h"
#include "qmp.h"

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

void control_agent_free(struct vm *vm)
{
	free(vm->ctl_agent);
	vm->ctl_agent = NULL;
}

/* ---- events ------------------------------------------------------------------------- */

/* A guest event as QMP event `name` about CPU `cpu` (`o` taken), if a socket listens. */
static void guest_event(struct vm *vm, uint32_t mask, const char *name, uint32_t cpu,
			struct json_object *o)
{
	if (vm->qmp)
		qmp_server_event_key(vm->qmp, mask, name, cpu, o);
	else
		json_object_put(o);
}

/* A background TRACE (no client waits): a failure leaves the guest as it was. */
static void trace_done(struct vm *vm, void *ctx, int status, const struct plugvm_agent_msg *m)
{
	struct control_agent *ca = vm->ctl_agent;

	(void)m;
	if (status && ca)
		ca->trace_on = !(bool)(uintptr_t)ctx;
}

/*
 * Tell the guest whether to send every cpuhp callback as a STATE event: only while a client
 * subscribed, since each event costs the guest a virtio message (bench/README.md has the
 * cost; test_agent.py test_state_events_only_while_someone_listens).
 * Inside cpuhp-subscribe (`err` set), the command's reply waits for the guest's answer, so
 * the subscriber sees every callback of what it starts next; elsewhere (the guest's HELLO,
 * a STATE event after the last subscriber left) it is sent in the background. Main thread.
 */
static void trace_sync(struct vm *vm, struct qmp_error *err)
{
	struct control_agent *ca = control_agent_get(vm);
	bool want = vm->qmp && qmp_server_subscribed(vm->qmp, CONTROL_SUB_CPUHP);
	struct plugvm_agent_trace t = { .on = want };
	struct op *op;

	if (!ca || want == ca->trace_on || !agent_connected(vm, NULL))
		return;
	ca->trace_on = want;
	if (err) {
		op = agent_op_new(vm, OP_TRACE, err);
		if (op)
			agent_op_send(vm, op, PLUGVM_AGENT_TRACE, &t, sizeof(t),
				      AGENT_QUERY_TIMEOUT_MS);
		else
			ca->trace_on = !want;
	} else if (agent_request(vm, PLUGVM_AGENT_TRACE, &t, sizeof(t), AGENT_QUERY_TIMEOUT_MS,
				 trace_done, (void *)(uintptr_t)want)) {
		ca->trace_on = !want;
	}
}

void control_agent_event(struct vm *vm, const struct plugvm_agent_msg *m)
{
	struct control_agent *ca = control_agent_get(vm);
	struct plugvm_agent_ev_lockdep lockdep;
	struct plugvm_agent_ev_state state;
	struct json_object *o;

	if (!ca)
		return;
	if (m->hdr.type == PLUGVM_AGENT_HELLO) {
		agent_refresh_states(vm);
		ca->trace_on = false; /* a new session starts without */
		trace_sync(vm, NULL);
	} else if (m->hdr.type == PLUGVM_AGENT_EV_STATE && m->hdr.len >= sizeof(state)) {
		memcpy(&state, m->payload, sizeof(state));
		o = agent_json_state_event(&ca->states, &state);
		agent_target_event(vm, &state, o);
		guest_event(vm, CONTROL_SUB_CPUHP, "CPUHP_STATE", state.cpu, o);
		trace_sync(vm, NULL); /* off again when the last subscriber left */
	} else if (m->hdr.type == PLUGVM_AGENT_EV_LOCKDEP && m->hdr.len >= sizeof(lockdep)) {
		memcpy(&lockdep, m->payload, sizeof(lockdep));
		guest_event(vm, 0, "GUEST_LOCKDEP_WARNING", lockdep.cpu,
			    agent_json_lockdep_event(&lockdep));
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

/* A state argument: a name from the guest's table or an id (agent_states_arg()). */
static int arg_state(struct vm *vm, struct json_object *v, bool allow_none, struct qmp_error *err)
{
	struct control_agent *ca = control_agent_get(vm);

	if (!ca) {
		qmp_error_set(err, "GenericError", "out of memory");
		return -1;
	}
	return agent_states_arg(&ca->states, v, allow_none, err);
}

static struct json_object *query_cpuhp_states(void *ctx, struct json_object *args,
					      struct qmp_error *err)
{
	struct plugvm_agent_index first = { .first = 0 };

	(void)args;
	agent_op_start(ctx, OP_STATES, PLUGVM_AGENT_LIST_STATES, &first, sizeof(first), err);
	return NULL;
}

static struct json_object *query_cpuhp(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct plugvm_agent_index first = { .first = 0 };

	(void)args;
	agent_op_start(ctx, OP_CPUS, PLUGVM_AGENT_GET_CPUS, &first, sizeof(first), err);
	return NULL;
}

/*
 * The `cpu` and `state` arguments of `what` (cpuhp-set-target, cpuhp-fail), which needs the
 * agent. False with err set. With `allow_none`, *state is -2 for "none".
 */
static bool cpu_state_args(struct vm *vm, struct json_object *args, const char *what,
			   bool allow_none, int *cpu, int *state, struct qmp_error *err)
{
	struct json_object *v;

	if (!agent_connected(vm, NULL)) {
		agent_set_error(err, AGENT_ENOTCONN, what);
		return false;
	}
	*cpu = arg_cpu(vm, args, "cpu", err);
	if (*cpu < 0)
		return false;
	json_object_object_get_ex(args, "state", &v);
	*state = arg_state(vm, v, allow_none, err);
	return *state != -1;
}

static struct json_object *cpuhp_set_target(void *ctx, struct json_object *args,
					    struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct op *op;
	int cpu, state;

	if (!cpu_state_args(vm, args, "cpuhp-set-target", false, &cpu, &state, err))
		return NULL;
	/* What the guest would refuse with a bare -EINVAL, said with its reason. */
	if (cpu == 0) {
		qmp_error_set(
		    err, "GenericError",
		    "cpu 0 is the boot CPU: it stays online (any other CPU can be moved)");
		return NULL;
	}
	if (!agent_states_can_rest(&control_agent_get(vm)->states, state)) {
		char buf[16];

		qmp_error_set(
		    err, "GenericError",
		    "state '%s' is not one a CPU can rest in (query-cpuhp-states: "
		    "can-rest)",
		    agent_states_name(&control_agent_get(vm)->states, state, buf, sizeof(buf)));
		return NULL;
	}
	if (agent_target_pending(vm, (uint32_t)cpu)) {
		qmp_error_set(err, "GenericError", "cpu %d is already moving to a target", cpu);
		return NULL;
	}
	op = agent_op_new(vm, OP_TARGET, err);
	if (op)
		agent_op_start_target(vm, op, (uint32_t)cpu, state);
	return NULL;
}

static struct json_object *cpuhp_fail(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct plugvm_agent_cpu_state cs;
	int cpu, state;

	if (!cpu_state_args(vm, args, "cpuhp-fail", true, &cpu, &state, err))
		return NULL;
	cs.cpu = (uint32_t)cpu;
	cs.state = state == -2 ? -1 : state;
	agent_op_start(vm, OP_FAIL, PLUGVM_AGENT_FAIL, &cs, sizeof(cs), err);
	return NULL;
}

static struct json_object *per_cpu_query(struct vm *vm, struct json_object *args, enum op_kind kind,
					 struct qmp_error *err)
{
	uint32_t nr = guest_cpus(vm);
	struct op *op;
	int cpu;

	if (!agent_connected(vm, NULL)) {
		agent_set_error(err, AGENT_ENOTCONN, "statistics");
		return NULL;
	}
	cpu = arg_cpu(vm, args, "cpu", err);
	if (cpu == -1)
		return NULL;
	if (cpu < 0 && !nr)
		return json_object_new_array(); /* a guest without CPUs has no statistics */
	op = agent_op_new(vm, kind, err);
	if (op)
		agent_op_start_per_cpu(vm, op, cpu >= 0 ? (uint32_t)cpu : 0,
				       cpu >= 0 ? (uint32_t)cpu : nr - 1);
	return NULL;
}

static struct json_object *query_timers(void *ctx, struct json_object *args, struct qmp_error *err)
{
	return per_cpu_query(ctx, args, OP_TIMERS, err);
}

static struct json_object *query_sched(void *ctx, struct json_object *args, struct qmp_error *err)
{
	return per_cpu_query(ctx, args, OP_SCHED, err);
}

static struct json_object *query_locks(void *ctx, struct json_object *args, struct qmp_error *err)
{
	(void)args;
	agent_op_start(ctx, OP_LOCKS, PLUGVM_AGENT_LOCK_STATS, NULL, 0, err);
	return NULL;
}

static struct json_object *workload_start(void *ctx, struct json_object *args,
					  struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct plugvm_agent_workload w = { 0 };
	struct json_object *v;
	const char *kind;
	int64_t n;

	json_object_object_get_ex(args, "kind", &v);
	kind = json_object_get_string(v);
	if (!strcmp(kind, "hog"))
		w.kind = PLUGVM_AGENT_WORK_HOG;
	else if (!strcmp(kind, "timers"))
		w.kind = PLUGVM_AGENT_WORK_TIMERS;
	else if (!strcmp(kind, "mixed"))
		w.kind = PLUGVM_AGENT_WORK_HOG | PLUGVM_AGENT_WORK_TIMERS;
	else if (!strcmp(kind, "hold"))
		w.kind = PLUGVM_AGENT_WORK_HOLD;
	else {
		qmp_error_set(err, "GenericError", "'kind' must be hog, timers, mixed or hold");
		return NULL;
	}
	/* hold: real-time threads pinned to `cpu` keep it (the guest refuses its removal). */
	n = json_object_object_get_ex(args, "cpu", &v) ? json_object_get_int64(v) : -1;
	if ((w.kind == PLUGVM_AGENT_WORK_HOLD) != (n >= 0) || n >= (int64_t)vm->cfg->max_cpus) {
		qmp_error_set(err, "GenericError",
			      "'cpu' (below maxcpus) goes with kind hold, and only with it");
		return NULL;
	}
	w.cpu = n >= 0 ? (uint32_t)n : 0;
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
	agent_op_start(vm, OP_WORK_START, PLUGVM_AGENT_WORKLOAD_START, &w, sizeof(w), err);
	return NULL;
}

static struct json_object *workload_stop(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct plugvm_agent_workload_id w = { 0 };
	struct json_object *v;
	int64_t id;

	json_object_object_get_ex(args, "id", &v);
	id = json_object_get_int64(v);
	if (id < 0 || id > UINT32_MAX) {
		qmp_error_set(err, "GenericError", "'id' is not a workload id");
		return NULL;
	}
	w.id = (uint32_t)id;
	agent_op_start(vm, OP_WORK_STOP, PLUGVM_AGENT_WORKLOAD_STOP, &w, sizeof(w), err);
	return NULL;
}

static struct json_object *cpuhp_subscribe(void *ctx, struct json_object *args,
					   struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *v;
	bool on = !json_object_object_get_ex(args, "enable", &v) || json_object_get_boolean(v);

	if (!qmp_subscribe(vm->qmp, CONTROL_SUB_CPUHP, on)) {
		qmp_error_set(err, "GenericError", "no client to subscribe");
		return NULL;
	}
	trace_sync(vm, err);
	if (err->class)
		qmp_subscribe(vm->qmp, CONTROL_SUB_CPUHP, !on);
	return NULL;
}

static struct json_object *query_agent(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct plugvm_agent_hello h;
	struct agent_stats st;
	struct json_object *o = json_object_new_object();
	/* Connected: the agent said hello and its state table is known (names resolve). */
	bool up = agent_connected(vm, &h) && vm->ctl_agent && vm->ctl_agent->states.nr;

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
	qmp_add_u64(o, "requests", st.requests);
	qmp_add_u64(o, "replies", st.replies);
	qmp_add_u64(o, "events", st.events);
	qmp_add_u64(o, "timeouts", st.timeouts);
	qmp_add_u64(o, "malformed", st.malformed);
	qmp_add_u64(o, "skipped-bytes", st.skipped_bytes);
	qmp_add_u64(o, "dropped", st.dropped);
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
	{ "kind", json_type_string, true },    { "threads", json_type_int, false },
	{ "period-us", json_type_int, false }, { "cpu", json_type_int, false },
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
