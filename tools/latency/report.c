// SPDX-License-Identifier: MIT
/* plugvm-latency's reports (see latency.h), all from one query-latency reply. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "latency.h"
#include "tools/lib/json_get.h"
#include "tools/lib/print.h"
#include "tools/lib/tline.h"

/* get_i64() as the long long the printf formats below take. */
static long long gi(struct json_object *o, const char *k)
{
	return get_i64(o, k);
}

static struct json_object *cpus_of(struct json_object *q)
{
	struct json_object *a = NULL;

	json_object_object_get_ex(q, "cpus", &a);
	return a;
}

static long long arr_at(struct json_object *a, size_t k)
{
	return json_object_get_int64(json_object_array_get_idx(a, k));
}

void report_tlines(FILE *f, struct json_object *q, const int *tids, unsigned ntids)
{
	struct json_object *cpus = cpus_of(q);
	size_t i;

	for (i = 0; i < json_object_array_length(cpus); i++) {
		struct json_object *e = json_object_array_get_idx(cpus, i);
		long long cpu = gi(e, "cpu");

		latency_tline(f, e, cpu >= 0 && cpu < ntids ? tids[cpu] : 0,
			      (long)gi(q, "interval-us"));
	}
}

void report_percentiles(struct json_object *q, struct lat_pct pct[3])
{
	static const double ps[3] = { 50, 99, 99.9 };
	struct json_object *cpus = cpus_of(q), *h, *l;
	long long hmax = gi(q, "histogram-us"), total = 0, seen, maxus = 0;
	size_t i, k;
	int p;

	for (i = 0; i < json_object_array_length(cpus); i++) {
		total += gi(json_object_array_get_idx(cpus, i), "count");
		if (gi(json_object_array_get_idx(cpus, i), "max-ns") / 1000 > maxus)
			maxus = gi(json_object_array_get_idx(cpus, i), "max-ns") / 1000;
	}
	for (p = 0; p < 3; p++) {
		/* The sample of rank ceil(p% of total), found in the 1 us buckets first. */
		long long rank = (long long)((ps[p] * (double)total + 99.999) / 100.0);

		pct[p] = (struct lat_pct){ .p = ps[p], .us = -1 };
		if (!total)
			continue;
		for (k = 0, seen = 0; k < (size_t)hmax && seen < rank; k++)
			for (i = 0; i < json_object_array_length(cpus); i++)
				if (json_object_object_get_ex(json_object_array_get_idx(cpus, i),
							      "histogram", &h))
					seen += arr_at(h, k);
		if (seen >= rank) {
			pct[p].us = (long long)k - 1;
			continue;
		}
		/* Beyond the histogram: the power-of-two bucket holding it, capped at the max. */
		pct[p].bound = true;
		pct[p].us = maxus;
		if (!json_object_object_get_ex(json_object_array_get_idx(cpus, 0), "log2", NULL))
			continue; /* host cyclictest: only the max is known beyond */
		for (k = 0, seen = 0; k < 24 && seen < rank; k++)
			for (i = 0; i < json_object_array_length(cpus); i++)
				if (json_object_object_get_ex(json_object_array_get_idx(cpus, i),
							      "log2", &l))
					seen += arr_at(l, k);
		if ((1ll << k) < maxus)
			pct[p].us = 1ll << k;
	}
}

void report_guest_time(FILE *f, struct json_object *q, long host_s)
{
	struct json_object *cpus = cpus_of(q);
	size_t i;

	fprintf(f, "# guest time measured (TSC):");
	for (i = 0; i < json_object_array_length(cpus); i++) {
		struct json_object *e = json_object_array_get_idx(cpus, i);

		fprintf(f, "%s CPU %lld %.2f s (%lld missed, %.2f s parked)", i ? ";" : "",
			gi(e, "cpu"), (double)gi(e, "elapsed-ns") / 1e9, gi(e, "missed"),
			(double)gi(e, "parked-ns") / 1e9);
	}
	fprintf(f, "; the run: %ld s of host time\n", host_s);
}

void report_pct_line(FILE *f, const char *who, struct json_object *q)
{
	struct json_object *cpus = cpus_of(q);
	struct lat_pct pct[3];
	long long max = 0;
	size_t i;
	int p;

	report_percentiles(q, pct);
	for (i = 0; i < json_object_array_length(cpus); i++)
		if (gi(json_object_array_get_idx(cpus, i), "max-ns") > max)
			max = gi(json_object_array_get_idx(cpus, i), "max-ns");
	fprintf(f, "# %s:", who);
	for (p = 0; p < 3; p++)
		fprintf(f, " p%g %s%lld us,", pct[p].p, pct[p].bound ? "<= " : "", pct[p].us);
	fprintf(f, " max %lld us\n", max / 1000);
}

