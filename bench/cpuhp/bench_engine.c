// SPDX-License-Identifier: MIT
/*
 * The cpuhp engine's own cost, on the host: guest/kernel/cpuhp_engine.c compiled unchanged,
 * driving the guest's own table (guest/kernel/cpuhp_table.c) whose callbacks are fakes that
 * do nothing (tests/unit/cpuhp_fakes.c built with CPUHP_FAKES_NOP), so what is counted is
 * the walking: state bookkeeping, timing, tracing hooks.
 *
 *   bench_engine [--callgrind up|down|cycle] [N]
 *
 * Without --callgrind: ns per transition (wall clock). With it: N transitions of that kind
 * inside cg_region(), for `valgrind --tool=callgrind --toggle-collect=cg_region`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernel/cpuhp.h"

#define NCPU 4

static uint64_t clock_ns;

static uint64_t now_ns(void)
{
	return clock_ns += 100;
}

/* The arriving CPU, run inline: STARTING, then its hotplug thread's ONLINE walk. */
static int kick(struct cpuhp_engine *e, unsigned cpu)
{
	(void)e;
	(void)cpu;
	return 0;
}

static int wait_up(struct cpuhp_engine *e, unsigned cpu)
{
	int ret = cpuhp_ap_starting(e, cpu);

	return ret ? ret : cpuhp_ap_walk_online(e, cpu);
}

static int ap_walk(struct cpuhp_engine *e, unsigned cpu)
{
	int ret = cpuhp_ap_walk_online(e, cpu);

	if (!ret && e->cpus[cpu].target < CPUHP_AP_ONLINE)
		cpuhp_ap_dying(e, cpu);
	return ret;
}

static int ap_invoke(struct cpuhp_engine *e, unsigned cpu, int state, bool up)
{
	return cpuhp_invoke(e, cpu, state, up);
}

static void serial(enum cpuhp_section s)
{
	(void)s;
}

static const struct cpuhp_ops ops = {
	.now_ns = now_ns,
	.kick = kick,
	.wait_up = wait_up,
	.ap_walk = ap_walk,
	.ap_invoke = ap_invoke,
	.serial_lock = serial,
	.serial_unlock = serial,
};

static struct cpuhp_engine eng;
static struct cpuhp_cpu cpus[NCPU];

static void must(int ret, const char *what)
{
	if (ret) {
		fprintf(stderr, "bench_engine: %s failed: %d\n", what, ret);
		exit(1);
	}
}

/* The measured region: n transitions of one kind on CPU 1. */
__attribute__((noinline)) void cg_region(const char *op, unsigned n);
__attribute__((noinline)) void cg_region(const char *op, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		if (!strcmp(op, "up")) {
			must(cpuhp_engine_set_target(&eng, 1, CPUHP_ONLINE), "up");
			cpus[1].state = CPUHP_OFFLINE; /* reset without walking */
		} else if (!strcmp(op, "down")) {
			must(cpuhp_engine_set_target(&eng, 1, CPUHP_OFFLINE), "down");
			cpus[1].state = CPUHP_ONLINE;
		} else {
			must(cpuhp_engine_set_target(&eng, 1, CPUHP_OFFLINE), "down");
			must(cpuhp_engine_set_target(&eng, 1, CPUHP_ONLINE), "up");
		}
	}
}

static double wall_ns(const char *op, unsigned n)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	cg_region(op, n);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n;
}

int main(int argc, char **argv)
{
	const char *ops_list[] = { "up", "down", "cycle" };
	unsigned n = 1000, i;
	const char *cg = NULL;

	if (argc > 2 && !strcmp(argv[1], "--callgrind")) {
		cg = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc > 1)
		n = (unsigned)strtoul(argv[1], NULL, 0);
	if (!n) {
		fprintf(stderr, "usage: bench_engine [--callgrind up|down|cycle] [N>0]\n");
		return 2;
	}
	cpuhp_engine_init(&eng, cpuhp_table, &ops, cpus, NCPU);
	for (i = 0; i < NCPU; i++)
		cpus[i].state = CPUHP_ONLINE;
	if (cg) {
		if (!strcmp(cg, "up"))
			cpus[1].state = CPUHP_OFFLINE;
		cg_region(cg, n);
		return 0;
	}
	for (i = 0; i < 3; i++) {
		if (!strcmp(ops_list[i], "up"))
			cpus[1].state = CPUHP_OFFLINE;
		printf("%s %.1f\n", ops_list[i], wall_ns(ops_list[i], n));
		cpus[1].state = CPUHP_ONLINE;
	}
	return 0;
}
