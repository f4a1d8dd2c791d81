// SPDX-License-Identifier: MIT
/* plugvm-latency's PNG (see latency.h): a data file and a script for gnuplot. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "latency.h"
#include "tools/lib/json_get.h"

static long long count_at(struct json_object *cpu, size_t k)
{
	struct json_object *h = json_object_object_get(cpu, "histogram");

	return k < json_object_array_length(h)
		   ? json_object_get_int64(json_object_array_get_idx(h, k))
		   : 0;
}

/*
 * Columns: the bin's first latency in us, then one count column per CPU of each run (an
 * empty bin is NaN: log scale). Bins of *bin_us, so that about 100 cover the latencies seen.
 */
static int write_data(const char *path, struct json_object *runs[2], size_t *cols, long *maxus,
		      long *bin_us)
{
	FILE *f = fopen(path, "w");
	size_t r, i, k, n = 0;
	long last = 0;

	if (!f)
		return -errno;
	for (r = 0; r < 2 && runs[r]; r++) {
		struct json_object *cpus = json_object_object_get(runs[r], "cpus");

		for (i = 0; i < json_object_array_length(cpus); i++) {
			struct json_object *c = json_object_array_get_idx(cpus, i);
			size_t len =
			    json_object_array_length(json_object_object_get(c, "histogram"));

			for (k = len; k > (size_t)last + 1; k--)
				if (count_at(c, k - 1)) {
					last = (long)k - 1;
					break;
				}
		}
	}
	*bin_us = (last + 100) / 100;
	*maxus = (last / *bin_us + 1) * *bin_us;
	for (k = 0; k < (size_t)*maxus; k += (size_t)*bin_us) {
		fprintf(f, "%zu", k);
		n = 0;
		for (r = 0; r < 2 && runs[r]; r++) {
			struct json_object *cpus = json_object_object_get(runs[r], "cpus");

			for (i = 0; i < json_object_array_length(cpus); i++, n++) {
				long long v = 0;
				size_t b;

				for (b = k; b < k + (size_t)*bin_us; b++)
					v += count_at(json_object_array_get_idx(cpus, i), b);
				if (v)
					fprintf(f, " %lld", v);
				else
					fprintf(f, " NaN");
			}
		}
		fputc('\n', f);
	}
	*cols = n;
	return fclose(f) ? -errno : 0;
}

/* gnuplot's string quoting: single quotes, doubled inside. */
static void quoted(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

static const char *label_of(struct json_object *run)
{
	static char buf[2][96];
	static int n;
	const char *stress = get_str(run, "stress", NULL);
	char *b = buf[n++ % 2];

	snprintf(b, sizeof(buf[0]), "%s%s%s%s",
		 get_str(run, "build", NULL) ? get_str(run, "build", NULL) : "?",
		 stress ? " +" : "", stress ? stress : "",
		 get_i64(run, "churn-ms") ? " +churn" : "");
	return b;
}

int plot_png(const struct lat_opts *o, struct json_object *summary, struct json_object *other,
	     const char *tmpdir)
{
	struct json_object *runs[2] = { summary, other };
	char data[128], script[128], cmd[300];
	size_t cols = 0, r, i, col = 2;
	long maxus = 0, bin_us = 1;
	FILE *f;
	int st;

	snprintf(data, sizeof(data), "%s/plot.dat", tmpdir);
	snprintf(script, sizeof(script), "%s/plot.gp", tmpdir);
	if (write_data(data, runs, &cols, &maxus, &bin_us) || !(f = fopen(script, "w"))) {
		fprintf(stderr, "plugvm-latency: %s: %s\n", tmpdir, strerror(errno));
		return -1;
	}
	fprintf(f, "set terminal png size 1000,600\nset output ");
	quoted(f, o->plot_file);
	fprintf(f,
		"\nset logscale y\nset xlabel 'latency (us)'\nset ylabel 'samples'\n"
		"set title 'plugvm-latency: wake-up latency per CPU (interval %ld us, %ld s; "
		"bins of %ld us)'\n"
		"set key below\nset xrange [0:%ld]\nset yrange [0.8:*]\n"
		"set arrow from %ld, graph 0 to %ld, graph 1 nohead dt 2 lc rgb 'red'\n"
		"set label 'threshold %ld us' at %ld, graph 0.95 right offset -1,0 tc rgb 'red'\n"
		"plot ",
		o->interval_us, o->duration_s, bin_us,
		maxus > o->threshold_us ? maxus : o->threshold_us + bin_us, o->threshold_us,
		o->threshold_us, o->threshold_us, o->threshold_us);
	for (r = 0; r < 2 && runs[r]; r++) {
		struct json_object *cpus = json_object_object_get(runs[r], "cpus");

		for (i = 0; i < json_object_array_length(cpus); i++, col++) {
			char title[160];

			snprintf(title, sizeof(title), "%s CPU %d", label_of(runs[r]),
				 get_int(json_object_array_get_idx(cpus, i), "cpu", NULL));
			fprintf(f, "%s", col > 2 ? ", " : "");
			quoted(f, data);
			fprintf(f, " using 1:%zu with steps title ", col);
			quoted(f, title);
		}
	}
	fprintf(f, "\n");
	fclose(f);
	if (cols == 0) {
		fprintf(stderr, "plugvm-latency: --plot: no CPU reported anything to draw\n");
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "gnuplot '%s'", script);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr,
			"plugvm-latency: --plot: gnuplot failed (%s; scripts/deps.sh "
			"installs gnuplot-nox)\n",
			WIFEXITED(st) && WEXITSTATUS(st) == 127 ? "not found" : "see above");
		return -1;
	}
	return 0;
}
