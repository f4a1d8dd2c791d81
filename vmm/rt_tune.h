/* SPDX-License-Identifier: MIT */
/*
 * libvirt's real-time guest knobs (<cputune> vcpupin/emulatorpin/vcpusched, <memoryBacking>
 * <locked/>), parsed by config/domain_xml_cpus.c and applied here: the emulator's threads (the main
 * thread and every thread it starts) keep the emulator pin; each vCPU thread sets its own pin
 * and scheduling policy before its first KVM_RUN, on every start (boot, hot-add, re-add).
 */
#ifndef PLUGVM_VMM_RT_TUNE_H
#define PLUGVM_VMM_RT_TUNE_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>

struct rt_vcpu {
	bool pinned;
	cpu_set_t cpus;
	int policy; /* SCHED_OTHER: leave it as it is */
	int priority; /* SCHED_FIFO, SCHED_RR: 1..99 */
};

struct rt_config {
	bool emulator_pinned;
	cpu_set_t emulator_cpus;
	bool mlock; /* <memoryBacking><locked/>: mlockall() before guest RAM is mapped */
	unsigned nr_vcpus; /* entries in vcpus (max_cpus), 0: no per-vCPU settings */
	struct rt_vcpu *vcpus;
};

/*
 * libvirt's cpuset syntax ("0-3,^2,5": numbers, ranges, ^N exclusions) into *set. 0, or
 * -EINVAL (bad syntax, a CPU >= CPU_SETSIZE, an empty result).
 */
int rt_parse_cpuset(const char *s, cpu_set_t *set);

/*
 * Check every pin names host CPUs this process may run on. 0, or -EINVAL with err set.
 * Main thread, before the VM is built.
 */
int rt_tune_check(const struct rt_config *rt, char *err, size_t errlen);

/*
 * Pin the calling (main) thread to the emulator set and lock memory, before any other
 * thread and before guest RAM exists. 0, or -errno (logged) when pinning fails; a refused
 * mlockall() is a warning (the host's limit), not a failure.
 */
int rt_tune_emulator(const struct rt_config *rt);

/*
 * On vCPU `id`'s own thread, before its first KVM_RUN: its pin and policy. A policy the
 * host refuses (EPERM: no CAP_SYS_NICE, RT throttling) is warned about once per VM, and
 * the vCPU runs on; never fails.
 */
void rt_tune_vcpu(const struct rt_config *rt, unsigned id);

/* Free what the parser allocated. */
void rt_config_free(struct rt_config *rt);

#endif
