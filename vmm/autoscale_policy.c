// SPDX-License-Identifier: MIT
/* vCPUs on demand, the decisions (see autoscale_policy.h). Pure. */
#include "autoscale_policy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int resolve(struct autoscale_params *r, const struct autoscale_params *p, unsigned max_cpus)
{
	*r = *p;
	if (!r->min)
		r->min = 1;
	if (!r->max)
		r->max = max_cpus;
	if (r->min > r->max || r->max > max_cpus)
		return -EINVAL;
	return 0;
}

int autoscale_policy_init(struct autoscale_policy *pol, const struct autoscale_params *p,
			  unsigned max_cpus)
{
	memset(pol, 0, sizeof(*pol));
	pol->max_cpus = max_cpus;
	if (resolve(&pol->p, p, max_cpus))
		return -EINVAL;
	pol->refused_until = calloc(max_cpus ? max_cpus : 1, sizeof(*pol->refused_until));
	return pol->refused_until ? 0 : -ENOMEM;
}

int autoscale_policy_set(struct autoscale_policy *pol, const struct autoscale_params *p)
{
	struct autoscale_params r;

	if (resolve(&r, p, pol->max_cpus))
		return -EINVAL;
	pol->p = r;
	/* The new thresholds judge only what is sampled under them. */
	pol->pressure_since = pol->idle_since = 0;
	pol->held_reported = false;
	return 0;
}

void autoscale_policy_free(struct autoscale_policy *pol)
{
	free(pol->refused_until);
	pol->refused_until = NULL;
}

static struct autoscale_figures figures(const struct autoscale_input *in)
{
	struct autoscale_figures f = { .guest = true };
	unsigned i;

	for (i = 0; i < in->nr_slots; i++) {
		const struct autoscale_cpu_in *c = &in->cpu[i];

		if (!c->present)
			continue;
		f.online++;
		f.busy += c->busy;
		if (c->guest) {
			f.pressure += c->wait;
		} else {
			f.guest = false;
			/* The host cannot see a queue: a vCPU flat out counts as one. */
			f.pressure += c->busy >= AUTOSCALE_HOST_SATURATED ? 1.0 : 0.0;
		}
	}
	if (f.online)
		f.pressure /= f.online;
	else
		f.guest = false;
	return f;
}

/* The lowest slot with no vCPU; max_cpus if none. */
static unsigned free_slot(const struct autoscale_input *in)
{
	unsigned i;

	for (i = 0; i < in->nr_slots; i++)
		if (!in->cpu[i].present)
			return i;
	return in->nr_slots;
}

/* The highest present vCPU that may go (not 0, not held, not refused lately); nr_slots: none. */
static unsigned victim(const struct autoscale_policy *pol, const struct autoscale_input *in)
{
	unsigned i;

	for (i = in->nr_slots; i-- > 1;) {
		const struct autoscale_cpu_in *c = &in->cpu[i];

		if (c->present && !c->held && pol->refused_until[i] <= in->now_ms)
			return i;
	}
	return in->nr_slots;
}

/* Track since when `cond` has held; true once it has for `ms`. */
static bool sustained(uint64_t *since, bool cond, uint64_t now, unsigned ms)
{
	if (!cond) {
		*since = 0;
		return false;
	}
	if (!*since)
		*since = now + 1;
	return now + 1 - *since >= ms;
}

