/* SPDX-License-Identifier: MIT */
/* What the CPU hotplug self-tests (selftest_cpuhp.c, selftest_cpuhp_walk.c) share. */
#ifndef PLUGVM_APPS_SELFTEST_CPUHP_H
#define PLUGVM_APPS_SELFTEST_CPUHP_H

/* The non-boot CPUs that are present, in `list` (NR_CPUS entries); returns how many. */
unsigned selftest_cpuhp_present(unsigned *list);

/*
 * Does `cpu` look like what `state` says (its hotplug state, and in the online mask from
 * CPUHP_AP_ONLINE_MASK on)? Returns 0, or selftest_fail()'s -1 naming `when`.
 */
int selftest_cpuhp_check_cpu(unsigned cpu, int state, const char *when);

#endif
