// SPDX-License-Identifier: MIT
/* vCPUs on demand: sampling, checking and acting (see autoscale.h). */
#include "autoscale.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "cpus.h"
#include "devices/load.h"
#include "log.h"
#include "vm.h"

/* Reports from vCPU threads waiting for the main thread; beyond, the op's timeout covers. */
#define REPORTS 64
/*
 * A guest's busy share counts only as far as the vCPU thread's own run time confirms it,
 * plus this: the two are measured over windows a tick apart.
 */
#define CONFIRM_SLACK 0.1
/* Most runnable threads a guest CPU may claim; more is a lie (the figure is not used). */
#define MAX_NR_RUNNING (1u << 20)

struct report {
	unsigned slot;
	bool online; /* an insert came up (REPORT online, or _OST source 1 status 0) */
	int result;
};

struct slot_sample {
	/* The policy added this slot's vCPU, and no removal of it was asked since. */
	bool policy_added;
	bool have; /* prev_* hold the last sample of this vCPU */
	uint64_t prev_cpu_ns; /* the vCPU thread's run time */
	bool prev_guest; /* prev_rec is a record of generation prev_gen */
	uint64_t prev_gen;
	struct plugvm_load_cpu prev_rec;
};

struct autoscale {
	struct vm *vm;
	bool enabled;
	struct autoscale_policy pol;
	uint64_t next_ms; /* the next sample */
	uint64_t last_ms; /* the last sample (0: none yet) */
	struct slot_sample *s; /* [max_cpus] */
	struct autoscale_cpu_in *in; /* [max_cpus] */
	bool waiting; /* the guest does not handle hotplug yet */
	char inflight_id[CPUS_MAX_ID + 1]; /* the id of the vCPU in flight ("": none) */
	uint64_t samples, implausible, unconfirmed, present_vcpu_ms;
	struct log_ratelimit rl;
	void (*event_fn)(void *opaque, const struct autoscale_event *e);
	void *event_opaque;
	/* From vCPU threads, under lock. */
	pthread_mutex_t lock;
	struct report reports[REPORTS];
	unsigned nr_reports;
};

static uint64_t mono_ms(void)
{
	return clock_now_ns() / 1000000ull;
}

