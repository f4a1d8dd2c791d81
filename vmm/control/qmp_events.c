// SPDX-License-Identifier: MIT
/*
 * QMP events (qmp.h): each formatted once, stamped, queued for the dispatcher from any
 * thread; and the rate limit of the events a guest can trigger at will, per event name and
 * data key, as QEMU's monitor throttles its own (docs/qmp.md, "Event limits").
 */
#include "qmp_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/*
 * Events a guest can trigger at will, and how many of each go out: `burst` at once, then
 * `per_sec` a second on average (all keys of the event together). Over that, as QEMU's
 * monitor throttles its events, the latest event of each key (a CPU slot) waits and goes
 * out as the budget refills; the ones it replaced are lost. docs/qmp.md lists these.
 */
static const struct event_limit {
	const char *name;
	unsigned burst, per_sec;
} event_limits[] = {
	{ "ACPI_DEVICE_OST", 256, 256 },     { "PLUGVM_CPU_ONLINE", 256, 256 },
	{ "PLUGVM_CPU_OFFLINE", 256, 256 },  { "CPUHP_STATE", 1024, 1000 },
	{ "GUEST_LOCKDEP_WARNING", 32, 10 },
};
_Static_assert(sizeof(event_limits) / sizeof(event_limits[0]) == QMP_NR_EVENT_LIMITS,
	       "qmp_internal.h sizes the throttles by this table");
#define NR_EVENT_LIMITS QMP_NR_EVENT_LIMITS

void qmp_server_event(struct qmp_server *s, const char *name, struct json_object *data)
{
	qmp_server_event_mask(s, 0, name, data);
}

void qmp_server_event_mask(struct qmp_server *s, uint32_t mask, const char *name,
			   struct json_object *data)
{
	qmp_server_event_key(s, mask, name, 0, data);
}

uint64_t qmp_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const struct event_limit *event_limit(const char *name, unsigned *idx)
{
	unsigned i;

	for (i = 0; i < NR_EVENT_LIMITS; i++) {
		if (!strcmp(event_limits[i].name, name)) {
			*idx = i;
			return &event_limits[i];
		}
	}
	return NULL;
}

/* `name` is among the declared event names, or none were declared. Any thread. */
static bool event_declared(const struct qmp_server *s, const char *name)
{
	const char *const *n;

	if (!s->event_names)
		return true;
	for (n = s->event_names; *n; n++)
		if (!strcmp(*n, name))
			return true;
	return false;
}

/* ev_lock held. */
static void queue_event(struct qmp_server *s, struct qmp_event *e)
{
	e->next = NULL;
	*s->ev_tail = e;
	s->ev_tail = &e->next;
}

/* Take one event's worth of budget now if there is one (GCRA). ev_lock held. */
static bool throttle_take(struct event_throttle *t, const struct event_limit *l, uint64_t now)
{
	uint64_t interval = 1000000000ull / l->per_sec, tat = t->tat_ns > now ? t->tat_ns : now;

	if (tat - now > (uint64_t)(l->burst - 1) * interval)
		return false;
	t->tat_ns = tat + interval;
	return true;
}

/* Queue the waiting events of `t` the budget allows, keys in turn. ev_lock held. */
static bool throttle_release(struct qmp_server *s, struct event_throttle *t,
			     const struct event_limit *l, uint64_t now)
{
	bool any = false;

	while (t->nr_pending && throttle_take(t, l, now)) {
		struct qmp_event *e;

		while (!t->pending[t->cursor])
			t->cursor = (t->cursor + 1) % s->nr_event_keys;
		e = t->pending[t->cursor];
		t->pending[t->cursor] = NULL;
		t->nr_pending--;
		queue_event(s, e);
		any = true;
	}
	return any;
}

/*
 * A throttled event: queued now, or kept as its key's latest (then *warn says whether to
 * log it, after the lock is let go). True when something was queued. ev_lock held.
 */
static bool throttle_event(struct qmp_server *s, unsigned idx, uint32_t key, struct qmp_event *e,
			   bool *warn)
{
	const struct event_limit *l = &event_limits[idx];
	struct event_throttle *t = &s->throttle[idx];
	uint64_t now = qmp_mono_ns();
	bool any = throttle_release(s, t, l, now);

	if (key >= s->nr_event_keys)
		key = s->nr_event_keys - 1;
	if (!t->pending || !t->pending[key]) {
		if (!t->nr_pending && throttle_take(t, l, now)) {
			queue_event(s, e);
			return true;
		}
		if (!t->pending)
			t->pending = calloc(s->nr_event_keys, sizeof(*t->pending));
		if (!t->pending) {
			free(e->line);
			free(e);
			return any;
		}
		t->nr_pending++;
	} else {
		t->coalesced++;
		free(t->pending[key]->line);
		free(t->pending[key]);
	}
	t->pending[key] = e;
	*warn = true;
	return any;
}