struct autoscale_decision autoscale_policy_step(struct autoscale_policy *pol,
						const struct autoscale_input *in)
{
	struct autoscale_decision d = { .op = AUTOSCALE_NONE };
	uint64_t now = in->now_ms;
	unsigned n, target = in->nr_slots;
	bool add, remove;

	d.fig = figures(in);
	pol->last = d.fig;
	n = d.fig.online;
	if (in->nr_slots > pol->max_cpus)
		return d;
	if (pol->inflight != AUTOSCALE_NONE) {
		if (now - pol->inflight_since < AUTOSCALE_OP_TIMEOUT_MS)
			return d;
		/* Never heard of: the guest is stuck in it; let the next sample judge anew. */
		autoscale_policy_done(pol, now, pol->inflight, pol->inflight_slot, -ETIMEDOUT);
	}
	/* Samples during the cooldown do not count towards the next decision. */
	if (now < pol->quiet_until) {
		pol->pressure_since = pol->idle_since = 0;
		return d;
	}

	if (n < pol->p.min) {
		d.op = AUTOSCALE_ADD;
		d.reason = AUTOSCALE_R_BELOW_MIN;
	} else if (n > pol->p.max) {
		d.op = AUTOSCALE_REMOVE;
		d.reason = AUTOSCALE_R_ABOVE_MAX;
	} else {
		double pressure = (double)pol->p.pressure_pct / 100.0;
		double keep_idle = (double)pol->p.idle_pct / 100.0;

		add = sustained(&pol->pressure_since, n < pol->p.max && d.fig.pressure >= pressure,
				now, pol->p.pressure_ms);
		/*
		 * Hysteresis: the load must fit in n - 1 vCPUs with keep_idle of their time to
		 * spare, and nothing may wait now.
		 */
		remove = sustained(&pol->idle_since,
				   n > pol->p.min && n > 1 && d.fig.pressure < pressure &&
				       d.fig.busy <= (double)(n - 1) * (1.0 - keep_idle),
				   now, pol->p.idle_ms);
		if (add) {
			d.op = AUTOSCALE_ADD;
			d.reason = d.fig.guest ? AUTOSCALE_R_PRESSURE : AUTOSCALE_R_SATURATED;
		} else if (remove) {
			d.op = AUTOSCALE_REMOVE;
			d.reason = AUTOSCALE_R_IDLE;
		}
	}

	if (d.op == AUTOSCALE_ADD)
		target = free_slot(in);
	else if (d.op == AUTOSCALE_REMOVE)
		target = victim(pol, in);
	if (d.op != AUTOSCALE_NONE && target >= in->nr_slots) {
		/* Due, but nothing can go (or no slot is free): say so once, then wait. */
		bool say = d.op == AUTOSCALE_REMOVE && !pol->held_reported;

		d.op = AUTOSCALE_NONE;
		d.reason = say ? AUTOSCALE_R_HELD : AUTOSCALE_R_NONE;
		pol->held_reported = pol->held_reported || say;
		return d;
	}
	if (d.op == AUTOSCALE_NONE)
		return d;
	d.slot = target;
	pol->inflight = d.op;
	pol->inflight_slot = target;
	pol->inflight_since = now;
	pol->held_reported = false;
	return d;
}

static void quiet(struct autoscale_policy *pol, uint64_t now)
{
	pol->quiet_until = now + pol->p.cooldown_ms;
	pol->pressure_since = pol->idle_since = 0;
	pol->held_reported = false;
}

bool autoscale_policy_done(struct autoscale_policy *pol, uint64_t now_ms, enum autoscale_op op,
			   unsigned slot, int result)
{
	uint64_t backoff;

	if (pol->inflight == AUTOSCALE_NONE || op != pol->inflight || slot != pol->inflight_slot)
		return false;
	pol->inflight = AUTOSCALE_NONE;
	quiet(pol, now_ms);
	if (!result) {
		if (op == AUTOSCALE_ADD)
			pol->adds++;
		else
			pol->removes++;
	} else if (op == AUTOSCALE_REMOVE && result == -EBUSY) {
		pol->refused++;
		backoff = (uint64_t)pol->p.cooldown_ms * AUTOSCALE_REFUSED_BACKOFF;
		if (backoff < AUTOSCALE_REFUSED_MIN_MS)
			backoff = AUTOSCALE_REFUSED_MIN_MS;
		if (slot < pol->max_cpus)
			pol->refused_until[slot] = now_ms + backoff;
	} else {
		pol->failed++;
	}
	return true;
}

bool autoscale_policy_manual(struct autoscale_policy *pol, uint64_t now_ms, enum autoscale_op op,
			     unsigned online)
{
	unsigned min = pol->p.min, max = pol->p.max;

	pol->manual++;
	quiet(pol, now_ms);
	if (!online)
		online = 1;
	/* The count the operator chose becomes the bound the policy would cross to undo it. */
	if (op == AUTOSCALE_ADD) {
		pol->p.min = online > min ? online : min;
		pol->p.max = online > max ? online : max;
	} else if (op == AUTOSCALE_REMOVE) {
		pol->p.max = online < max ? online : max;
		pol->p.min = online < min ? online : min;
	}
	return pol->p.min != min || pol->p.max != max;
}

const char *autoscale_reason_name(enum autoscale_reason r)
{
	switch (r) {
	case AUTOSCALE_R_PRESSURE:
		return "pressure";
	case AUTOSCALE_R_SATURATED:
		return "saturated";
	case AUTOSCALE_R_IDLE:
		return "idle";
	case AUTOSCALE_R_BELOW_MIN:
		return "below-min";
	case AUTOSCALE_R_ABOVE_MAX:
		return "above-max";
	case AUTOSCALE_R_HELD:
		return "held";
	case AUTOSCALE_R_NONE:
		break;
	}
	return "none";
}

const char *autoscale_op_name(enum autoscale_op op)
{
	return op == AUTOSCALE_ADD ? "add" : op == AUTOSCALE_REMOVE ? "remove" : "none";
}
