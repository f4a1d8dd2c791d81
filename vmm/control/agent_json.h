/* SPDX-License-Identifier: MIT */
/*
 * The agent's payloads (common/plugvm_agent.h) as the JSON values docs/qmp.md promises: a
 * CPU's cpuhp state, timer, scheduler and lock statistics, a workload's result, and the
 * guest's events. Pure: a payload in, a new JSON object out (the caller owns it).
 */
#ifndef PLUGVM_VMM_CONTROL_AGENT_JSON_H
#define PLUGVM_VMM_CONTROL_AGENT_JSON_H

#include <stdint.h>

#include "agent_states.h"
#include "plugvm_agent.h"

/* query-cpuhp's entry for one CPU (state names from `t`). */
struct json_object *agent_json_cpu(const struct agent_states *t, const struct plugvm_agent_cpu *c);
/* query-timers' entry for one CPU, with a level entry per wheel level. */
struct json_object *agent_json_timers(const struct plugvm_agent_timer_stats *ts);
/* query-sched's entry for one CPU. */
struct json_object *agent_json_sched(const struct plugvm_agent_sched_stats *s);
/* query-locks' answer. */
struct json_object *agent_json_locks(const struct plugvm_agent_lock_stats *l);
/* workload-stop's answer. */
struct json_object *agent_json_workload(const struct plugvm_agent_workload_result *w);

/* CPUHP_STATE's data. */
struct json_object *agent_json_state_event(const struct agent_states *t,
					   const struct plugvm_agent_ev_state *e);
/* GUEST_LOCKDEP_WARNING's data; the guest's lock names are cleaned in `e` first. */
struct json_object *agent_json_lockdep_event(struct plugvm_agent_ev_lockdep *e);

#endif
