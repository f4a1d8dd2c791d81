// SPDX-License-Identifier: MIT
/*
 * virsh's vcpuinfo and vcpupin on plugvm's vCPU threads: each present vCPU is a host thread
 * (query-cpus-fast's thread-id), whose processor, CPU time and affinity /proc and
 * sched_getaffinity() tell, and whose affinity sched_setaffinity() sets, as libvirt does
 * for QEMU's vCPU threads. plugctl runs on the VM's host, as virsh's libvirtd does.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plugctl.h"

#define MAX_VCPUS 1024 /* PLUGVM_MAX_CPUS */

size_t vcpu_threads(struct conn *c, int *tids, size_t max)
{
	struct json_object *fast = conn_cmd(c, "query-cpus-fast", NULL);
	size_t i, n = 0, len = json_object_array_length(fast);

	for (i = 0; i < max; i++)
		tids[i] = 0;
	for (i = 0; i < len; i++) {
		struct json_object *f = json_object_array_get_idx(fast, i);
		int idx = get_int(f, "cpu-index", NULL), tid = get_int(f, "thread-id", NULL);

		if (idx < 0 || (size_t)idx >= max || tid <= 0)
			die(EXIT_NO, "query-cpus-fast: a vCPU without a usable index or thread");
		tids[idx] = tid;
		if ((size_t)idx + 1 > n)
			n = (size_t)idx + 1;
	}
	json_object_put(fast);
	return n;
}

int proc_tgid(int tid)
{
	char path[64], line[256];
	int tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", tid);
	f = fopen(path, "re");
	if (!f)
		die(EXIT_NO, "%s: %s (plugctl reads the VM's threads on its host)", path,
		    strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	if (tgid <= 0)
		die(EXIT_NO, "%s: no Tgid line", path);
	return tgid;
}

void proc_stat(int tgid, int tid, unsigned long long *ticks, int *cpu)
{
	char path[80], buf[1024], *p;
	unsigned long long utime, stime;
	size_t n;
	FILE *f;
	int i;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", tgid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", tgid);
	f = fopen(path, "re");
	if (!f)
		die(EXIT_NO, "%s: %s", path, strerror(errno));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* The name may hold spaces and parentheses: the fields start after its last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		die(EXIT_NO, "%s: not a stat line", path);
	p++;
	/* Field 3 (state) is the first after the name; utime and stime are 14 and 15. */
	for (i = 3; i < 14 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu %llu", &utime, &stime) != 2)
		die(EXIT_NO, "%s: no utime/stime", path);
	*ticks = utime + stime;
	if (cpu) {
		/* Field 39: the CPU it last ran on. */
		for (; i < 39 && p; i++)
			p = strchr(p + 1, ' ');
		if (!p || sscanf(p, " %d", cpu) != 1)
			die(EXIT_NO, "%s: no processor field", path);
	}
}

double ticks_to_s(unsigned long long ticks)
{
	long hz = sysconf(_SC_CLK_TCK);

	return (double)ticks / (double)(hz > 0 ? hz : 100);
}

static void get_affinity(int tid, cpu_set_t *set)
{
	CPU_ZERO(set);
	if (sched_getaffinity(tid, sizeof(*set), set))
		die(EXIT_NO, "vCPU thread %d: sched_getaffinity: %s", tid, strerror(errno));
}

static int host_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 && n <= CPU_SETSIZE ? (int)n : CPU_SETSIZE;
}

/* vcpuinfo: virsh's layout, one block per present vCPU. */
int cmd_vcpuinfo(struct conn *c, char **argv)
{
	static int tids[MAX_VCPUS];
	size_t n = vcpu_threads(c, tids, MAX_VCPUS), i;
	int tgid = 0, cpu, h, nr_host = host_cpus();

	(void)argv;
	for (i = 0; i < n; i++) {
		unsigned long long ticks;
		cpu_set_t set;

		if (!tids[i])
			continue;
		if (!tgid)
			tgid = proc_tgid(tids[i]);
		proc_stat(tgid, tids[i], &ticks, &cpu);
		get_affinity(tids[i], &set);
		printf("%-15s %zu\n%-15s %d\n%-15s %s\n%-15s %.1fs\n%-15s ", "VCPU:", i,
		       "CPU:", cpu, "State:", "running", "CPU time:", ticks_to_s(ticks),
		       "CPU Affinity:");
		for (h = 0; h < nr_host; h++)
			putchar(CPU_ISSET(h, &set) ? 'y' : '-');
		printf("\n\n");
	}
	return 0;
}

