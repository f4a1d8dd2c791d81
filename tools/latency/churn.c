// SPDX-License-Identifier: MIT
/*
 * plugvm-latency --churn: remove and re-add the measured vCPUs (but 0) through QMP's
 * device_del / device_add, one request in flight at a time, never blocking the run's loop.
 */
#include <stdio.h>
#include <string.h>

#include "latency.h"
#include "tools/lib/conn.h"
#include "tools/lib/events.h"
#include "tools/lib/json_get.h"
#include "tools/lib/print.h"

/* Not CPU 0: a measured CPU is removed under its measurement thread. */
void churn_init(struct conn *c, struct churn *ch)
{
	size_t len, i;

	ch->hp = conn_cmd(c, "query-hotpluggable-cpus", NULL);
	len = json_object_array_length(ch->hp);
	for (i = 0; i < len && ch->n < 16; i++) {
		struct json_object *e = json_object_array_get_idx(ch->hp, len - 1 - i);
		const char *path = get_str(e, "qom-path", NULL);

		ch->type = get_str(e, "type", NULL);
		if (i == 0 || !path)
			continue;
		ch->cpu[ch->n].slot = (unsigned)i;
		json_object_object_get_ex(e, "props", &ch->cpu[ch->n].props);
		snprintf(ch->cpu[ch->n].path, sizeof(ch->cpu[ch->n].path), "%s", path);
		ch->n++;
	}
	if (!ch->n)
		die(LAT_EXIT_USAGE, "--churn: no CPU but 0 is present (use --smp 2 or more)");
}

/* The first step of a cycle: device_del of the next CPU in turn. */
static void churn_send_removal(struct conn *c, struct churn *ch)
{
	struct json_object *args = json_object_new_object();

	ch->cur = &ch->cpu[ch->next++ % ch->n];
	json_object_object_add(args, "id", json_object_new_string(ch->cur->path));
	json_object_put(conn_cmd(c, "device_del", args));
	ch->phase = CHURN_REMOVING;
	ch->deadline = now_ms() + c->timeout_ms;
}

static void churn_send_add(struct conn *c, struct churn *ch)
{
	static const char *const keys[] = { "socket-id", "die-id", "core-id", "thread-id" };
	struct json_object *args = json_object_new_object(), *v;
	char id[32];
	size_t k;

	snprintf(id, sizeof(id), "lat-cpu%u", ch->cur->slot);
	for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (json_object_object_get_ex(ch->cur->props, keys[k], &v))
			json_object_object_add(args, keys[k], json_object_get(v));
	json_object_object_add(args, "driver", json_object_new_string(ch->type));
	json_object_object_add(args, "id", json_object_new_string(id));
	json_object_put(conn_cmd(c, "device_add", args));
	snprintf(ch->slot, sizeof(ch->slot), "%u", ch->cur->slot);
	ch->phase = CHURN_ADDING;
	ch->deadline = now_ms() + c->timeout_ms;
}

/* The removal's answer: the add follows, or the cycle ends as a finding. */
static void churn_removed(struct conn *c, struct churn *ch, struct json_object *ev)
{
	if (strcmp(get_str(ev, "event", NULL), "DEVICE_DELETED")) {
		/* A finding, not the end of the run: the CPU stays, the next cycle tries again. */
		fprintf(stderr,
			"plugvm-latency: --churn: CPU %u not removed: %s (the guest "
			"refused, or did not eject it within plugvm's deadline)\n",
			ch->cur->slot, get_str(ev, "event", NULL));
		ch->failures++;
		ch->phase = CHURN_IDLE;
		return;
	}
	churn_send_add(c, ch);
}

static void churn_added(struct churn *ch, struct json_object *ev)
{
	if (get_int(json_object_object_get(json_object_object_get(ev, "data"), "info"), "status",
		    NULL))
		die(LAT_EXIT_FAIL, "--churn: the guest did not bring CPU %u back (failed)",
		    ch->cur->slot);
	snprintf(ch->cur->path, sizeof(ch->cur->path), "/machine/peripheral/lat-cpu%u",
		 ch->cur->slot);
	ch->cycles++;
	ch->phase = CHURN_IDLE;
}

void churn_step(struct conn *c, struct churn *ch, bool start, int64_t until)
{
	struct json_object *ev;

	if (start && ch->phase == CHURN_IDLE)
		churn_send_removal(c, ch);
	while (ch->phase != CHURN_IDLE) {
		int64_t by = until < ch->deadline ? until : ch->deadline;

		if (ch->phase == CHURN_REMOVING)
			ev = conn_poll_event(c, match_removed, ch->cur->path, by);
		else
			ev = conn_poll_event(c, match_ost, ch->slot, by);
		if (!ev) {
			if (now_ms() < ch->deadline)
				return; /* `until` came first: the answer is still to come */
			die(LAT_EXIT_FAIL, "--churn: no answer to the %s of CPU %u",
			    ch->phase == CHURN_REMOVING ? "removal" : "re-add", ch->cur->slot);
		}
		if (ch->phase == CHURN_REMOVING)
			churn_removed(c, ch, ev);
		else
			churn_added(ch, ev);
		json_object_put(ev);
	}
}
