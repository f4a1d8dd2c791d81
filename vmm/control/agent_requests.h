/* SPDX-License-Identifier: MIT */
/*
 * The QMP commands the guest agent answers, as operations: an operation sends one agent
 * request (agent.h) and each reply either sends the next (the state table and the CPU list
 * in pages, statistics one CPU at a time) or answers the client through its deferred reply.
 * It also keeps the guest's state table fresh (agent_states.h) and collects the STATE
 * events of each cpuhp-set-target in flight. Main thread only, like the QMP server.
 */
#ifndef PLUGVM_VMM_CONTROL_AGENT_REQUESTS_H
#define PLUGVM_VMM_CONTROL_AGENT_REQUESTS_H

#include <stdint.h>

#include "agent_states.h"
#include "plugvm_agent.h"
#include "qmp.h"

struct vm;
struct op;

#define AGENT_QUERY_TIMEOUT_MS	30000
#define AGENT_TARGET_TIMEOUT_MS 120000 /* a CPU down on a slow (emulated) host, with rollback */

/* What the control plane keeps about the agent (vm->ctl_agent). */
struct control_agent {
	struct agent_states states; /* for names: refreshed on hello and by query-cpuhp-states */
	/*
	 * At most one refresh of the table on the guest's initiative: a guest repeating HELLO
	 * gets one more after the one in flight, not one each (test_agent.c
	 * test_hello_flood_refreshes_once).
	 */
	struct op *refresh;
	bool refresh_again;
	struct op *targets; /* set-target requests in flight (they collect STATE events) */
	bool trace_on; /* what the guest was last told with TRACE (a new session: off) */
};

enum op_kind {
	OP_STATES, /* query-cpuhp-states */
	OP_CPUS, /* query-cpuhp */
	OP_TARGET, /* cpuhp-set-target */
	OP_FAIL, /* cpuhp-fail */
	OP_TIMERS, /* query-timers */
	OP_SCHED, /* query-sched */
	OP_LOCKS, /* query-locks */
	OP_WORK_START, /* workload-start */
	OP_WORK_STOP, /* workload-stop */
	OP_REFRESH, /* the state table, on the guest's HELLO (no client waits) */
	OP_TRACE, /* cpuhp-subscribe that turned the guest's STATE events on or off */
};

/* vm->ctl_agent, made on first use (NULL without memory). */
struct control_agent *control_agent_get(struct vm *vm);

/*
 * A client's command as an operation of `kind`, inside the command: its reply is deferred.
 * NULL with err set (no agent connected, no memory).
 */
struct op *agent_op_new(struct vm *vm, enum op_kind kind, struct qmp_error *err);

/*
 * Send the operation's (next) request: `len` payload bytes of `type`, answered within
 * `timeout_ms`. On failure the client is answered with the error and op is freed.
 */
void agent_op_send(struct vm *vm, struct op *op, uint16_t type, const void *p, size_t len,
		   unsigned timeout_ms);

/*
 * Inside a command: an operation of `kind` that starts with request `type` (`len` payload
 * bytes at `p`) and the usual timeout. Fails the command (err set) when it cannot start.
 */
void agent_op_start(struct vm *vm, enum op_kind kind, uint16_t type, const void *p, size_t len,
		    struct qmp_error *err);

/* An OP_TIMERS / OP_SCHED operation's CPUs: from `first` to `last`, collected in an array. */
void agent_op_start_per_cpu(struct vm *vm, struct op *op, uint32_t first, uint32_t last);

/* An OP_TARGET operation: move `cpu` to `state`, collecting its STATE events meanwhile. */
void agent_op_start_target(struct vm *vm, struct op *op, uint32_t cpu, int32_t state);

/* Whether a cpuhp-set-target of `cpu` is in flight. */
bool agent_target_pending(struct vm *vm, uint32_t cpu);

/* The guest said hello: read its state table again (at most one refresh in flight). */
void agent_refresh_states(struct vm *vm);

/* A STATE event (`o` its CPUHP_STATE data) joins the set-targets in flight for its CPU. */
void agent_target_event(struct vm *vm, const struct plugvm_agent_ev_state *e,
			struct json_object *o);

/* A QMP error for an agent request that ended with `status` (AGENT_E*, -errno). */
void agent_set_error(struct qmp_error *err, int status, const char *what);

#endif
