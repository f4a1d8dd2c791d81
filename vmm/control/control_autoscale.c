// SPDX-License-Identifier: MIT
/* vCPUs on demand over QMP (see control_autoscale.h). Main thread. */
#include "control_autoscale.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../autoscale.h"
#include "../log.h"
#include "../vm.h"

/* A share rounded to 1/1000, as a JSON number. */
static void add_share(struct json_object *o, const char *key, double v)
{
	json_object_object_add(
	    o, key, json_object_new_double((double)(int64_t)(v * 1000.0 + 0.5) / 1000.0));
}

static struct json_object *figures_json(const struct autoscale_figures *f)
{
	struct json_object *o = json_object_new_object();

	qmp_add_u64(o, "online", f->online);
	add_share(o, "busy", f->busy);
	add_share(o, "pressure", f->pressure);
	json_object_object_add(o, "source", json_object_new_string(f->guest ? "guest" : "host"));
	return o;
}

static const char *action_name(const struct autoscale_event *e)
{
	switch (e->kind) {
	case AUTOSCALE_EV_DECIDED:
		return e->op == AUTOSCALE_ADD ? "add" : "remove";
	case AUTOSCALE_EV_DONE:
		if (!e->result)
			return e->op == AUTOSCALE_ADD ? "added" : "removed";
		return e->op == AUTOSCALE_REMOVE && e->result == -EBUSY ? "refused" : "failed";
	case AUTOSCALE_EV_HELD:
		return "held";
	case AUTOSCALE_EV_RANGE:
		return "range";
	case AUTOSCALE_EV_ON:
		return "on";
	case AUTOSCALE_EV_OFF:
		break;
	}
	return "off";
}

static void autoscale_event(void *opaque, const struct autoscale_event *e)
{
	struct vm *vm = opaque;
	struct json_object *d;
	bool op = e->kind == AUTOSCALE_EV_DECIDED || e->kind == AUTOSCALE_EV_DONE;
	char slot[16];

	snprintf(slot, sizeof(slot), "%u", e->slot);
	if (e->kind == AUTOSCALE_EV_DECIDED)
		log_info("autoscale: %s vCPU %u (%s: %u online, busy %.2f, pressure %.2f, %s "
			 "figures)",
			 action_name(e), e->slot, autoscale_reason_name(e->reason), e->fig.online,
			 e->fig.busy, e->fig.pressure, e->fig.guest ? "guest" : "host");
	else if (op)
		log_info("autoscale: %s vCPU %u%s%s", action_name(e), e->slot,
			 e->result ? ": " : "", e->result ? strerror(-e->result) : "");
	if (!vm->qmp)
		return;
	d = json_object_new_object();
	json_object_object_add(d, "action", json_object_new_string(action_name(e)));
	if (op) {
		/* QEMU's DEVICE_DELETED shape: the id when there is one, the slot always. */
		if (e->id)
			json_object_object_add(d, "device", json_object_new_string(e->id));
		json_object_object_add(d, "slot", json_object_new_string(slot));
	}
	if (e->kind == AUTOSCALE_EV_DECIDED || e->kind == AUTOSCALE_EV_HELD)
		json_object_object_add(d, "reason",
				       json_object_new_string(autoscale_reason_name(e->reason)));
	if (e->kind == AUTOSCALE_EV_DONE && e->result)
		json_object_object_add(d, "error", json_object_new_string(strerror(-e->result)));
	json_object_object_add(d, "figures", figures_json(&e->fig));
	qmp_add_u64(d, "min", e->min);
	qmp_add_u64(d, "max", e->max);
	qmp_server_event(vm->qmp, "PLUGVM_AUTOSCALE", d);
}

void control_autoscale_start(struct vm *vm)
{
	autoscale_set_event_fn(vm, autoscale_event, vm);
}

static const struct qmp_arg set_args[] = {
	{ "min", json_type_int, false },	 { "max", json_type_int, false },
	{ "period-ms", json_type_int, false },	 { "pressure", json_type_int, false },
	{ "pressure-ms", json_type_int, false }, { "idle", json_type_int, false },
	{ "idle-ms", json_type_int, false },	 { "cooldown-ms", json_type_int, false },
	{ NULL, json_type_null, false },
};

/* An integer argument in [lo, hi] into *out, if given. Returns false with err set. */
static bool int_arg(struct json_object *args, const char *key, int64_t lo, int64_t hi,
		    unsigned *out, struct qmp_error *err)
{
	struct json_object *o;
	int64_t v;

	if (!json_object_object_get_ex(args, key, &o))
		return true;
	v = json_object_get_int64(o);
	if (v < lo || v > hi) {
		qmp_error_set(err, "GenericError", "Parameter '%s' expects a value in %lld..%lld",
			      key, (long long)lo, (long long)hi);
		return false;
	}
	*out = (unsigned)v;
	return true;
}

