// SPDX-License-Identifier: MIT
/*
 * A libvirt document's CPU and real-time elements (docs/domain-xml.md): <vcpus> (which vCPUs
 * boot and which are hot-added at start), <cpu><topology>, <cputune> (pins, vCPU scheduling)
 * and <memoryBacking>, into struct vm_config and its struct rt_config (rt_tune.h).
 */
#include "domain_xml_reader.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "xml_lib.h"

#include "../log.h"
#include "plugvm_abi.h"

/*
 * <vcpus>: per vCPU enabled/hotpluggable/order, as libvirt: the enabled non-hotpluggable
 * ones are the boot CPUs (plugvm boots vCPUs 0..N-1), the enabled hotpluggable ones are
 * hot-added at start in `order`. Needs <vcpu> first (libvirt's order too).
 */
int domain_xml_read_vcpus(struct domain_xml_reader *r, const xmlNode *vcpus)
{
	struct vm_config *cfg = r->cfg;
	unsigned *order = NULL, nr_boot = 0, nr_enabled = 0, nr_listed = 0, i, j;
	unsigned char *seen = NULL;
	const xmlNode *n;
	int ret = -ENOMEM;

	order = calloc(cfg->max_cpus, sizeof(*order));
	seen = calloc(cfg->max_cpus, 1);
	free(cfg->start_hotplug);
	cfg->start_hotplug = calloc(cfg->max_cpus, sizeof(*cfg->start_hotplug));
	cfg->nr_start_hotplug = 0;
	if (!order || !seen || !cfg->start_hotplug)
		goto out;
	for (n = vcpus->children; n; n = n->next) {
		char *id_s, *order_s;
		unsigned long long id, ord = 0;
		bool enabled, hotpluggable;

		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (!is(n, "vcpu")) {
			ret = domain_xml_fail(r, "%s: <vcpus>: unexpected <%s>", r->path, n->name);
			goto out;
		}
		id_s = attr(n, "id");
		order_s = attr(n, "order");
		ret = 0;
		if (parse_uint(id_s, cfg->max_cpus - 1, &id))
			ret =
			    domain_xml_fail(r, "%s: <vcpus><vcpu id='%s'>: not a vCPU id in 0..%u",
					    r->path, id_s ? id_s : "", cfg->max_cpus - 1);
		else if (order_s && (parse_uint(order_s, cfg->max_cpus, &ord) || !ord))
			ret = domain_xml_fail(r,
					      "%s: <vcpus><vcpu order='%s'>: not an order in 1..%u",
					      r->path, order_s, cfg->max_cpus);
		else if (seen[id])
			ret =
			    domain_xml_fail(r, "%s: <vcpus>: vCPU %llu listed twice", r->path, id);
		xml_free(id_s);
		xml_free(order_s);
		if (ret || (ret = domain_xml_yes_no(r, n, "enabled", false, &enabled)) ||
		    (ret = domain_xml_yes_no(r, n, "hotpluggable", true, &hotpluggable)))
			goto out;
		seen[id] = 1;
		nr_listed++;
		if (!enabled)
			continue;
		nr_enabled++;
		if (!hotpluggable) {
			if (id != nr_boot) {
				ret = domain_xml_fail(
				    r,
				    "%s: <vcpus>: vCPU %llu is enabled and not hotpluggable, "
				    "but plugvm boots vCPUs 0..N-1 (make the others "
				    "hotpluggable)",
				    r->path, id);
				goto out;
			}
			nr_boot++;
			continue;
		}
		order[id] = ord ? (unsigned)ord : cfg->max_cpus + 1 + (unsigned)id;
		cfg->start_hotplug[cfg->nr_start_hotplug++] = (unsigned)id;
	}
	ret = -EINVAL;
	if (nr_listed != cfg->max_cpus) {
		domain_xml_fail(r, "%s: <vcpus> lists %u vCPUs, <vcpu> says %u", r->path, nr_listed,
				cfg->max_cpus);
		goto out;
	}
	if (nr_enabled != cfg->nr_cpus) {
		domain_xml_fail(r, "%s: <vcpus> enables %u vCPUs, <vcpu current='%u'> says %u",
				r->path, nr_enabled, cfg->nr_cpus, cfg->nr_cpus);
		goto out;
	}
	if (!nr_boot) {
		domain_xml_fail(r, "%s: <vcpus>: vCPU 0 must be enabled and not hotpluggable",
				r->path);
		goto out;
	}
	/* Insertion sort by order (a few entries): the hot-adds happen in that order. */
	for (i = 1; i < cfg->nr_start_hotplug; i++) {
		unsigned s = cfg->start_hotplug[i];

		for (j = i; j && order[cfg->start_hotplug[j - 1]] > order[s]; j--)
			cfg->start_hotplug[j] = cfg->start_hotplug[j - 1];
		cfg->start_hotplug[j] = s;
	}
	cfg->nr_cpus = nr_boot;
	ret = 0;
out:
	free(order);
	free(seen);
	return ret;
}

