// SPDX-License-Identifier: MIT
/*
 * plugctl autoscale: vCPUs on demand (QMP query-autoscale, autoscale-set, autoscale-off):
 * what the policy runs with and last saw; `on KEY=VALUE...` sets it, `off` stops it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugctl.h"

/* QMP's argument names, which plugctl takes as KEY=VALUE words (all whole numbers). */
static const char *const keys[] = { "min",	   "max",  "period-ms", "pressure",
				    "pressure-ms", "idle", "idle-ms",	"cooldown-ms" };

static int show(struct conn *c)
{
	struct json_object *r = conn_cmd(c, "query-autoscale", NULL), *f, *n;

	if (json_out) {
		print_json(r);
		json_object_put(r);
		return 0;
	}
	json_object_object_get_ex(r, "figures", &f);
	json_object_object_get_ex(r, "counters", &n);
	if (!get_bool(r, "enabled")) {
		printf("autoscale: off\n");
	} else {
		printf("autoscale: on, %lld..%lld vCPUs%s\n", (long long)get_i64(r, "min"),
		       (long long)get_i64(r, "max"),
		       get_bool(r, "waiting") ? " (waiting for the guest's hotplug driver)" : "");
		printf("  add one after %lld%% pressure for %lld ms; remove one when one fewer "
		       "stays %lld%% idle for %lld ms; cooldown %lld ms; a sample every %lld ms\n",
		       (long long)get_i64(r, "pressure"), (long long)get_i64(r, "pressure-ms"),
		       (long long)get_i64(r, "idle"), (long long)get_i64(r, "idle-ms"),
		       (long long)get_i64(r, "cooldown-ms"), (long long)get_i64(r, "period-ms"));
	}
	printf("  last sample: %lld online, busy %.2f vCPUs, pressure %.0f%% (%s figures)\n",
	       (long long)get_i64(f, "online"),
	       json_object_get_double(json_object_object_get(f, "busy")),
	       100.0 * json_object_get_double(json_object_object_get(f, "pressure")),
	       get_str(f, "source", NULL));
	printf("  %lld added, %lld removed, %lld refused by the guest, %lld failed, %lld by the "
	       "operator\n",
	       (long long)get_i64(n, "adds"), (long long)get_i64(n, "removes"),
	       (long long)get_i64(n, "refused"), (long long)get_i64(n, "failed"),
	       (long long)get_i64(n, "manual"));
	json_object_put(r);
	return 0;
}

int cmd_autoscale(struct conn *c, char **argv)
{
	struct json_object *args;
	size_t k;

	if (!argv[0])
		return show(c);
	if (!strcmp(argv[0], "off")) {
		if (argv[1])
			die(EXIT_USAGE, "autoscale off takes no argument");
		json_object_put(conn_cmd(c, "autoscale-off", NULL));
		if (!json_out)
			printf("autoscale: off\n");
		return 0;
	}
	if (strcmp(argv[0], "on"))
		die(EXIT_USAGE, "autoscale [on [KEY=VALUE...] | off]");
	args = json_object_new_object();
	for (argv++; *argv; argv++) {
		const char *eq = strchr(*argv, '=');

		for (k = 0; eq && k < sizeof(keys) / sizeof(keys[0]); k++)
			if (strlen(keys[k]) == (size_t)(eq - *argv) &&
			    !strncmp(*argv, keys[k], (size_t)(eq - *argv)))
				break;
		if (!eq || k == sizeof(keys) / sizeof(keys[0]))
			die(EXIT_USAGE,
			    "autoscale on: '%s' is not KEY=VALUE with KEY one of min, max, "
			    "period-ms, pressure, pressure-ms, idle, idle-ms, cooldown-ms",
			    *argv);
		json_object_object_add(args, keys[k],
				       json_object_new_int64(parse_num(eq + 1, keys[k])));
	}
	json_object_put(conn_cmd(c, "autoscale-set", args));
	return show(c);
}
