// SPDX-License-Identifier: MIT
/*
 * plugctl's commands that the guest agent answers through plugvm: the cpuhp states, every
 * CPU's state, moving a CPU to a state, arming a failure, and the timer and scheduler
 * statistics. Names from the guest are shown through tty().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugctl.h"

/* `command` with `args` (taken): its value as JSON with --json, else through `text`. */
static void show(struct conn *c, const char *command, struct json_object *args,
		 void (*text)(struct json_object *r))
{
	struct json_object *r = conn_cmd(c, command, args);

	if (json_out)
		print_json(r);
	else
		text(r);
	json_object_put(r);
}

/* The optional CPU argument of timers and sched, as QMP arguments. */
static struct json_object *cpu_args(char **argv)
{
	long cpu = argv[0] ? parse_num(argv[0], "cpu") : -1;
	struct json_object *args = json_object_new_object();

	if (cpu >= 0)
		json_object_object_add(args, "cpu", json_object_new_int((int)cpu));
	return args;
}

static void states_text(struct json_object *r)
{
	size_t i;

	printf("%-4s %-24s %-9s %s\n", "id", "name", "section", "allows");
	for (i = 0; i < json_object_array_length(r); i++) {
		struct json_object *e = json_object_array_get_idx(r, i);
		bool rest = get_bool(e, "can-rest"), fail = get_bool(e, "can-fail");

		printf("%-4d %-24s %-9s %s%s%s\n", get_int(e, "id", NULL),
		       tty(get_str(e, "name", NULL)), tty(get_str(e, "section", NULL)),
		       rest ? "target" : "", rest && fail ? "," : "", fail ? "fail" : "");
	}
}

int cmd_states(struct conn *c, char **argv)
{
	(void)argv;
	show(c, "query-cpuhp-states", NULL, states_text);
	return 0;
}

static void cpuhp_text(struct json_object *r)
{
	size_t i;

	printf("%-5s %-8s %-24s %-24s %s\n", "cpu", "present", "state", "target", "note");
	for (i = 0; i < json_object_array_length(r); i++) {
		struct json_object *e = json_object_array_get_idx(r, i);

		printf("%-5d %-8s %-24s %-24s", get_int(e, "cpu", NULL),
		       get_bool(e, "present") ? "yes" : "no", tty(get_str(e, "state", NULL)),
		       tty(get_str(e, "target", NULL)));
		if (get_str(e, "fail", NULL))
			printf(" fail armed at %s", tty(get_str(e, "fail", NULL)));
		if (get_str(e, "failed-state", NULL))
			printf(" last failed at %s (%d)", tty(get_str(e, "failed-state", NULL)),
			       get_int(e, "last-error", NULL));
		printf("\n");
	}
}

int cmd_cpuhp(struct conn *c, char **argv)
{
	(void)argv;
	show(c, "query-cpuhp", NULL, cpuhp_text);
	return 0;
}

/* A state argument: a number is an id, anything else a name. */
static struct json_object *state_arg(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s && !*end)
		return json_object_new_int((int)v);
	return json_object_new_string(s);
}

static int target(struct conn *c, long cpu, const char *state)
{
	struct json_object *args = json_object_new_object(), *r, *list;
	bool ok;
	size_t i;

	json_object_object_add(args, "cpu", json_object_new_int((int)cpu));
	json_object_object_add(args, "state", state_arg(state));
	r = conn_cmd(c, "cpuhp-set-target", args);
	ok = json_object_object_get_ex(r, "success", &list) && json_object_get_boolean(list);
	if (json_out) {
		print_json(r);
	} else {
		json_object_object_get_ex(r, "states", &list);
		for (i = 0; i < json_object_array_length(list); i++) {
			struct json_object *e = json_object_array_get_idx(list, i), *ns;

			json_object_object_get_ex(e, "ns", &ns);
			printf("  %-4s %-24s %10.3f ms%s\n", tty(get_str(e, "direction", NULL)),
			       tty(get_str(e, "state", NULL)),
			       (double)json_object_get_int64(ns) / 1e6,
			       get_int(e, "result", NULL) ? "  failed" : "");
		}
		json_object_object_get_ex(r, "ns", &list);
		if (ok)
			printf("cpu %ld: %s -> %s in %.3f ms\n", cpu, tty(get_str(r, "from", NULL)),
			       tty(get_str(r, "state", NULL)),
			       (double)json_object_get_int64(list) / 1e6);
		else
			printf("cpu %ld: failed at %s (error %d), rolled back to %s in %.3f ms\n",
			       cpu, tty(get_str(r, "failed-state", NULL)),
			       get_int(r, "error", NULL), tty(get_str(r, "state", NULL)),
			       (double)json_object_get_int64(list) / 1e6);
	}
	json_object_put(r);
	return ok ? 0 : EXIT_NO;
}

