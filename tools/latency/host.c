// SPDX-License-Identifier: MIT
/* rt-tests' cyclictest on the host, in the same run (see latency.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "latency.h"

int host_start(const struct lat_opts *o, unsigned threads, const char *tmpdir)
{
	char out[128], d[32], i[32], p[16], t[16];
	char *argv[] = { "cyclictest", "-q", "-m", "-d", "0",  "-D", d,
			 "-i",	       i,    "-p", p,	 "-t", t,    NULL };
	pid_t pid;
	int fd;

	snprintf(out, sizeof(out), "%s/host.txt", tmpdir);
	snprintf(d, sizeof(d), "%lds", o->duration_s);
	snprintf(i, sizeof(i), "%ld", o->interval_us);
	snprintf(p, sizeof(p), "%ld", o->priority);
	snprintf(t, sizeof(t), "%u", threads ? threads : 1);
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

struct json_object *host_finish(int pid, const char *tmpdir)
{
	struct json_object *a = json_object_new_array();
	char out[128], line[256];
	int st;
	FILE *f;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr,
			"plugvm-latency: --compare-host: cyclictest failed (%s; Debian's "
			"rt-tests, scripts/deps.sh installs it)\n",
			WIFEXITED(st) && WEXITSTATUS(st) == 127 ? "not found" : "see its output");
		json_object_put(a);
		return NULL;
	}
	snprintf(out, sizeof(out), "%s/host.txt", tmpdir);
	f = fopen(out, "r");
	while (f && fgets(line, sizeof(line), f)) {
		struct json_object *e;
		int cpu, tid, prio;
		long iv, count, min, act, avg, max;

		if (sscanf(line, "T:%d (%d) P:%d I:%ld C:%ld Min:%ld Act:%ld Avg:%ld Max:%ld", &cpu,
			   &tid, &prio, &iv, &count, &min, &act, &avg, &max) != 9)
			continue;
		line[strcspn(line, "\n")] = '\0';
		e = json_object_new_object();
		json_object_object_add(e, "thread", json_object_new_int(cpu));
		json_object_object_add(e, "count", json_object_new_int64(count));
		json_object_object_add(e, "min-us", json_object_new_int64(min));
		json_object_object_add(e, "avg-us", json_object_new_int64(avg));
		json_object_object_add(e, "max-us", json_object_new_int64(max));
		json_object_object_add(e, "line", json_object_new_string(line));
		json_object_array_add(a, e);
	}
	if (f)
		fclose(f);
	return a;
}
