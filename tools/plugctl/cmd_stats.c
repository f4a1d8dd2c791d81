// SPDX-License-Identifier: MIT
/*
 * plugctl stats: KVM's counters per vCPU through query-stats (target vcpu, provider kvm),
 * by default the VM exits by reason, one row per vCPU.
 */
#include <stdio.h>
#include <string.h>

#include "plugctl.h"

#define MAX_COLS 16

static const char *const exit_names[] = {
	"exits",      "io_exits",	  "mmio_exits",	    "halt_exits",
	"irq_exits",  "irq_window_exits", "signal_exits",   "request_irq_exits",
	"hypercalls", "insn_emulation",	  "irq_injections",
};

/* The value of stat `name` in a StatsResult's list (-1: absent or not a number). */
static long long stat_of(struct json_object *stats, const char *name)
{
	size_t i;

	for (i = 0; i < json_object_array_length(stats); i++) {
		struct json_object *s = json_object_array_get_idx(stats, i), *v;
		const char *n = get_str(s, "name", NULL);

		if (n && !strcmp(n, name) && json_object_object_get_ex(s, "value", &v) &&
		    json_object_is_type(v, json_type_int))
			return (long long)json_object_get_uint64(v);
	}
	return -1;
}

/* The short name of a vCPU's QOM path: the device id, or unattached/device[N] as cpu N. */
static const char *short_path(const char *path, char *buf, size_t len)
{
	const char *p;

	if (!path)
		return "?";
	if ((p = strstr(path, "/device[")) && strstr(path, "/unattached/")) {
		snprintf(buf, len, "cpu%.*s", (int)strcspn(p + 8, "]"), p + 8);
		return buf;
	}
	p = strrchr(path, '/');
	return p ? p + 1 : path;
}

int cmd_stats(struct conn *c, char **argv)
{
	const char *names[MAX_COLS];
	struct json_object *args = json_object_new_object(), *prov = json_object_new_object();
	struct json_object *plist = json_object_new_array(), *nlist = json_object_new_array(), *r;
	size_t n = 0, i, k;

	for (; argv[n]; n++) {
		if (n == MAX_COLS)
			die(EXIT_USAGE, "stats: at most %d names", MAX_COLS);
		names[n] = argv[n];
	}
	if (!n)
		for (; n < sizeof(exit_names) / sizeof(exit_names[0]); n++)
			names[n] = exit_names[n];
	for (i = 0; i < n; i++)
		json_object_array_add(nlist, json_object_new_string(names[i]));
	json_object_object_add(prov, "provider", json_object_new_string("kvm"));
	json_object_object_add(prov, "names", nlist);
	json_object_array_add(plist, prov);
	json_object_object_add(args, "target", json_object_new_string("vcpu"));
	json_object_object_add(args, "providers", plist);
	r = conn_cmd(c, "query-stats", args);
	if (json_out) {
		print_json(r);
		json_object_put(r);
		return 0;
	}
	printf("%-8s", "vcpu");
	for (i = 0; i < n; i++)
		printf(" %*s", (int)(strlen(names[i]) > 10 ? strlen(names[i]) : 10), tty(names[i]));
	printf("\n");
	for (k = 0; k < json_object_array_length(r); k++) {
		struct json_object *e = json_object_array_get_idx(r, k), *stats = NULL;
		char buf[32];

		json_object_object_get_ex(e, "stats", &stats);
		printf("%-8s", tty(short_path(get_str(e, "qom-path", NULL), buf, sizeof(buf))));
		for (i = 0; i < n; i++) {
			int w = (int)(strlen(names[i]) > 10 ? strlen(names[i]) : 10);
			long long v = stats ? stat_of(stats, names[i]) : -1;

			if (v < 0)
				printf(" %*s", w, "-");
			else
				printf(" %*lld", w, v);
		}
		printf("\n");
	}
	json_object_put(r);
	return 0;
}
