// SPDX-License-Identifier: MIT
/* query-latency (see control_latency.h): a snapshot of the guest's shared area as JSON. */
#include "control_latency.h"

#include <stdio.h>
#include <stdlib.h>

#include "../devices/latency.h"
#include "../vm.h"

static struct json_object *cpu_json(unsigned cpu, const struct plugvm_latency_cpu *c,
				    unsigned hist_us, bool histogram, bool stale)
{
	struct json_object *o = json_object_new_object(), *h;
	unsigned k;

	qmp_add_u64(o, "cpu", cpu);
	qmp_add_u64(o, "priority", c->prio);
	qmp_add_u64(o, "count", c->count);
	qmp_add_u64(o, "min-ns", c->min_ns);
	qmp_add_u64(o, "avg-ns", c->count ? c->sum_ns / c->count : 0);
	qmp_add_u64(o, "max-ns", c->max_ns);
	qmp_add_u64(o, "act-ns", c->act_ns);
	qmp_add_u64(o, "overflows", c->overflows);
	qmp_add_u64(o, "missed", c->missed);
	qmp_add_u64(o, "outliers", c->outliers);
	qmp_add_u64(o, "parks", c->parks);
	qmp_add_u64(o, "parked-ns", c->parked_ns);
	qmp_add_u64(o, "elapsed-ns", c->elapsed_ns);
	json_object_object_add(o, "stale", json_object_new_boolean(stale));
	h = json_object_new_array_ext(PLUGVM_LATENCY_STATE_LOG2);
	for (k = 0; k < PLUGVM_LATENCY_STATE_LOG2; k++)
		json_object_array_add(h, json_object_new_int64((int64_t)c->log2[k]));
	json_object_object_add(o, "log2", h);
	if (histogram) {
		h = json_object_new_array_ext((int)hist_us);
		for (k = 0; k < hist_us; k++)
			json_object_array_add(h, json_object_new_int64(c->hist[k]));
		json_object_object_add(o, "histogram", h);
	}
	return o;
}

/* The states other CPUs ran at an outlier's wake-up: [{cpu, state, direction}]. */
static struct json_object *hotplug_json(const struct latency_snapshot *s,
					const struct plugvm_latency_outlier *o)
{
	struct json_object *a = json_object_new_array();
	unsigned k;

	for (k = 0; k < PLUGVM_LATENCY_MAX_CPUS; k++) {
		struct json_object *e;
		unsigned st = o->hp[k] & ~PLUGVM_LATENCY_HP_DOWN;

		if (!o->hp[k])
			continue;
		e = json_object_new_object();
		qmp_add_u64(e, "cpu", k);
		json_object_object_add(e, "state", json_object_new_string(s->states[st - 1].name));
		json_object_object_add(
		    e, "direction",
		    json_object_new_string(o->hp[k] & PLUGVM_LATENCY_HP_DOWN ? "down" : "up"));
		json_object_array_add(a, e);
	}
	return a;
}

/* Upper bound of the 99th percentile from the power-of-two buckets, in us. */
static uint64_t p99_bound_us(const struct plugvm_latency_state *st)
{
	uint64_t total = 0, seen = 0;
	unsigned k;

	for (k = 0; k < PLUGVM_LATENCY_STATE_LOG2; k++)
		total += st->log2[k];
	for (k = 0; k < PLUGVM_LATENCY_STATE_LOG2; k++) {
		seen += st->log2[k];
		if (seen * 100 >= total * 99)
			return 2ull << k;
	}
	return 2ull << (PLUGVM_LATENCY_STATE_LOG2 - 1);
}

static const struct qmp_arg query_latency_args[] = {
	{ "histogram", json_type_boolean, false },
	{ NULL, json_type_null, false },
};

static struct json_object *query_latency(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct latency_snapshot *s = malloc(sizeof(*s));
	struct json_object *r, *a, *o;
	bool histogram = false;
	unsigned k;
	int ret;

	if (!s) {
		qmp_error_set(err, "GenericError", "out of memory");
		return NULL;
	}
	if (json_object_object_get_ex(args, "histogram", &o))
		histogram = json_object_get_boolean(o);
	ret = latency_read(vm, s);
	r = json_object_new_object();
	json_object_object_add(r, "active", json_object_new_boolean(ret == 0));
	if (ret) {
		free(s);
		return r;
	}
	json_object_object_add(
	    r, "build", json_object_new_string(s->flags & PLUGVM_LATENCY_F_RT ? "rt" : "default"));
	json_object_object_add(r, "started",
			       json_object_new_boolean(s->flags & PLUGVM_LATENCY_F_STARTED));
	qmp_add_u64(r, "interval-us", s->interval_us);
	qmp_add_u64(r, "histogram-us", s->hist_us);
	qmp_add_u64(r, "threshold-us", s->threshold_us);
	qmp_add_u64(r, "tsc-khz", s->tsc_khz);
	qmp_add_u64(r, "torn", s->torn);
	a = json_object_new_array();
	for (k = 0; k < PLUGVM_LATENCY_MAX_CPUS; k++)
		if (s->cpus[k].flags & PLUGVM_LATENCY_CPU_USED)
			json_object_array_add(
			    a, cpu_json(k, &s->cpus[k], s->hist_us, histogram, s->stale[k]));
	json_object_object_add(r, "cpus", a);
	qmp_add_u64(r, "outliers-total", s->outlier_seq);
	a = json_object_new_array();
	for (k = 0; k < s->nr_outliers; k++) {
		const struct plugvm_latency_outlier *ol = &s->outliers[k];

		o = json_object_new_object();
		qmp_add_u64(o, "cpu", ol->cpu);
		qmp_add_u64(o, "latency-ns", ol->latency_ns);
		qmp_add_u64(o, "when-ns", ol->when_ns);
		qmp_add_u64(o, "irqs", ol->irqs);
		json_object_object_add(
		    o, "unparked",
		    json_object_new_boolean(ol->flags & PLUGVM_LATENCY_OUT_UNPARKED));
		json_object_object_add(o, "hotplug", hotplug_json(s, ol));
		json_object_array_add(a, o);
	}
	json_object_object_add(r, "outliers", a);
	a = json_object_new_array();
	for (k = 0; k < s->nr_states; k++) {
		const struct plugvm_latency_state *st = &s->states[k];

		if (!st->count)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "state", json_object_new_string(st->name));
		qmp_add_u64(o, "samples", st->count);
		qmp_add_u64(o, "p99-us-at-most", p99_bound_us(st));
		qmp_add_u64(o, "max-ns", st->max_ns);
		json_object_array_add(a, o);
	}
	json_object_object_add(r, "states", a);
	free(s);
	return r;
}

const struct qmp_command control_latency_commands[] = {
	{ "query-latency", query_latency, query_latency_args },
	{ NULL, NULL, NULL },
};
