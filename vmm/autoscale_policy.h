/* SPDX-License-Identifier: MIT */
/*
 * vCPUs on demand, the decisions (docs/autoscale.md): given, once a sampling period, how busy
 * each present vCPU was and how long runnable threads waited for it, decide whether to add
 * a vCPU, remove one, or do nothing, and why. Pure: no clock, no VM; autoscale.c samples,
 * acts and tells it what came of each operation. Guarded by tests/unit/test_autoscale.c.
 *
 * What holds:
 *   - the number of present vCPUs is driven into [min, max] and never out of it by the
 *     policy: it adds only below max, removes only above min;
 *   - at most one operation is in flight, and none starts within `cooldown_ms` of the end of
 *     the last one, the operator's included;
 *   - a decision needs its condition to hold without a break for pressure_ms (add) or
 *     idle_ms (remove), counted from samples taken after the last operation ended;
 *   - hysteresis: a removal needs the load to fit in the vCPUs left with `idle_pct` of their
 *     time still idle, so load that just triggered an add cannot trigger the removal back;
 *   - a vCPU the guest holds (a pinned real-time thread runs there) is never picked, nor one
 *     whose removal the guest refused during the last AUTOSCALE_REFUSED_BACKOFF cooldowns;
 *   - operator commands win: after an operator's add, min is at least the new count (and max
 *     too); after a removal, max is at most the new count (and min too), so the policy never
 *     undoes what the operator chose until the range is set again.
 */
#ifndef PLUGVM_VMM_AUTOSCALE_POLICY_H
#define PLUGVM_VMM_AUTOSCALE_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"

/* A refused removal keeps the policy off that vCPU for this many cooldowns (at least 5 s). */
#define AUTOSCALE_REFUSED_BACKOFF 10
#define AUTOSCALE_REFUSED_MIN_MS  5000
/* An operation not heard of within this long is taken as over (the guest is stuck). */
#define AUTOSCALE_OP_TIMEOUT_MS 15000
/* Without the guest's figures: a vCPU that ran at least this share of a period is saturated. */
#define AUTOSCALE_HOST_SATURATED 0.9

enum autoscale_op {
	AUTOSCALE_NONE,
	AUTOSCALE_ADD,
	AUTOSCALE_REMOVE,
};

/* Why (QMP's "reason"; autoscale_reason_name()). */
enum autoscale_reason {
	AUTOSCALE_R_NONE,
	AUTOSCALE_R_PRESSURE, /* threads waited for CPU long enough: add */
	AUTOSCALE_R_SATURATED, /* host figures only: every vCPU ran flat out long enough: add */
	AUTOSCALE_R_IDLE, /* the load fits in one vCPU fewer long enough: remove */
	AUTOSCALE_R_BELOW_MIN, /* fewer than min present: add */
	AUTOSCALE_R_ABOVE_MAX, /* more than max present: remove */
	AUTOSCALE_R_HELD, /* a removal is due but every candidate is held or refused: wait */
};

struct autoscale_cpu_in {
	bool present; /* a vCPU is in this slot (QMP's view) */
	bool held; /* the guest says a holding thread runs there */
	bool guest; /* busy and wait below are the guest's (checked); else the host's busy */
	double busy; /* share of the period it was busy, 0..1 */
	double wait; /* share of the period a runnable thread waited for it, 0..1 */
};

struct autoscale_input {
	uint64_t now_ms;
	unsigned nr_slots; /* entries in cpu[] (maxcpus) */
	const struct autoscale_cpu_in *cpu;
};

/* The figures a decision saw (QMP's "figures"). */
struct autoscale_figures {
	unsigned online; /* present vCPUs */
	double busy; /* sum of busy over them, in vCPUs */
	double pressure; /* mean wait over them, 0..1 */
	bool guest; /* every present vCPU's figures were the guest's */
};

struct autoscale_decision {
	enum autoscale_op op; /* NONE: nothing to do (reason HELD: one was due, none could go) */
	unsigned slot; /* ADD: the slot to fill; REMOVE: the vCPU to remove */
	enum autoscale_reason reason;
	struct autoscale_figures fig;
};

struct autoscale_policy {
	struct autoscale_params p; /* min and max resolved (1 .. maxcpus) */
	unsigned max_cpus;
	/* Since when (ms + 1; 0: not now) the add / remove condition has held. */
	uint64_t pressure_since, idle_since;
	uint64_t quiet_until; /* no operation starts before this (cooldown) */
	enum autoscale_op inflight;
	unsigned inflight_slot;
	uint64_t inflight_since;
	bool held_reported; /* a HELD decision was returned and nothing changed since */
	uint64_t *refused_until; /* [max_cpus]: the guest refused to remove it; ms */
	/* Counters (QMP). */
	uint64_t adds, removes, refused, failed, manual;
	struct autoscale_figures last; /* the last sample's figures */
};

/*
 * Set pol up for `p` (enabled, min and max 0 meaning 1 and max_cpus) on a VM of `max_cpus`.
 * Returns 0, -EINVAL if min > max or max > max_cpus, -ENOMEM.
 */
int autoscale_policy_init(struct autoscale_policy *pol, const struct autoscale_params *p,
			  unsigned max_cpus);
/* New parameters (QMP autoscale-set): counters and the vCPUs' back-offs stay. Same returns. */
int autoscale_policy_set(struct autoscale_policy *pol, const struct autoscale_params *p);
void autoscale_policy_free(struct autoscale_policy *pol);

/*
 * One sample: the decision for now. An ADD or REMOVE returned is in flight from then on:
 * the caller carries it out and reports with autoscale_policy_done() (also when it could not
 * even start).
 */
struct autoscale_decision autoscale_policy_step(struct autoscale_policy *pol,
						const struct autoscale_input *in);
/*
 * The operation in flight ended at `now_ms`: result 0 (the vCPU came / went), -EBUSY (the
 * guest refused the removal), another -errno (it failed). A late report of one that is no
 * longer in flight is ignored. Returns whether it was the one in flight.
 */
bool autoscale_policy_done(struct autoscale_policy *pol, uint64_t now_ms, enum autoscale_op op,
			   unsigned slot, int result);
/*
 * The operator added or removed a vCPU (`online` present after it): the range moves to keep
 * that count (see above), and the cooldown starts. Returns whether the range changed.
 */
bool autoscale_policy_manual(struct autoscale_policy *pol, uint64_t now_ms, enum autoscale_op op,
			     unsigned online);

const char *autoscale_reason_name(enum autoscale_reason r);
const char *autoscale_op_name(enum autoscale_op op);

#endif