static void fail(struct conn *c, long cpu, const char *state)
{
	struct json_object *args = json_object_new_object();

	json_object_object_add(args, "cpu", json_object_new_int((int)cpu));
	json_object_object_add(args, "state", state_arg(state));
	json_object_put(conn_cmd(c, "cpuhp-fail", args));
	if (!json_out)
		printf("cpu %ld: %s%s\n", cpu,
		       strcmp(state, "none") ? "next transition fails at " : "no failure armed",
		       strcmp(state, "none") ? state : "");
}

static void timers_text(struct json_object *r)
{
	size_t i, l;

	for (i = 0; i < json_object_array_length(r); i++) {
		struct json_object *e = json_object_array_get_idx(r, i), *lv;

		printf("cpu %d: ticks %lld, expiry passes %lld, callbacks %lld, remote %lld, "
		       "migrated in %lld\n",
		       get_int(e, "cpu", NULL), (long long)get_i64(e, "ticks"),
		       (long long)get_i64(e, "softirqs"), (long long)get_i64(e, "callbacks"),
		       (long long)get_i64(e, "remote-ops"), (long long)get_i64(e, "migrated-in"));
		printf("  %-5s %10s %10s %10s %12s %12s\n", "level", "added", "cancelled",
		       "expired", "late avg", "late max");
		json_object_object_get_ex(e, "levels", &lv);
		for (l = 0; l < json_object_array_length(lv); l++) {
			struct json_object *x = json_object_array_get_idx(lv, l);
			int64_t exp = get_i64(x, "expired");

			if (!get_i64(x, "added") && !exp)
				continue;
			printf("  %-5zu %10lld %10lld %10lld %12.2f %12lld\n", l,
			       (long long)get_i64(x, "added"), (long long)get_i64(x, "cancelled"),
			       (long long)exp,
			       exp ? (double)get_i64(x, "lateness-sum") / (double)exp : 0.0,
			       (long long)get_i64(x, "lateness-max"));
		}
	}
	printf("(lateness in ticks of %lld ns)\n",
	       json_object_array_length(r)
		   ? (long long)get_i64(json_object_array_get_idx(r, 0), "tick-ns")
		   : 0LL);
}

static void sched_text(struct json_object *r)
{
	size_t i;

	printf("%-4s %10s %10s %10s %10s %8s %8s %10s %8s\n", "cpu", "switches", "preempt",
	       "wake-loc", "wake-rem", "mig-in", "mig-out", "idle", "ipis");
	for (i = 0; i < json_object_array_length(r); i++) {
		struct json_object *e = json_object_array_get_idx(r, i);

		printf(
		    "%-4d %10lld %10lld %10lld %10lld %8lld %8lld %10lld %8lld\n",
		    get_int(e, "cpu", NULL), (long long)get_i64(e, "switches"),
		    (long long)get_i64(e, "preemptions"), (long long)get_i64(e, "wakeups-local"),
		    (long long)get_i64(e, "wakeups-remote"), (long long)get_i64(e, "migrations-in"),
		    (long long)get_i64(e, "migrations-out"), (long long)get_i64(e, "idle-entries"),
		    (long long)get_i64(e, "resched-ipis"));
	}
}

int cmd_target(struct conn *c, char **argv)
{
	return target(c, parse_num(argv[0], "cpu"), argv[1]);
}

int cmd_fail(struct conn *c, char **argv)
{
	fail(c, parse_num(argv[0], "cpu"), argv[1]);
	return 0;
}

int cmd_timers(struct conn *c, char **argv)
{
	show(c, "query-timers", cpu_args(argv), timers_text);
	return 0;
}

int cmd_sched(struct conn *c, char **argv)
{
	show(c, "query-sched", cpu_args(argv), sched_text);
	return 0;
}
