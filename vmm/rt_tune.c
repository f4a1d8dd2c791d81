// SPDX-License-Identifier: MIT
/* libvirt's real-time knobs applied to plugvm's threads (see rt_tune.h). */
#include "rt_tune.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "log.h"

static int parse_num(const char **p, unsigned *out)
{
	unsigned long v = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	while (*s >= '0' && *s <= '9') {
		v = v * 10 + (unsigned)(*s++ - '0');
		if (v >= CPU_SETSIZE)
			return -EINVAL;
	}
	*p = s;
	*out = (unsigned)v;
	return 0;
}

int rt_parse_cpuset(const char *s, cpu_set_t *set)
{
	cpu_set_t excl;
	unsigned a, b, i;

	CPU_ZERO(set);
	CPU_ZERO(&excl);
	if (!s || !*s)
		return -EINVAL;
	for (;;) {
		bool neg = *s == '^';

		s += neg;
		if (parse_num(&s, &a))
			return -EINVAL;
		b = a;
		if (*s == '-') {
			s++;
			if (neg || parse_num(&s, &b) || b < a)
				return -EINVAL;
		}
		for (i = a; i <= b; i++)
			CPU_SET(i, neg ? &excl : set);
		if (!*s)
			break;
		if (*s++ != ',')
			return -EINVAL;
	}
	for (i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &excl))
			CPU_CLR(i, set);
	return CPU_COUNT(set) ? 0 : -EINVAL;
}

static int check_set(const cpu_set_t *want, const cpu_set_t *host, const char *what, char *err,
		     size_t errlen)
{
	cpu_set_t bad;

	CPU_AND(&bad, want, host);
	if (CPU_EQUAL(&bad, want))
		return 0;
	CPU_XOR(&bad, want, &bad);
	for (unsigned i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &bad)) {
			snprintf(err, errlen,
				 "%s: host CPU %u is not one plugvm may run on (%d CPUs "
				 "allowed)",
				 what, i, CPU_COUNT(host));
			break;
		}
	return -EINVAL;
}

int rt_tune_check(const struct rt_config *rt, char *err, size_t errlen)
{
	cpu_set_t host;
	char what[48];
	unsigned i;

	if (sched_getaffinity(0, sizeof(host), &host)) {
		snprintf(err, errlen, "sched_getaffinity: %s", strerror(errno));
		return -errno;
	}
	if (rt->emulator_pinned &&
	    check_set(&rt->emulator_cpus, &host, "<emulatorpin>", err, errlen))
		return -EINVAL;
	for (i = 0; i < rt->nr_vcpus; i++) {
		if (!rt->vcpus[i].pinned)
			continue;
		snprintf(what, sizeof(what), "<vcpupin vcpu='%u'>", i);
		if (check_set(&rt->vcpus[i].cpus, &host, what, err, errlen))
			return -EINVAL;
	}
	return 0;
}

int rt_tune_emulator(const struct rt_config *rt)
{
	if (rt->emulator_pinned &&
	    sched_setaffinity(0, sizeof(rt->emulator_cpus), &rt->emulator_cpus)) {
		int e = errno;

		log_error("<emulatorpin>: sched_setaffinity: %s", strerror(e));
		return -e;
	}
	if (rt->mlock && mlockall(MCL_CURRENT | MCL_FUTURE))
		log_warn("<memoryBacking><locked/>: mlockall: %s (RLIMIT_MEMLOCK or "
			 "CAP_IPC_LOCK): guest memory stays pageable",
			 strerror(errno));
	return 0;
}

void rt_tune_vcpu(const struct rt_config *rt, unsigned id)
{
	static atomic_bool warned_pin, warned_sched;
	const struct rt_vcpu *v;

	if (id >= rt->nr_vcpus)
		return;
	v = &rt->vcpus[id];
	if (v->pinned && sched_setaffinity(0, sizeof(v->cpus), &v->cpus) &&
	    !atomic_exchange(&warned_pin, true))
		log_warn("<vcpupin vcpu='%u'>: sched_setaffinity: %s: the vCPU runs unpinned", id,
			 strerror(errno));
	if (v->policy != SCHED_OTHER &&
	    sched_setscheduler(0, v->policy,
			       &(struct sched_param){ .sched_priority = v->priority }) &&
	    !atomic_exchange(&warned_sched, true))
		log_warn("<vcpusched> for vCPU %u: sched_setscheduler: %s (the host does not allow "
			 "it: CAP_SYS_NICE, RLIMIT_RTPRIO): the vCPU keeps its normal policy",
			 id, strerror(errno));
}

void rt_config_free(struct rt_config *rt)
{
	free(rt->vcpus);
	rt->vcpus = NULL;
	rt->nr_vcpus = 0;
}