/* <cpu>: only the topology matters to plugvm; its product must be the maximum. */
int domain_xml_read_cpu(struct domain_xml_reader *r, const xmlNode *cpu)
{
	static const char *const names[] = { "sockets", "dies", "cores", "threads" };
	char *mode = attr(cpu, "mode");
	const xmlNode *n;

	/* host-passthrough (libvirt's default for KVM guests that want the host's CPU) is it. */
	if (mode && strcmp(mode, "host-passthrough") && strcmp(mode, "maximum"))
		log_warn("%s: <cpu mode='%s'>: taken as host-passthrough (plugvm passes the "
			 "host's CPUID through)",
			 r->path, mode);
	xml_free(mode);
	for (n = cpu->children; n; n = n->next) {
		unsigned long long v[4] = { 1, 1, 1, 1 };
		unsigned i;

		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (!is(n, "topology")) {
			log_warn("%s: <cpu><%s>: ignored (plugvm passes the host's CPUID through)",
				 r->path, n->name);
			continue;
		}
		for (i = 0; i < 4; i++) {
			char *s = attr(n, names[i]);
			int bad = s && (parse_uint(s, PLUGVM_MAX_CPUS, &v[i]) || !v[i]);

			xml_free(s);
			if (bad)
				return domain_xml_fail(
				    r, "%s: <topology %s=...>: not a count in 1..%d", r->path,
				    names[i], PLUGVM_MAX_CPUS);
		}
		if (v[0] * v[1] * v[2] * v[3] != r->cfg->max_cpus)
			return domain_xml_fail(
			    r,
			    "%s: <topology>: %llu sockets x %llu dies x %llu cores x "
			    "%llu threads is not the %u vCPUs of <vcpu>",
			    r->path, v[0], v[1], v[2], v[3], r->cfg->max_cpus);
		r->cfg->topo = (struct smp_topology){ (unsigned)v[0], (unsigned)v[1],
						      (unsigned)v[2], (unsigned)v[3] };
	}
	return 0;
}
/* A vCPU id set in cpuset syntax (<vcpusched vcpus=...>), each below max_cpus. */
static int vcpu_set(struct domain_xml_reader *r, const char *what, const char *s, cpu_set_t *set)
{
	unsigned i;

	if (rt_parse_cpuset(s, set))
		return domain_xml_fail(r, "%s: %s='%s': not a set of vCPUs (e.g. 0-3,^2)", r->path,
				       what, s ? s : "");
	for (i = r->cfg->max_cpus; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, set))
			return domain_xml_fail(r, "%s: %s='%s': vCPU %u is past the last one (%u)",
					       r->path, what, s, i, r->cfg->max_cpus - 1);
	return 0;
}

static int read_vcpusched(struct domain_xml_reader *r, const xmlNode *n)
{
	char *vcpus = attr(n, "vcpus"), *sched = attr(n, "scheduler"), *prio = attr(n, "priority");
	struct rt_config *rt = &r->cfg->rt;
	unsigned long long p = 0;
	int policy = -1, ret;
	cpu_set_t set;
	unsigned i;

	ret = vcpu_set(r, "<vcpusched vcpus", vcpus, &set);
	if (!ret) {
		if (sched && !strcmp(sched, "fifo"))
			policy = SCHED_FIFO;
		else if (sched && !strcmp(sched, "rr"))
			policy = SCHED_RR;
		else if (sched && !strcmp(sched, "batch"))
			policy = SCHED_BATCH;
		else if (sched && !strcmp(sched, "idle"))
			policy = SCHED_IDLE;
		else if (sched && !strcmp(sched, "other"))
			policy = SCHED_OTHER;
		else
			ret = domain_xml_fail(
			    r,
			    "%s: <vcpusched scheduler='%s'>: not fifo, rr, batch, idle "
			    "or other",
			    r->path, sched ? sched : "");
	}
	if (!ret && (policy == SCHED_FIFO || policy == SCHED_RR) &&
	    (parse_uint(prio, 99, &p) || !p))
		ret = domain_xml_fail(
		    r,
		    "%s: <vcpusched scheduler='%s' priority='%s'>: fifo and rr need a "
		    "priority in 1..99",
		    r->path, sched, prio ? prio : "");
	for (i = 0; !ret && i < r->cfg->max_cpus; i++)
		if (CPU_ISSET(i, &set)) {
			rt->vcpus[i].policy = policy;
			rt->vcpus[i].priority = (int)p;
		}
	xml_free(vcpus);
	xml_free(sched);
	xml_free(prio);
	return ret;
}