int report_histogram(const char *path, struct json_object *q)
{
	struct json_object *cpus = cpus_of(q), *h;
	size_t n = json_object_array_length(cpus), i, k;
	long long hmax = gi(q, "histogram-us");
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "plugvm-latency: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	/* rt-tests' cyclictest -h: a row per bucket, then the per-thread summary lines. */
	fprintf(f, "# Histogram\n");
	for (k = 0; k < (size_t)hmax; k++) {
		fprintf(f, "%06zu", k);
		for (i = 0; i < n; i++) {
			json_object_object_get_ex(json_object_array_get_idx(cpus, i), "histogram",
						  &h);
			fprintf(f, "%s%06lld", i ? "\t" : " ", arr_at(h, k));
		}
		fputc('\n', f);
	}
	fprintf(f, "# Total:");
	for (i = 0; i < n; i++) {
		long long t = 0;

		json_object_object_get_ex(json_object_array_get_idx(cpus, i), "histogram", &h);
		for (k = 0; k < (size_t)hmax; k++)
			t += arr_at(h, k);
		fprintf(f, " %09lld", t);
	}
	fprintf(f, "\n# Min Latencies:");
	for (i = 0; i < n; i++)
		fprintf(f, " %05lld", gi(json_object_array_get_idx(cpus, i), "min-ns") / 1000);
	fprintf(f, "\n# Avg Latencies:");
	for (i = 0; i < n; i++)
		fprintf(f, " %05lld", gi(json_object_array_get_idx(cpus, i), "avg-ns") / 1000);
	fprintf(f, "\n# Max Latencies:");
	for (i = 0; i < n; i++)
		fprintf(f, " %05lld", gi(json_object_array_get_idx(cpus, i), "max-ns") / 1000);
	fprintf(f, "\n# Histogram Overflows:");
	for (i = 0; i < n; i++)
		fprintf(f, " %05lld", gi(json_object_array_get_idx(cpus, i), "overflows"));
	fputc('\n', f);
	if (fclose(f)) {
		fprintf(stderr, "plugvm-latency: %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

static int by_latency(const void *a, const void *b)
{
	long long x = gi(*(struct json_object *const *)a, "latency-ns");
	long long y = gi(*(struct json_object *const *)b, "latency-ns");

	return x < y ? 1 : x > y ? -1 : 0;
}

/* "812 us on CPU 2 while CPU 3 ran sched:active (down)", as one line into buf. */
static void cause(struct json_object *o, char *buf, size_t len)
{
	struct json_object *hp = json_object_object_get(o, "hotplug");
	size_t i, n = json_object_array_length(hp);
	int w = snprintf(buf, len, "%lld us on CPU %lld", gi(o, "latency-ns") / 1000, gi(o, "cpu"));

	for (i = 0; i < n && w > 0 && (size_t)w < len; i++) {
		struct json_object *e = json_object_array_get_idx(hp, i);

		w += snprintf(buf + w, len - (size_t)w, "%s CPU %d ran %s (%s)", i ? "," : " while",
			      get_int(e, "cpu", NULL), tty(get_str(e, "state", NULL)),
			      tty(get_str(e, "direction", NULL)));
	}
	if (!n && w > 0 && (size_t)w < len)
		w += snprintf(buf + w, len - (size_t)w, ", no hotplug state running");
	if (w > 0 && (size_t)w < len)
		snprintf(buf + w, len - (size_t)w, "; %lld interrupts since its last sample%s",
			 gi(o, "irqs"), get_bool(o, "unparked") ? "; just unparked" : "");
}

/* The outliers of `q` sorted by latency (a new array sharing the entries). */
static struct json_object *top_outliers(struct json_object *q)
{
	struct json_object *outs = json_object_object_get(q, "outliers"), *sorted;
	size_t i, n = json_object_array_length(outs);

	sorted = json_object_new_array();
	for (i = 0; i < n; i++)
		json_object_array_add(sorted, json_object_get(json_object_array_get_idx(outs, i)));
	json_object_array_sort(sorted, by_latency);
	return sorted;
}

void report_outliers(FILE *f, struct json_object *q, unsigned top)
{
	struct json_object *sorted = top_outliers(q), *states;
	size_t i, n = json_object_array_length(sorted);
	char buf[512];

	fprintf(f, "# outliers above %lld us: %lld (%zu seen live, the top ones:)\n",
		gi(q, "threshold-us"), gi(q, "outliers-total"), n);
	for (i = 0; i < n && i < top; i++) {
		cause(json_object_array_get_idx(sorted, i), buf, sizeof(buf));
		fprintf(f, "#   %s\n", buf);
	}
	json_object_put(sorted);
	states = json_object_object_get(q, "states");
	fprintf(f, "# samples taken while a hotplug state ran: %zu states\n",
		json_object_array_length(states));
	if (json_object_array_length(states))
		fprintf(f, "#   %-28s %9s %10s %10s\n", "state", "samples", "p99 <= us", "max us");
	for (i = 0; i < json_object_array_length(states); i++) {
		struct json_object *e = json_object_array_get_idx(states, i);

		fprintf(f, "#   %-28s %9lld %10lld %10lld\n", tty(get_str(e, "state", NULL)),
			gi(e, "samples"), gi(e, "p99-us-at-most"), gi(e, "max-ns") / 1000);
	}
}

static void add(struct json_object *o, const char *k, long long v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

/* p50, p99, p99.9 of `q` as {"p50-us", "p50-us-bound", ...}. */
static struct json_object *pct_json(struct json_object *q)
{
	static const char *const keys[3][2] = { { "p50-us", "p50-us-bound" },
						{ "p99-us", "p99-us-bound" },
						{ "p99.9-us", "p99.9-us-bound" } };
	struct json_object *r = json_object_new_object();
	struct lat_pct pct[3];
	int i;

	report_percentiles(q, pct);
	for (i = 0; i < 3; i++) {
		add(r, keys[i][0], pct[i].us);
		json_object_object_add(r, keys[i][1], json_object_new_boolean(pct[i].bound));
	}
	return r;
}

/* One CPU's (or host thread's) figures in us, keyed `id` ("cpu" or "thread"). */
static struct json_object *cpu_summary(struct json_object *e, const char *id)
{
	struct json_object *c = json_object_new_object();

	add(c, id, gi(e, "cpu"));
	add(c, "count", gi(e, "count"));
	add(c, "min-us", gi(e, "min-ns") / 1000);
	add(c, "avg-us", gi(e, "avg-ns") / 1000);
	add(c, "max-us", gi(e, "max-ns") / 1000);
	add(c, "overflows", gi(e, "overflows"));
	return c;
}

struct json_object *report_json(const struct lat_opts *o, struct json_object *q, long churn_cycles,
				struct json_object *host)
{
	struct json_object *r = json_object_new_object(), *cpus = json_object_new_array();
	struct json_object *src = cpus_of(q), *tops = top_outliers(q), *t = json_object_new_array();
	size_t i;
	char buf[512];

	json_object_object_add(r, "tool", json_object_new_string("plugvm-latency"));
	json_object_object_add(r, "build",
			       json_object_new_string(get_str(q, "build", NULL) ?: "?"));
	json_object_object_add(r, "smp", json_object_new_string(o->smp));
	add(r, "duration-s", o->duration_s);
	add(r, "interval-us", o->interval_us);
	add(r, "priority", o->priority);
	add(r, "churn-ms", o->churn_ms);
	json_object_object_add(r, "stress", o->stress ? json_object_new_string(o->stress) : NULL);
	json_object_object_add(r, "chaos", o->chaos ? json_object_new_string(o->chaos) : NULL);
	add(r, "histogram-max-us", gi(q, "histogram-us"));
	add(r, "threshold-us", gi(q, "threshold-us"));
	for (i = 0; i < json_object_array_length(src); i++) {
		struct json_object *e = json_object_array_get_idx(src, i),
				   *c = cpu_summary(e, "cpu");

		add(c, "missed", gi(e, "missed"));
		add(c, "parks", gi(e, "parks"));
		add(c, "parked-us", gi(e, "parked-ns") / 1000);
		add(c, "elapsed-us", gi(e, "elapsed-ns") / 1000);
		json_object_object_add(c, "stale",
				       json_object_new_boolean(json_object_get_boolean(
					   json_object_object_get(e, "stale"))));
		json_object_object_add(c, "histogram",
				       json_object_get(json_object_object_get(e, "histogram")));
		json_object_array_add(cpus, c);
	}
	json_object_object_add(r, "cpus", cpus);
	json_object_object_add(r, "percentiles", pct_json(q));
	for (i = 0; i < json_object_array_length(tops) && i < 10; i++) {
		struct json_object *e = json_object_get(json_object_array_get_idx(tops, i));

		cause(e, buf, sizeof(buf));
		json_object_object_add(e, "cause", json_object_new_string(buf));
		json_object_array_add(t, e);
	}
	json_object_put(tops);
	json_object_object_add(r, "top-outliers", t);
	add(r, "outliers-total", gi(q, "outliers-total"));
	json_object_object_add(r, "states", json_object_get(json_object_object_get(q, "states")));
	add(r, "churn-cycles", churn_cycles);
	if (host) {
		struct json_object *h = json_object_new_object(), *hc = json_object_new_array();

		for (i = 0; i < json_object_array_length(cpus_of(host)); i++)
			json_object_array_add(
			    hc, cpu_summary(json_object_array_get_idx(cpus_of(host), i), "thread"));
		json_object_object_add(h, "tool", json_object_new_string("rt-tests cyclictest"));
		json_object_object_add(h, "threads", hc);
		json_object_object_add(h, "percentiles", pct_json(host));
		json_object_object_add(r, "host", h);
	}
	return r;
}