void qmp_server_event_key(struct qmp_server *s, uint32_t mask, const char *name, uint32_t key,
			  struct json_object *data)
{
	struct json_object *o = json_object_new_object(), *ts = json_object_new_object();
	struct qmp_event *e = calloc(1, sizeof(*e));
	const struct event_limit *l;
	bool wake = true, warn = false;
	uint64_t coalesced;
	struct timeval tv;
	unsigned idx = 0;

	gettimeofday(&tv, NULL);
	json_object_object_add(o, "event", json_object_new_string(name));
	if (data)
		json_object_object_add(o, "data", data);
	json_object_object_add(ts, "seconds", json_object_new_int64(tv.tv_sec));
	json_object_object_add(ts, "microseconds", json_object_new_int64(tv.tv_usec));
	json_object_object_add(o, "timestamp", ts);
	if (e) {
		e->mask = mask;
		e->line = strdup(json_object_to_json_string_ext(
		    o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	}
	json_object_put(o);
	if (!e || !e->line || s->event_fd < 0) {
		if (e)
			free(e->line);
		free(e);
		return;
	}
	if (!event_declared(s, name) && log_ratelimit_ok(&s->undeclared_rl, 1))
		log_error("qmp: event %s is missing from the declared event names "
			  "(query-qmp-schema does not list it)",
			  name);
	l = event_limit(name, &idx);
	pthread_mutex_lock(&s->ev_lock);
	if (l)
		wake = throttle_event(s, idx, key, e, &warn);
	else
		queue_event(s, e);
	coalesced = l ? s->throttle[idx].coalesced : 0;
	pthread_mutex_unlock(&s->ev_lock);
	if (wake)
		qmp_server_wake(s);
	if (l && warn && log_ratelimit_ok(&s->throttle[idx].rl, 1))
		log_warn("qmp: the guest triggers %s faster than %u/s: only the latest of each "
			 "CPU goes out (%llu replaced so far)",
			 l->name, l->per_sec, (unsigned long long)coalesced);
}

void qmp_server_set_event_keys(struct qmp_server *s, uint32_t nr_keys)
{
	unsigned i;

	pthread_mutex_lock(&s->ev_lock);
	for (i = 0; i < NR_EVENT_LIMITS; i++)
		if (s->throttle[i].pending)
			break;
	if (i == NR_EVENT_LIMITS && nr_keys)
		s->nr_event_keys = nr_keys;
	pthread_mutex_unlock(&s->ev_lock);
}

int qmp_server_next_timeout_ms(struct qmp_server *s)
{
	uint64_t now = qmp_mono_ns(), first = UINT64_MAX;
	unsigned i;

	pthread_mutex_lock(&s->ev_lock);
	for (i = 0; i < NR_EVENT_LIMITS; i++) {
		const struct event_limit *l = &event_limits[i];
		const struct event_throttle *t = &s->throttle[i];
		uint64_t slack = (uint64_t)(l->burst - 1) * (1000000000ull / l->per_sec), when;

		if (!t->nr_pending)
			continue;
		/* throttle_take() succeeds once tat - now <= slack. */
		when = t->tat_ns > slack ? t->tat_ns - slack : 0;
		if (when < first)
			first = when;
	}
	pthread_mutex_unlock(&s->ev_lock);
	if (first == UINT64_MAX)
		return -1;
	return first <= now ? 0 : (int)((first - now + 999999) / 1000000);
}

void qmp_server_tick(struct qmp_server *s)
{
	uint64_t now = qmp_mono_ns();
	bool any = false;
	unsigned i;

	pthread_mutex_lock(&s->ev_lock);
	for (i = 0; i < NR_EVENT_LIMITS; i++)
		any |= throttle_release(s, &s->throttle[i], &event_limits[i], now);
	pthread_mutex_unlock(&s->ev_lock);
	if (any)
		qmp_server_wake(s);
}

struct qmp_event *qmp_events_take(struct qmp_server *s)
{
	struct qmp_event *e;

	pthread_mutex_lock(&s->ev_lock);
	e = s->ev_head;
	s->ev_head = NULL;
	s->ev_tail = &s->ev_head;
	pthread_mutex_unlock(&s->ev_lock);
	return e;
}

void qmp_events_free(struct qmp_server *s)
{
	struct qmp_event *e;
	unsigned i;

	while ((e = s->ev_head)) {
		s->ev_head = e->next;
		free(e->line);
		free(e);
	}
	for (i = 0; i < NR_EVENT_LIMITS; i++) {
		struct event_throttle *t = &s->throttle[i];
		uint32_t k;

		for (k = 0; t->pending && k < s->nr_event_keys; k++) {
			if (t->pending[k])
				free(t->pending[k]->line);
			free(t->pending[k]);
		}
		free(t->pending);
		t->pending = NULL;
	}
}
