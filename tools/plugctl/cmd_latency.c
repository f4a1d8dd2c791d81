// SPDX-License-Identifier: MIT
/*
 * plugctl latency: the live figures of a running measurement (QMP query-latency): one
 * cyclictest line per measured CPU, its parked time, and the latest outliers.
 */
#include <stdio.h>

#include "plugctl.h"
#include "tools/lib/tline.h"

int cmd_latency(struct conn *c, char **argv)
{
	struct json_object *r = conn_cmd(c, "query-latency", NULL), *cpus, *outs, *e;
	size_t i, n;

	(void)argv;
	if (json_out) {
		print_json(r);
		json_object_put(r);
		return 0;
	}
	if (!get_bool(r, "active")) {
		printf("no latency measurement running (boot the guest with `latency`)\n");
		json_object_put(r);
		return EXIT_NO;
	}
	json_object_object_get_ex(r, "cpus", &cpus);
	for (i = 0; i < json_object_array_length(cpus); i++) {
		e = json_object_array_get_idx(cpus, i);
		latency_tline(stdout, e, 0, (long)get_i64(r, "interval-us"));
		printf("   missed %lld, overflows %lld, parked %lld times for %lld us\n",
		       (long long)get_i64(e, "missed"), (long long)get_i64(e, "overflows"),
		       (long long)get_i64(e, "parks"), (long long)get_i64(e, "parked-ns") / 1000);
	}
	json_object_object_get_ex(r, "outliers", &outs);
	n = json_object_array_length(outs);
	printf("%lld outliers above %lld us%s\n", (long long)get_i64(r, "outliers-total"),
	       (long long)get_i64(r, "threshold-us"), n ? "; the latest:" : "");
	for (i = n > 5 ? n - 5 : 0; i < n; i++) {
		e = json_object_array_get_idx(outs, i);
		printf("   %lld us on CPU %lld\n", (long long)get_i64(e, "latency-ns") / 1000,
		       (long long)get_i64(e, "cpu"));
	}
	json_object_put(r);
	return 0;
}
