/* SPDX-License-Identifier: MIT */
/*
 * plugvm-latency's parts: the run (main.c: options, plugvm, progress), the vCPU churn
 * (churn.c), the reports
 * (report.c: cyclictest lines, the -h histogram, percentiles, outliers, JSON), the plot
 * (plot.c, gnuplot) and rt-tests' cyclictest on the host (host.c). Exit status 0 done,
 * 1 the run failed, 2 bad usage.
 */
#ifndef PLUGVM_TOOLS_LATENCY_LATENCY_H
#define PLUGVM_TOOLS_LATENCY_LATENCY_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct conn; /* tools/lib/conn.h */

#define LAT_EXIT_FAIL  1
#define LAT_EXIT_USAGE 2

struct lat_opts {
	const char *smp; /* plugvm's --smp */
	bool smp_given; /* --smp on our command line (with --domain: the document's otherwise) */
	const char *domain; /* plugvm's --domain: a libvirt document (RT knobs), NULL: none */
	long duration_s, interval_us, priority, churn_ms, hist_max_us, threshold_us;
	const char *cpus, *stress; /* guest words, NULL: default */
	const char *chaos; /* NULL: off; "": plugvm's defaults; else its SPEC */
	const char *kernel; /* NULL: guest.elf (or rt/guest.elf) beside plugvm */
	bool rt;
	const char *hist_file, *json_file, *plot_file, *compare_file;
	bool compare_host;
	const char *plugvm; /* the VMM binary */
	const char *console; /* NULL: a temporary file */
};

/* Percentiles of a run, from the 1 us histogram, else a power-of-two bound beyond it. */
struct lat_pct {
	double p; /* 50, 99, 99.9 */
	long long us;
	bool bound; /* beyond the histogram: `us` is an upper bound from the log2 buckets */
};

/* ---- churn.c ----------------------------------------------------------------------------- */

/* One CPU the churn removes and re-adds: its slot props and current QOM path. */
struct churn_cpu {
	unsigned slot;
	struct json_object *props;
	char path[96];
};

enum churn_phase {
	CHURN_IDLE, /* no cycle in flight */
	CHURN_REMOVING, /* device_del sent: waiting for DEVICE_DELETED or a failed _OST */
	CHURN_ADDING, /* device_add sent: waiting for the slot's _OST */
};

struct churn {
	struct churn_cpu cpu[16];
	unsigned n, next;
	long cycles, failures; /* completed; removals refused or late */
	const char *type;
	struct json_object *hp; /* query-hotpluggable-cpus: owns props */
	enum churn_phase phase;
	struct churn_cpu *cur; /* the CPU of the cycle in flight */
	char slot[16]; /* its slot, as match_ost() takes it */
	int64_t deadline; /* ms: the step in flight fails without an answer by then */
};

/* The present CPUs but 0 into `ch` (query-hotpluggable-cpus); dies if there is none. */
void churn_init(struct conn *c, struct churn *ch);
/*
 * A churn cycle is two steps, each a request and the guest's answer: device_del until
 * DEVICE_DELETED (or a failed _OST: a finding, counted in ch->failures, the CPU stays), then
 * device_add until the slot's _OST. churn_step() moves the cycle in flight on by what has
 * arrived until `until` (ms), starting one first when `start` and none is in flight; it
 * returns at `until` at the latest, so the run's progress lines keep their second however
 * long the guest takes (test_latency.py::test_progress_goes_on_while_a_hotplug_cycle_waits).
 * Dies when the guest does not answer a step within c->timeout_ms.
 */
void churn_step(struct conn *c, struct churn *ch, bool start, int64_t until);

/* ---- report.c ---------------------------------------------------------------------------- */

/*
 * p50, p99, p99.9 over every CPU of query-latency's reply `q` (with histograms); beyond the
 * histogram, the power-of-two bucket's bound ("log2"), else the max.
 */
void report_percentiles(struct json_object *q, struct lat_pct pct[3]);
/* The cyclictest lines of `q`; tids[] the host threads of the vCPUs (0: unknown). */
void report_tlines(FILE *f, struct json_object *q, const int *tids, unsigned ntids);
/* cyclictest's -h layout of `q` into `path`. 0, or -errno (printed). */
int report_histogram(const char *path, struct json_object *q);
/* The top outliers with their attributed states, and the per-state table. */
void report_outliers(FILE *f, struct json_object *q, unsigned top);
/*
 * The run's JSON summary (a new object): options, per-CPU figures with histograms,
 * percentiles, top outliers, states, churn counters and `host` (may be NULL).
 */
struct json_object *report_json(const struct lat_opts *o, struct json_object *q, long churn_cycles,
				struct json_object *host);

/*
 * Each CPU's guest time accounted (sampled, missed or parked periods) beside the run's
 * `host_s`: the guest's TSC stands still while its vCPU thread waits for a host CPU here.
 */
void report_guest_time(FILE *f, struct json_object *q, long host_s);
/* The one-line percentile summary of `q`: "# WHO: p50 12 us, p99 <= 4096 us, ..., max M us". */
void report_pct_line(FILE *f, const char *who, struct json_object *q);

/* ---- plot.c ------------------------------------------------------------------------------ */

/*
 * A PNG at o->plot_file with gnuplot: log-scaled counts per latency, one line per CPU, the
 * threshold marked; plus the CPUs of `other` (a summary report_json() wrote) if not NULL.
 * 0, or -1 (printed).
 */
int plot_png(const struct lat_opts *o, struct json_object *summary, struct json_object *other,
	     const char *tmpdir);

/* ---- host.c ------------------------------------------------------------------------------ */

/*
 * Start rt-tests' cyclictest on the host (same interval and duration, `threads` threads,
 * output into tmpdir). Returns its pid, or -1 (printed: cyclictest missing).
 */
int host_start(const struct lat_opts *o, unsigned threads, const char *tmpdir);
/*
 * Wait for it and read its histogram file into the shape of a query-latency reply ("cpus":
 * count, min-ns, avg-ns, max-ns, overflows, histogram; no log2, act-ns or outliers); NULL if
 * it failed (printed).
 */
struct json_object *host_finish(const struct lat_opts *o, int pid, const char *tmpdir);

#endif
