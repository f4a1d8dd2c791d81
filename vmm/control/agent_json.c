// SPDX-License-Identifier: MIT
/* The agent's payloads as QMP JSON (see agent_json.h). */
#include "agent_json.h"

#include <stddef.h>
#include <string.h>

#include "agent.h"
#include "qmp.h"

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
		qmp_add_u64(o, f[i].key, v);
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

struct json_object *agent_json_cpu(const struct agent_states *t, const struct plugvm_agent_cpu *c)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "cpu", json_object_new_int(c->cpu));
	json_object_object_add(o, "present",
			       json_object_new_boolean(c->flags & PLUGVM_AGENT_CPU_PRESENT));
	json_object_object_add(o, "online",
			       json_object_new_boolean(c->flags & PLUGVM_AGENT_CPU_ONLINE));
	json_object_object_add(o, "active",
			       json_object_new_boolean(c->flags & PLUGVM_AGENT_CPU_ACTIVE));
	agent_states_add(t, o, "state", c->state);
	agent_states_add(t, o, "target", c->target);
	if (c->fail_inject >= 0)
		agent_states_add(t, o, "fail", c->fail_inject);
	if (c->last_error) {
		json_object_object_add(o, "last-error", json_object_new_int(c->last_error));
		agent_states_add(t, o, "failed-state", c->failed_state);
	}
	return o;
}

struct json_object *agent_json_timers(const struct plugvm_agent_timer_stats *ts)
{
	struct json_object *o = json_object_new_object(), *lv = json_object_new_array();
	unsigned i;

	json_object_object_add(o, "cpu", json_object_new_int((int)ts->cpu));
	ADD_FIELDS(o, ts, timer_fields);
	for (i = 0; i < PLUGVM_AGENT_WHEEL_LEVELS && i < ts->levels; i++) {
		struct json_object *l = json_object_new_object();

		json_object_object_add(l, "level", json_object_new_int((int)i));
		ADD_FIELDS(l, &ts->lvl[i], level_fields);
		json_object_array_add(lv, l);
	}
	json_object_object_add(o, "levels", lv);
	return o;
}

struct json_object *agent_json_sched(const struct plugvm_agent_sched_stats *s)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "cpu", json_object_new_int((int)s->cpu));
	json_object_object_add(o, "nr-running", json_object_new_int((int)s->nr_running));
	ADD_FIELDS(o, s, sched_fields);
	return o;
}

struct json_object *agent_json_locks(const struct plugvm_agent_lock_stats *l)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "enabled", json_object_new_boolean(l->enabled));
	ADD_FIELDS(o, l, lock_fields);
	qmp_add_u64(o, "classes", l->classes);
	qmp_add_u64(o, "dependencies", l->dependencies);
	qmp_add_u64(o, "max-depth", l->max_depth);
	return o;
}

struct json_object *agent_json_workload(const struct plugvm_agent_workload_result *w)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_int((int)w->id));
	json_object_object_add(o, "threads", json_object_new_int((int)w->threads));
	ADD_FIELDS(o, w, workload_fields);
	return o;
}

struct json_object *agent_json_state_event(const struct agent_states *t,
					   const struct plugvm_agent_ev_state *e)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "cpu", json_object_new_int((int)e->cpu));
	agent_states_add(t, o, "state", e->state);
	json_object_object_add(o, "direction", json_object_new_string(e->up ? "up" : "down"));
	qmp_add_u64(o, "ns", e->ns);
	json_object_object_add(o, "result", json_object_new_int(e->result));
	return o;
}

/* The guest's lock validator report types (plugvm_agent.h), as QMP names them. */
static const char *lockdep_type_name(uint32_t type)
{
	static const char *const names[] = {
		"inversion", "recursion", "bad-release",  "not-held",
		"held",	     "overflow",  "classes-full", "deps-full"
	};

	return type < sizeof(names) / sizeof(names[0]) ? names[type] : "unknown";
}

struct json_object *agent_json_lockdep_event(struct plugvm_agent_ev_lockdep *e)
{
	struct json_object *o = json_object_new_object();

	agent_str_clean(e->lock, sizeof(e->lock));
	agent_str_clean(e->held, sizeof(e->held));
	json_object_object_add(o, "cpu", json_object_new_int((int)e->cpu));
	json_object_object_add(o, "type", json_object_new_string(lockdep_type_name(e->type)));
	json_object_object_add(o, "type-id", json_object_new_int64(e->type));
	json_object_object_add(o, "lock", json_object_new_string(e->lock));
	json_object_object_add(o, "held", json_object_new_string(e->held));
	return o;
}