static struct json_object *autoscale_set(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct autoscale_status st;
	struct autoscale_params p;
	char msg[200];

	autoscale_get_status(vm, &st);
	/* Unnamed parameters: as they are while it runs, else --autoscale on's defaults. */
	if (st.enabled) {
		p = st.p;
	} else {
		config_parse_autoscale(&p, "on", NULL, 0);
		p.min = p.max = 0;
	}
	if (!int_arg(args, "min", 1, vm->cfg->max_cpus, &p.min, err) ||
	    !int_arg(args, "max", 1, vm->cfg->max_cpus, &p.max, err) ||
	    !int_arg(args, "period-ms", AUTOSCALE_PERIOD_MIN_MS, AUTOSCALE_TIME_MAX_MS,
		     &p.period_ms, err) ||
	    !int_arg(args, "pressure", 1, 100, &p.pressure_pct, err) ||
	    !int_arg(args, "pressure-ms", 0, AUTOSCALE_TIME_MAX_MS, &p.pressure_ms, err) ||
	    !int_arg(args, "idle", 0, 99, &p.idle_pct, err) ||
	    !int_arg(args, "idle-ms", 0, AUTOSCALE_TIME_MAX_MS, &p.idle_ms, err) ||
	    !int_arg(args, "cooldown-ms", 0, AUTOSCALE_TIME_MAX_MS, &p.cooldown_ms, err))
		return NULL;
	if (autoscale_enable(vm, &p, msg, sizeof(msg))) {
		qmp_error_set(err, "GenericError", "%s", msg);
		return NULL;
	}
	return NULL;
}

static struct json_object *autoscale_off(void *ctx, struct json_object *args, struct qmp_error *err)
{
	(void)args;
	(void)err;
	autoscale_disable(ctx);
	return NULL;
}

static struct json_object *query_autoscale(void *ctx, struct json_object *args,
					   struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *r = json_object_new_object(), *o;
	struct autoscale_status s;

	(void)args;
	(void)err;
	autoscale_get_status(vm, &s);
	json_object_object_add(r, "enabled", json_object_new_boolean(s.enabled));
	json_object_object_add(r, "waiting", json_object_new_boolean(s.waiting));
	if (s.enabled) {
		qmp_add_u64(r, "min", s.p.min);
		qmp_add_u64(r, "max", s.p.max);
		qmp_add_u64(r, "period-ms", s.p.period_ms);
		qmp_add_u64(r, "pressure", s.p.pressure_pct);
		qmp_add_u64(r, "pressure-ms", s.p.pressure_ms);
		qmp_add_u64(r, "idle", s.p.idle_pct);
		qmp_add_u64(r, "idle-ms", s.p.idle_ms);
		qmp_add_u64(r, "cooldown-ms", s.p.cooldown_ms);
	}
	json_object_object_add(r, "figures", figures_json(&s.fig));
	/* What the last sample saw of each present vCPU. */
	o = json_object_new_array();
	for (unsigned i = 0; i < s.nr_slots; i++) {
		const struct autoscale_cpu_in *c = &s.cpu[i];
		struct json_object *e;

		if (!c->present)
			continue;
		e = json_object_new_object();
		qmp_add_u64(e, "slot", i);
		add_share(e, "busy", c->busy);
		add_share(e, "wait", c->wait);
		json_object_object_add(e, "held", json_object_new_boolean(c->held));
		json_object_object_add(e, "source",
				       json_object_new_string(c->guest ? "guest" : "host"));
		json_object_array_add(o, e);
	}
	json_object_object_add(r, "cpus", o);
	if (s.inflight != AUTOSCALE_NONE) {
		o = json_object_new_object();
		json_object_object_add(o, "action",
				       json_object_new_string(autoscale_op_name(s.inflight)));
		qmp_add_u64(o, "slot", s.inflight_slot);
		json_object_object_add(r, "in-flight", o);
	}
	o = json_object_new_object();
	qmp_add_u64(o, "samples", s.samples);
	qmp_add_u64(o, "adds", s.adds);
	qmp_add_u64(o, "removes", s.removes);
	qmp_add_u64(o, "refused", s.refused);
	qmp_add_u64(o, "failed", s.failed);
	qmp_add_u64(o, "manual", s.manual);
	qmp_add_u64(o, "implausible", s.implausible);
	qmp_add_u64(o, "unconfirmed", s.unconfirmed);
	qmp_add_u64(o, "present-vcpu-ms", s.present_vcpu_ms);
	json_object_object_add(r, "counters", o);
	return r;
}

const struct qmp_command control_autoscale_commands[] = {
	{ "autoscale-set", autoscale_set, set_args },
	{ "autoscale-off", autoscale_off, NULL },
	{ "query-autoscale", query_autoscale, NULL },
	{ NULL, NULL, NULL },
};