/* The run time of thread `tid` of this process (Linux's per-thread CPU clock); 0: gone. */
static uint64_t thread_cpu_ns(pid_t tid)
{
	/* MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED): what pthread_getcpuclockid() returns. */
	clockid_t id = (clockid_t)((~(unsigned)tid << 3) | 6u);
	struct timespec ts;

	if (tid <= 0 || clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void emit(struct autoscale *a, const struct autoscale_event *e)
{
	if (a->event_fn)
		a->event_fn(a->event_opaque, e);
}

static void emit_simple(struct autoscale *a, enum autoscale_event_kind kind)
{
	struct autoscale_event e = {
		.kind = kind, .fig = a->pol.last, .min = a->pol.p.min, .max = a->pol.p.max
	};

	emit(a, &e);
}

int autoscale_create(struct vm *vm)
{
	struct autoscale *a = calloc(1, sizeof(*a));
	unsigned n = vm->cfg->max_cpus;
	char err[160];

	if (!a)
		goto nomem;
	a->vm = vm;
	pthread_mutex_init(&a->lock, NULL);
	a->s = calloc(n, sizeof(*a->s));
	a->in = calloc(n, sizeof(*a->in));
	if (!a->s || !a->in || autoscale_policy_init(&a->pol, &vm->cfg->autoscale, n)) {
		free(a->s);
		free(a->in);
		autoscale_policy_free(&a->pol);
		free(a);
		goto nomem;
	}
	vm->autoscale = a;
	if (vm->cfg->autoscale.enabled &&
	    autoscale_enable(vm, &vm->cfg->autoscale, err, sizeof(err))) {
		log_error("%s", err);
		autoscale_destroy(vm);
		return -EINVAL;
	}
	return 0;
nomem:
	log_error("autoscale: out of memory");
	return -ENOMEM;
}

void autoscale_destroy(struct vm *vm)
{
	struct autoscale *a = vm->autoscale;

	if (!a)
		return;
	autoscale_policy_free(&a->pol);
	pthread_mutex_destroy(&a->lock);
	free(a->s);
	free(a->in);
	free(a);
	vm->autoscale = NULL;
}

void autoscale_set_event_fn(struct vm *vm,
			    void (*fn)(void *opaque, const struct autoscale_event *e), void *opaque)
{
	if (!vm->autoscale)
		return;
	vm->autoscale->event_fn = fn;
	vm->autoscale->event_opaque = opaque;
}

int autoscale_enable(struct vm *vm, const struct autoscale_params *p, char *err, size_t errlen)
{
	struct autoscale *a = vm->autoscale;
	struct autoscale_params q = *p;

	if (!a) {
		snprintf(err, errlen, "autoscale: this VM has no vCPUs to scale");
		return -EINVAL;
	}
	q.enabled = true;
	if (autoscale_policy_set(&a->pol, &q)) {
		snprintf(err, errlen,
			 "autoscale: min=%u, max=%u: want 1 <= min <= max <= maxcpus (%u)", p->min,
			 p->max, vm->cfg->max_cpus);
		return -EINVAL;
	}
	if (!a->enabled) {
		unsigned i;

		for (i = 0; i < vm->cfg->max_cpus; i++)
			a->s[i].have = false; /* stale since the last time it ran */
		a->last_ms = 0;
		a->next_ms = mono_ms();
	}
	a->enabled = true;
	emit_simple(a, AUTOSCALE_EV_ON);
	return 0;
}

void autoscale_disable(struct vm *vm)
{
	struct autoscale *a = vm->autoscale;

	if (!a || !a->enabled)
		return;
	a->enabled = false;
	emit_simple(a, AUTOSCALE_EV_OFF);
}

int autoscale_next_timeout_ms(struct vm *vm)
{
	struct autoscale *a = vm->autoscale;
	uint64_t now;

	if (!a || !a->enabled)
		return -1;
	now = mono_ms();
	return a->next_ms <= now ? 0 : (int)(a->next_ms - now);
}

void autoscale_cpus_event(struct vm *vm, const struct cpus_event *e)
{
	struct autoscale *a = vm->autoscale;
	struct report r = { .slot = e->slot };

	if (!a)
		return;
	if (e->type == CPUS_EVENT_REPORT && e->online) {
		r.online = true;
		r.result = e->result;
	} else if (e->type == CPUS_EVENT_OST && e->ost_source == 1) {
		/* A guest without plugvm's report (Linux): _OST on the insert. */
		r.online = true;
		r.result = e->ost_status ? -EIO : 0;
	} else if (e->type == CPUS_EVENT_DELETED) {
		r.result = 0;
	} else if (e->type == CPUS_EVENT_UNPLUG_FAILED) {
		r.result = -EBUSY;
	} else {
		return;
	}
	pthread_mutex_lock(&a->lock);
	if (a->nr_reports < REPORTS)
		a->reports[a->nr_reports++] = r;
	pthread_mutex_unlock(&a->lock);
}

bool autoscale_adopt(struct vm *vm, unsigned slot)
{
	struct autoscale *a = vm->autoscale;

	if (!a || slot >= vm->cfg->max_cpus || !a->s[slot].policy_added ||
	    !cpus_present(vm->cpus, slot))
		return false;
	autoscale_manual(vm, AUTOSCALE_ADD, slot);
	return true;
}

void autoscale_manual(struct vm *vm, enum autoscale_op op, unsigned slot)
{
	struct autoscale *a = vm->autoscale;
	unsigned i, online = 0;

	if (!a)
		return;
	if (slot < vm->cfg->max_cpus)
		a->s[slot].policy_added = false; /* the operator's from now on, or going */
	if (!a->enabled)
		return;
	for (i = 0; i < vm->cfg->max_cpus; i++)
		online += cpus_present(vm->cpus, i);
	/* A removal was only asked for: count the vCPU as gone. */
	if (op == AUTOSCALE_REMOVE && online)
		online--;
	if (autoscale_policy_manual(&a->pol, mono_ms(), op, online))
		emit_simple(a, AUTOSCALE_EV_RANGE);
}

/* The vCPU operations that ended, as the vCPU threads and cpus_process() reported them. */
static void take_reports(struct autoscale *a)
{
	struct report r[REPORTS];
	unsigned n, i;

	pthread_mutex_lock(&a->lock);
	n = a->nr_reports;
	memcpy(r, a->reports, n * sizeof(r[0]));
	a->nr_reports = 0;
	pthread_mutex_unlock(&a->lock);
	for (i = 0; i < n; i++) {
		enum autoscale_op op = r[i].online ? AUTOSCALE_ADD : AUTOSCALE_REMOVE;
		struct autoscale_event e = { .kind = AUTOSCALE_EV_DONE,
					     .op = op,
					     .slot = r[i].slot,
					     .result = r[i].result };

		if (!autoscale_policy_done(&a->pol, mono_ms(), op, r[i].slot, r[i].result))
			continue;
		/* An ejected vCPU's id is forgotten by now: the one it had when it was picked. */
		e.id = a->inflight_id[0] ? a->inflight_id : NULL;
		e.fig = a->pol.last;
		e.min = a->pol.p.min;
		e.max = a->pol.p.max;
		emit(a, &e);
	}
}

/*
 * The guest's figures for `slot` over the `wall_ns` since the last sample, checked: true with
 * c->busy, c->wait and c->held set, false (host figures, then) if there are none or they lie.
 */
static bool guest_figures(struct autoscale *a, unsigned slot, uint64_t wall_ns,
			  struct autoscale_cpu_in *c)
{
	struct slot_sample *s = &a->s[slot];
	struct plugvm_load_cpu r;
	uint64_t gen = load_generation(a->vm), d_busy, d_wait;
	bool ok;

	if (load_read(a->vm, slot, &r)) {
		s->prev_guest = false;
		return false;
	}
	ok = s->prev_guest && s->prev_gen == gen;
	if (ok && (r.now_ns < s->prev_rec.now_ns || r.busy_ns < s->prev_rec.busy_ns ||
		   r.wait_ns < s->prev_rec.wait_ns || r.nr_running > MAX_NR_RUNNING ||
		   (r.flags & ~(PLUGVM_LOAD_ONLINE | PLUGVM_LOAD_HELD)))) {
		a->implausible++;
		log_guest_warn(&a->rl, "autoscale: vCPU %u's load record contradicts itself", slot);
		ok = false;
	}
	if (ok) {
		d_busy = r.busy_ns - s->prev_rec.busy_ns;
		d_wait = r.wait_ns - s->prev_rec.wait_ns;
		/* The guest publishes a busy CPU every 10 ms (and a tick): that lag, no more. */
		if (d_busy > wall_ns + wall_ns / 4 + 10000000ull ||
		    d_wait > wall_ns + wall_ns / 4 + 10000000ull) {
			a->implausible++;
			log_guest_warn(&a->rl, "autoscale: vCPU %u claims %llu ns busy in %llu ns",
				       slot, (unsigned long long)d_busy,
				       (unsigned long long)wall_ns);
			ok = false;
		} else {
			c->busy = (double)d_busy / (double)wall_ns;
			c->wait = (double)d_wait / (double)wall_ns;
		}
	}
	if (ok && !(r.flags & PLUGVM_LOAD_ONLINE))
		ok = false; /* coming up or going: the host's figures meanwhile */
	s->prev_guest = true;
	s->prev_gen = gen;
	s->prev_rec = r;
	c->held = (r.flags & PLUGVM_LOAD_HELD) != 0;
	return ok;
}

/* One sample of every slot into a->in[]. */
static void sample(struct autoscale *a, uint64_t now_ms, uint64_t wall_ns)
{
	struct vm *vm = a->vm;
	unsigned i, online = 0;

	for (i = 0; i < vm->cfg->max_cpus; i++) {
		struct autoscale_cpu_in *c = &a->in[i];
		struct slot_sample *s = &a->s[i];
		uint64_t cpu_ns;
		double host;

		memset(c, 0, sizeof(*c));
		if (!cpus_present(vm->cpus, i)) {
			s->have = false;
			s->prev_guest = false;
			continue;
		}
		c->present = true;
		online++;
		cpu_ns = thread_cpu_ns(cpus_tid(vm->cpus, i));
		host = s->have && wall_ns && cpu_ns >= s->prev_cpu_ns
			   ? (double)(cpu_ns - s->prev_cpu_ns) / (double)wall_ns
			   : 0.0;
		if (host > 1.0)
			host = 1.0;
		s->have = cpu_ns != 0;
		s->prev_cpu_ns = cpu_ns;
		c->guest = wall_ns && guest_figures(a, i, wall_ns, c);
		if (!c->guest) {
			c->busy = host;
			c->wait = 0;
			continue;
		}
		/* Believed as far as the host saw the vCPU run: lies cost the guest real CPU. */
		if (c->busy > host + CONFIRM_SLACK) {
			c->busy = host + CONFIRM_SLACK;
			a->unconfirmed++;
		}
		if (c->busy > 1.0)
			c->busy = 1.0;
		if (c->wait > c->busy)
			c->wait = c->busy;
	}
	if (a->last_ms)
		a->present_vcpu_ms += (uint64_t)online * (now_ms - a->last_ms);
	a->samples++;
}

static void act(struct autoscale *a, const struct autoscale_decision *d, uint64_t now_ms)
{
	struct autoscale_event e = { .kind = AUTOSCALE_EV_DECIDED,
				     .op = d->op,
				     .slot = d->slot,
				     .reason = d->reason,
				     .fig = d->fig,
				     .min = a->pol.p.min,
				     .max = a->pol.p.max };
	struct cpus *c = a->vm->cpus;
	char id[24];
	int ret;

	if (d->op == AUTOSCALE_NONE) {
		if (d->reason == AUTOSCALE_R_HELD) {
			e.kind = AUTOSCALE_EV_HELD;
			emit(a, &e);
		}
		return;
	}
	if (d->op == AUTOSCALE_ADD) {
		unsigned i;

		/* libvirt's name for the vCPU in this slot, unless the operator used it. */
		snprintf(id, sizeof(id), "vcpu%u", d->slot);
		for (i = 0; i < a->vm->cfg->max_cpus; i++)
			if (cpus_id(c, i) && !strcmp(cpus_id(c, i), id))
				break;
		e.id = i < a->vm->cfg->max_cpus ? NULL : id;
	} else {
		e.id = cpus_id(c, d->slot);
	}
	snprintf(a->inflight_id, sizeof(a->inflight_id), "%s", e.id ? e.id : "");
	emit(a, &e);
	ret =
	    d->op == AUTOSCALE_ADD ? cpus_add(c, d->slot, e.id) : cpus_request_removal(c, d->slot);
	a->s[d->slot].policy_added = d->op == AUTOSCALE_ADD && !ret;
	if (ret) {
		log_warn("autoscale: %s vCPU %u: %s", autoscale_op_name(d->op), d->slot,
			 strerror(-ret));
		autoscale_policy_done(&a->pol, now_ms, d->op, d->slot, ret == -EBUSY ? -EIO : ret);
		e.kind = AUTOSCALE_EV_DONE;
		e.result = ret == -EBUSY ? -EIO : ret;
		emit(a, &e);
	}
}

void autoscale_process(struct vm *vm)
{
	struct autoscale *a = vm->autoscale;
	struct autoscale_decision d;
	struct autoscale_input in;
	uint64_t now, wall_ns;

	if (!a)
		return;
	take_reports(a);
	if (!a->enabled)
		return;
	now = mono_ms();
	if (now < a->next_ms)
		return;
	a->next_ms = now + a->pol.p.period_ms;
	wall_ns = a->last_ms ? (now - a->last_ms) * 1000000ull : 0;
	sample(a, now, wall_ns);
	a->last_ms = now;
	/* Until the guest can take a removal, nothing is decided (its boot is no load). */
	a->waiting = cpus_run_state(vm->cpus) != CPUS_RUNNING || !cpus_hotplug_listening(vm->cpus);
	if (a->waiting || !wall_ns)
		return; /* the first sample since enabling is only a baseline */
	in = (struct autoscale_input){ .now_ms = now, .nr_slots = vm->cfg->max_cpus, .cpu = a->in };
	d = autoscale_policy_step(&a->pol, &in);
	act(a, &d, now);
}

void autoscale_get_status(struct vm *vm, struct autoscale_status *s)
{
	struct autoscale *a = vm->autoscale;

	memset(s, 0, sizeof(*s));
	if (!a)
		return;
	s->enabled = a->enabled;
	s->waiting = a->waiting;
	s->p = a->pol.p;
	s->p.enabled = a->enabled;
	s->fig = a->pol.last;
	s->inflight = a->pol.inflight;
	s->inflight_slot = a->pol.inflight_slot;
	s->samples = a->samples;
	s->adds = a->pol.adds;
	s->removes = a->pol.removes;
	s->refused = a->pol.refused;
	s->failed = a->pol.failed;
	s->manual = a->pol.manual;
	s->implausible = a->implausible;
	s->unconfirmed = a->unconfirmed;
	s->present_vcpu_ms = a->present_vcpu_ms;
	s->cpu = a->in;
	s->nr_slots = vm->cfg->max_cpus;
}
