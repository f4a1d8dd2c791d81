// SPDX-License-Identifier: MIT
/* cyclictest's summary line (see tline.h). */
#include "tline.h"

#include <stdint.h>

static int64_t field(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
}

int latency_tline(FILE *f, struct json_object *cpu, int tid, long interval_us)
{
	/* cyclictest: "T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld" */
	return fprintf(
	    f, "T:%2d (%5d) P:%2d I:%ld C:%7lld Min:%7lld Act:%5lld Avg:%5lld Max:%8lld\n",
	    (int)field(cpu, "cpu"), tid, (int)field(cpu, "priority"), interval_us,
	    (long long)field(cpu, "count"), (long long)field(cpu, "min-ns") / 1000,
	    (long long)field(cpu, "act-ns") / 1000, (long long)field(cpu, "avg-ns") / 1000,
	    (long long)field(cpu, "max-ns") / 1000);
}