/* <cputune>: vcpupin, emulatorpin, vcpusched (libvirt's "KVM Real Time Guest Config"). */
int domain_xml_read_cputune(struct domain_xml_reader *r, const xmlNode *cputune)
{
	static const char *const cgroup[] = { "shares",	       "period",       "quota",
					      "global_period", "global_quota", "emulator_period",
					      "emulator_quota" };
	struct rt_config *rt = &r->cfg->rt;
	const xmlNode *n;
	size_t i;
	int ret = 0;

	if (!rt->vcpus) {
		rt->vcpus = calloc(r->cfg->max_cpus, sizeof(*rt->vcpus));
		if (!rt->vcpus)
			return -ENOMEM;
		rt->nr_vcpus = r->cfg->max_cpus;
		for (i = 0; i < rt->nr_vcpus; i++)
			rt->vcpus[i].policy = SCHED_OTHER;
	}
	for (n = cputune->children; n && !ret; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (is(n, "vcpupin")) {
			char *vcpu = attr(n, "vcpu"), *cpuset = attr(n, "cpuset");
			unsigned long long id;

			if (parse_uint(vcpu, r->cfg->max_cpus - 1, &id))
				ret = domain_xml_fail(
				    r, "%s: <vcpupin vcpu='%s'>: not a vCPU in 0..%u", r->path,
				    vcpu ? vcpu : "", r->cfg->max_cpus - 1);
			else if (rt_parse_cpuset(cpuset, &rt->vcpus[id].cpus))
				ret = domain_xml_fail(
				    r,
				    "%s: <vcpupin cpuset='%s'>: not a host CPU set (e.g. "
				    "0-3,^2)",
				    r->path, cpuset ? cpuset : "");
			else
				rt->vcpus[id].pinned = true;
			xml_free(vcpu);
			xml_free(cpuset);
		} else if (is(n, "emulatorpin")) {
			char *cpuset = attr(n, "cpuset");

			if (rt_parse_cpuset(cpuset, &rt->emulator_cpus))
				ret = domain_xml_fail(
				    r, "%s: <emulatorpin cpuset='%s'>: not a host CPU set", r->path,
				    cpuset ? cpuset : "");
			else
				rt->emulator_pinned = true;
			xml_free(cpuset);
		} else if (is(n, "vcpusched")) {
			ret = read_vcpusched(r, n);
		} else {
			for (i = 0; i < sizeof(cgroup) / sizeof(cgroup[0]); i++)
				if (is(n, cgroup[i]))
					break;
			if (i < sizeof(cgroup) / sizeof(cgroup[0]))
				log_warn("%s: <cputune><%s>: ignored (plugvm uses no cgroups)",
					 r->path, n->name);
			else
				ret = domain_xml_fail(
				    r,
				    "%s: <cputune><%s>: not supported by plugvm (vcpupin, "
				    "emulatorpin, vcpusched)",
				    r->path, n->name);
		}
	}
	return ret;
}

int domain_xml_read_memory_backing(struct domain_xml_reader *r, const xmlNode *mb)
{
	const xmlNode *n;

	for (n = mb->children; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (is(n, "locked"))
			r->cfg->rt.mlock = true;
		else if (is(n, "nosharepages"))
			;
		else
			return domain_xml_fail(
			    r, "%s: <memoryBacking><%s>: not supported by plugvm (locked)", r->path,
			    n->name);
	}
	return 0;
}
