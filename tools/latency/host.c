// SPDX-License-Identifier: MIT
/*
 * rt-tests' cyclictest on the host, in the same run (see latency.h). Its -h histogram file
 * is read back into the shape of query-latency's reply, so the same reports apply to both.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "latency.h"

int host_start(const struct lat_opts *o, unsigned threads, const char *tmpdir)
{
	char out[128], hist[160], d[32], i[32], p[16], t[16], h[16];
	char *argv[] = { "cyclictest", "-q", "-m", "-d", "0",  "-D", d,	   "-i", i,
			 "-p",	       p,    "-t", t,	 "-h", h,    hist, NULL };
	pid_t pid;
	int fd;

	snprintf(out, sizeof(out), "%s/host.txt", tmpdir);
	snprintf(hist, sizeof(hist), "--histfile=%s/host-hist.txt", tmpdir);
	snprintf(d, sizeof(d), "%lds", o->duration_s);
	snprintf(i, sizeof(i), "%ld", o->interval_us);
	snprintf(p, sizeof(p), "%ld", o->priority);
	snprintf(t, sizeof(t), "%u", threads ? threads : 1);
	snprintf(h, sizeof(h), "%ld", o->hist_max_us);
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "plugvm-latency: %s: %s\n", out, strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execvp("cyclictest", argv);
		_exit(127);
	}
	close(fd);
	if (pid < 0)
		fprintf(stderr, "plugvm-latency: fork: %s\n", strerror(errno));
	return pid;
}

/* "# Key: v1 v2 ..." into the per-thread objects' `field` (times `scale`). */
static void summary_line(const char *line, struct json_object *cpus, const char *field,
			 long long scale)
{
	const char *p = strchr(line, ':') + 1;
	size_t k = 0;
	char *end;

	for (;;) {
		long long v = strtoll(p, &end, 10);

		if (end == p || k >= json_object_array_length(cpus))
			break;
		json_object_object_add(json_object_array_get_idx(cpus, k++), field,
				       json_object_new_int64(v * scale));
		p = end;
	}
}

/* One histogram row "BUCKET c1\tc2 ...": append each count to its thread. */
static void hist_row(const char *line, struct json_object *cpus, unsigned *nthreads)
{
	char *end;
	const char *p = line;
	unsigned k = 0;

	strtoll(p, &end, 10); /* the bucket: rows come in order */
	for (p = end;; p = end) {
		long long v = strtoll(p, &end, 10);
		struct json_object *c;

		if (end == p)
			break;
		if (k >= json_object_array_length(cpus)) {
			c = json_object_new_object();
			json_object_object_add(c, "cpu", json_object_new_int((int)k));
			json_object_object_add(c, "histogram", json_object_new_array());
			json_object_array_add(cpus, c);
		}
		c = json_object_array_get_idx(cpus, k++);
		json_object_array_add(json_object_object_get(c, "histogram"),
				      json_object_new_int64(v));
	}
	*nthreads = k;
}

struct json_object *host_finish(const struct lat_opts *o, int pid, const char *tmpdir)
{
	struct json_object *r, *cpus;
	char path[160], line[4096];
	unsigned n = 0;
	size_t k;
	int st;
	FILE *f;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr,
			"plugvm-latency: --compare-host: cyclictest failed (%s; Debian's "
			"rt-tests, scripts/deps.sh installs it)\n",
			WIFEXITED(st) && WEXITSTATUS(st) == 127 ? "not found" : "see its output");
		return NULL;
	}
	snprintf(path, sizeof(path), "%s/host-hist.txt", tmpdir);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "plugvm-latency: --compare-host: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	r = json_object_new_object();
	cpus = json_object_new_array();
	json_object_object_add(r, "cpus", cpus);
	json_object_object_add(r, "interval-us", json_object_new_int64(o->interval_us));
	json_object_object_add(r, "histogram-us", json_object_new_int64(o->hist_max_us));
	while (fgets(line, sizeof(line), f)) {
		if (line[0] != '#')
			hist_row(line, cpus, &n);
		else if (!strncmp(line, "# Min Latencies:", 16))
			summary_line(line, cpus, "min-ns", 1000);
		else if (!strncmp(line, "# Avg Latencies:", 16))
			summary_line(line, cpus, "avg-ns", 1000);
		else if (!strncmp(line, "# Max Latencies:", 16))
			summary_line(line, cpus, "max-ns", 1000);
		else if (!strncmp(line, "# Histogram Overflows:", 22))
			summary_line(line, cpus, "overflows", 1);
	}
	fclose(f);
	/* cyclictest's count: the histogram's samples plus its overflows. */
	for (k = 0; k < json_object_array_length(cpus); k++) {
		struct json_object *c = json_object_array_get_idx(cpus, k), *h, *v;
		long long total = 0;
		size_t b;

		h = json_object_object_get(c, "histogram");
		for (b = 0; b < json_object_array_length(h); b++)
			total += json_object_get_int64(json_object_array_get_idx(h, b));
		if (json_object_object_get_ex(c, "overflows", &v))
			total += json_object_get_int64(v);
		json_object_object_add(c, "count", json_object_new_int64(total));
		json_object_object_add(c, "priority", json_object_new_int64(o->priority));
	}
	if (!json_object_array_length(cpus)) {
		fprintf(stderr, "plugvm-latency: --compare-host: no histogram in %s\n", path);
		json_object_put(r);
		return NULL;
	}
	return r;
}
