// SPDX-License-Identifier: MIT
/* cyclictest's summary line (see tline.h). */
#include "tline.h"
#include "json_get.h"

int latency_tline(FILE *f, struct json_object *cpu, int tid, long interval_us)
{
	/* cyclictest: "T:%2d (%5d) P:%2d I:%ld C:%7lu Min:%7ld Act:%5ld Avg:%5ld Max:%8ld" */
	return fprintf(
	    f, "T:%2d (%5d) P:%2d I:%ld C:%7lld Min:%7lld Act:%5lld Avg:%5lld Max:%8lld\n",
	    (int)get_i64(cpu, "cpu"), tid, (int)get_i64(cpu, "priority"), interval_us,
	    (long long)get_i64(cpu, "count"), (long long)get_i64(cpu, "min-ns") / 1000,
	    (long long)get_i64(cpu, "act-ns") / 1000, (long long)get_i64(cpu, "avg-ns") / 1000,
	    (long long)get_i64(cpu, "max-ns") / 1000);
}