/* A host CPU list as libvirt's vcpupin takes it: "0-3,^2", "1,3", or "r" for all of them. */
static void parse_cpulist(const char *s, cpu_set_t *set)
{
	int nr_host = host_cpus(), i;
	const char *p = s;

	CPU_ZERO(set);
	if (!strcmp(s, "r")) {
		for (i = 0; i < nr_host; i++)
			CPU_SET(i, set);
		return;
	}
	while (*p) {
		bool neg = *p == '^';
		char *end;
		long a, b;

		if (neg)
			p++;
		errno = 0;
		a = strtol(p, &end, 10);
		b = a;
		if (end != p && *end == '-' && !neg) {
			p = end + 1;
			b = strtol(p, &end, 10);
		}
		if (errno || end == p || a < 0 || b < a || b >= nr_host || (*end && *end != ','))
			die(EXIT_USAGE,
			    "error: Physical CPU %s is not a valid CPU list (host CPUs 0-%d)", s,
			    nr_host - 1);
		for (i = (int)a; i <= (int)b; i++) {
			if (neg)
				CPU_CLR(i, set);
			else
				CPU_SET(i, set);
		}
		p = *end ? end + 1 : end;
	}
	if (!CPU_COUNT(set))
		die(EXIT_USAGE, "error: Physical CPU %s leaves no CPU", s);
}

/* An affinity as libvirt prints it: ranges, "0-3,6". */
static void print_cpulist(const cpu_set_t *set)
{
	int nr_host = host_cpus(), i, first = 1;

	for (i = 0; i < nr_host; i++) {
		int j = i;

		if (!CPU_ISSET(i, set))
			continue;
		while (j + 1 < nr_host && CPU_ISSET(j + 1, set))
			j++;
		printf(first ? "%d" : ",%d", i);
		if (j > i)
			printf("-%d", j);
		first = 0;
		i = j;
	}
	putchar('\n');
}

/* vcpupin [VCPU] [CPULIST] [--live | --current | --config] */
int cmd_vcpupin(struct conn *c, char **argv)
{
	static int tids[MAX_VCPUS];
	char *pos[3];
	unsigned flags =
	    virsh_flags("vcpupin", argv, VIRSH_LIVE | VIRSH_CONFIG | VIRSH_CURRENT, pos, 2);
	size_t n, i;
	long only = -1;
	cpu_set_t set;

	virsh_refuse_unsupported(flags);
	n = vcpu_threads(c, tids, MAX_VCPUS);
	if (pos[0]) {
		only = parse_num(pos[0], "vcpu");
		if ((size_t)only >= n || !tids[only])
			die(EXIT_NO,
			    "error: invalid argument: vcpu %ld is out of range of live "
			    "cpu count %zu",
			    only, n);
	}
	if (pos[1]) {
		parse_cpulist(pos[1], &set);
		if (sched_setaffinity(tids[only], sizeof(set), &set))
			die(EXIT_NO, "error: vCPU %ld (thread %d): sched_setaffinity: %s", only,
			    tids[only], strerror(errno));
		return 0;
	}
	printf(" %-6s %s\n----------------------\n", "VCPU", "CPU Affinity");
	for (i = 0; i < n; i++) {
		if (!tids[i] || (only >= 0 && (size_t)only != i))
			continue;
		get_affinity(tids[i], &set);
		printf(" %-6zu ", i);
		print_cpulist(&set);
	}
	putchar('\n');
	return 0;
}
