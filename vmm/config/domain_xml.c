// SPDX-License-Identifier: MIT
/*
 * A libvirt domain document into struct vm_config (see domain_xml.h, docs/domain-xml.md).
 * Every element plugvm meets is either read, refused with an error naming it, or warned
 * about once; nothing is silently dropped. The document is untrusted input: read whole
 * within DOMAIN_XML_MAX_BYTES, refused if it has a DOCTYPE (so no entity is declared, none
 * expanded), no network, every number range-checked and every string kept bounded.
 */
#include "domain_xml.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "../log.h"
#include "plugvm_abi.h"

struct reader {
	struct vm_config *cfg;
	const char *path;
	char *err;
	size_t errlen;
	bool saw_kernel;
};

/* One line into the caller's err; returns -EINVAL. */
__attribute__((format(printf, 2, 3))) static int fail(struct reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->err && r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err, r->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static bool is(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name);
}

/* An attribute's value (the caller frees it with xmlFree), or NULL. */
static char *attr(const xmlNode *n, const char *name)
{
	return (char *)xmlGetProp(n, (const xmlChar *)name);
}

/* The element's text with surrounding blanks trimmed, malloc'd; NULL only without memory. */
static char *text(const xmlNode *n)
{
	xmlChar *c = xmlNodeGetContent(n);
	const char *s = c ? (const char *)c : "";
	size_t len;
	char *out;

	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	len = strlen(s);
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\n' ||
		       s[len - 1] == '\r'))
		len--;
	out = strndup(s, len);
	xmlFree(c);
	return out;
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
	return s ? config_parse_uint(s, strlen(s), max, out) : -EINVAL;
}

int domain_xml_parse_size(const char *value, const char *unit, unsigned long long *bytes)
{
	static const struct {
		const char *name;
		unsigned long long mult;
	} units[] = {
		{ "b", 1 },
		{ "bytes", 1 },
		{ "KB", 1000ull },
		{ "k", 1ull << 10 },
		{ "K", 1ull << 10 },
		{ "KiB", 1ull << 10 },
		{ "MB", 1000000ull },
		{ "M", 1ull << 20 },
		{ "MiB", 1ull << 20 },
		{ "GB", 1000000000ull },
		{ "G", 1ull << 30 },
		{ "GiB", 1ull << 30 },
		{ "TB", 1000000000000ull },
		{ "T", 1ull << 40 },
		{ "TiB", 1ull << 40 },
	};
	unsigned long long v, mult = 1ull << 10;
	size_t i;

	if (unit) {
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(unit, units[i].name))
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -EINVAL;
		mult = units[i].mult;
	}
	if (parse_uint(value, ~0ull, &v) || (v && mult > ~0ull / v))
		return -EINVAL;
	*bytes = v * mult;
	return 0;
}

/* <memory>/<currentMemory>: bytes, within plugvm's limits. */
static int read_memory(struct reader *r, const xmlNode *n, unsigned long long *bytes)
{
	char *unit = attr(n, "unit"), *v = text(n);
	int ret = 0;

	if (!v)
		ret = -ENOMEM;
	else if (domain_xml_parse_size(v, unit, bytes))
		ret = fail(r,
			   "%s: <%s unit='%s'>%s</%s>: not a size (a number, unit b, KiB, MiB, "
			   "GiB, TiB, KB, MB, GB or TB)",
			   r->path, n->name, unit ? unit : "KiB", v, n->name);
	else if (*bytes < CONFIG_MIN_MEM_BYTES || *bytes > CONFIG_MAX_MEM_BYTES)
		ret = fail(r, "%s: <%s>: %llu bytes is outside %lluM..%lluG", r->path, n->name,
			   *bytes, CONFIG_MIN_MEM_BYTES >> 20, CONFIG_MAX_MEM_BYTES >> 30);
	xmlFree(unit);
	free(v);
	return ret;
}

static int read_vcpu(struct reader *r, const xmlNode *n)
{
	char *placement = attr(n, "placement"), *current = attr(n, "current"), *v = text(n);
	unsigned long long max = 0, cur;
	int ret = 0;

	if (!v) {
		ret = -ENOMEM;
		goto out;
	}
	if (parse_uint(v, PLUGVM_MAX_CPUS, &max) || !max) {
		ret = fail(r, "%s: <vcpu>%s</vcpu>: not a vCPU count in 1..%d", r->path, v,
			   PLUGVM_MAX_CPUS);
		goto out;
	}
	cur = max;
	if (current && (parse_uint(current, PLUGVM_MAX_CPUS, &cur) || !cur)) {
		ret = fail(r, "%s: <vcpu current='%s'>: not a vCPU count", r->path, current);
		goto out;
	}
	if (cur > max) {
		ret = fail(r,
			   "%s: <vcpu current='%llu'>%llu</vcpu>: current is more than the "
			   "maximum",
			   r->path, cur, max);
		goto out;
	}
	if (placement && strcmp(placement, "static"))
		log_warn("%s: <vcpu placement='%s'>: plugvm has no NUMA placement; taken as "
			 "static",
			 r->path, placement);
	r->cfg->nr_cpus = (unsigned)cur;
	r->cfg->max_cpus = (unsigned)max;
	r->cfg->topo = (struct smp_topology){ 1, 1, (unsigned)max, 1 };
out:
	xmlFree(placement);
	xmlFree(current);
	free(v);
	return ret;
}

static int yes_no(struct reader *r, const xmlNode *n, const char *name, bool dflt, bool *out)
{
	char *v = attr(n, name);
	int ret = 0;

	*out = dflt;
	if (v && !strcmp(v, "yes"))
		*out = true;
	else if (v && !strcmp(v, "no"))
		*out = false;
	else if (v)
		ret = fail(r, "%s: <%s %s='%s'>: not yes or no", r->path, n->name, name, v);
	xmlFree(v);
	return ret;
}

/*
 * <vcpus>: per vCPU enabled/hotpluggable/order, as libvirt: the enabled non-hotpluggable
 * ones are the boot CPUs (plugvm boots vCPUs 0..N-1), the enabled hotpluggable ones are
 * hot-added at start in `order`. Needs <vcpu> first (libvirt's order too).
 */
static int read_vcpus(struct reader *r, const xmlNode *vcpus)
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
			ret = fail(r, "%s: <vcpus>: unexpected <%s>", r->path, n->name);
			goto out;
		}
		id_s = attr(n, "id");
		order_s = attr(n, "order");
		ret = 0;
		if (parse_uint(id_s, cfg->max_cpus - 1, &id))
			ret = fail(r, "%s: <vcpus><vcpu id='%s'>: not a vCPU id in 0..%u", r->path,
				   id_s ? id_s : "", cfg->max_cpus - 1);
		else if (order_s && (parse_uint(order_s, cfg->max_cpus, &ord) || !ord))
			ret = fail(r, "%s: <vcpus><vcpu order='%s'>: not an order in 1..%u",
				   r->path, order_s, cfg->max_cpus);
		else if (seen[id])
			ret = fail(r, "%s: <vcpus>: vCPU %llu listed twice", r->path, id);
		xmlFree(id_s);
		xmlFree(order_s);
		if (ret || (ret = yes_no(r, n, "enabled", false, &enabled)) ||
		    (ret = yes_no(r, n, "hotpluggable", true, &hotpluggable)))
			goto out;
		seen[id] = 1;
		nr_listed++;
		if (!enabled)
			continue;
		nr_enabled++;
		if (!hotpluggable) {
			if (id != nr_boot) {
				ret =
				    fail(r,
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
		fail(r, "%s: <vcpus> lists %u vCPUs, <vcpu> says %u", r->path, nr_listed,
		     cfg->max_cpus);
		goto out;
	}
	if (nr_enabled != cfg->nr_cpus) {
		fail(r, "%s: <vcpus> enables %u vCPUs, <vcpu current='%u'> says %u", r->path,
		     nr_enabled, cfg->nr_cpus, cfg->nr_cpus);
		goto out;
	}
	if (!nr_boot) {
		fail(r, "%s: <vcpus>: vCPU 0 must be enabled and not hotpluggable", r->path);
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
static int read_cpu(struct reader *r, const xmlNode *cpu)
{
	static const char *const names[] = { "sockets", "dies", "cores", "threads" };
	const xmlNode *n;

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

			xmlFree(s);
			if (bad)
				return fail(r, "%s: <topology %s=...>: not a count in 1..%d",
					    r->path, names[i], PLUGVM_MAX_CPUS);
		}
		if (v[0] * v[1] * v[2] * v[3] != r->cfg->max_cpus)
			return fail(r,
				    "%s: <topology>: %llu sockets x %llu dies x %llu cores x "
				    "%llu threads is not the %u vCPUs of <vcpu>",
				    r->path, v[0], v[1], v[2], v[3], r->cfg->max_cpus);
		r->cfg->topo = (struct smp_topology){ (unsigned)v[0], (unsigned)v[1],
						      (unsigned)v[2], (unsigned)v[3] };
	}
	return 0;
}

static int set_str(char **dst, char *val)
{
	if (!val)
		return -ENOMEM;
	free(*dst);
	*dst = val;
	return 0;
}

/* <name>: 1..DOMAIN_XML_MAX_NAME bytes, no newline (libvirt's rules). */
static int read_name(struct reader *r, const xmlNode *n)
{
	char *v = text(n);
	size_t len = v ? strlen(v) : 0;
	bool newline = len && memchr(v, '\n', len);

	if (!v)
		return -ENOMEM;
	if (len && len <= DOMAIN_XML_MAX_NAME && !newline)
		return set_str(&r->cfg->name, v);
	free(v);
	return fail(r, "%s: <name>: %zu bytes%s: not a domain name (1..%d bytes, one line)",
		    r->path, len, newline && len <= DOMAIN_XML_MAX_NAME ? " with a newline" : "",
		    DOMAIN_XML_MAX_NAME);
}

/* <uuid>: 32 hex digits and dashes, at most DOMAIN_XML_MAX_UUID bytes (libvirt's buffer). */
static int read_uuid(struct reader *r, const xmlNode *n)
{
	char *v = text(n);
	size_t i, len, digits = 0;

	if (!v)
		return -ENOMEM;
	len = strlen(v);
	for (i = 0; i < len && len <= DOMAIN_XML_MAX_UUID; i++)
		if (isxdigit((unsigned char)v[i]))
			digits++;
		else if (v[i] != '-')
			break;
	if (len > DOMAIN_XML_MAX_UUID || i < len || digits != 32) {
		free(v);
		return fail(r,
			    "%s: <uuid>: not a UUID (32 hex digits, as "
			    "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
			    r->path);
	}
	return set_str(&r->cfg->uuid, v);
}

static int read_os(struct reader *r, const xmlNode *os)
{
	const xmlNode *n;

	for (n = os->children; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (is(n, "type")) {
			char *arch = attr(n, "arch"), *machine = attr(n, "machine"), *t = text(n);
			int ret = 0;

			if (!t)
				ret = -ENOMEM;
			else if (strcmp(t, "hvm"))
				ret =
				    fail(r, "%s: <os><type>%s</type>: plugvm runs hvm guests only",
					 r->path, t);
			else if (arch && strcmp(arch, "x86_64"))
				ret = fail(r, "%s: <os><type arch='%s'>: plugvm runs x86_64 only",
					   r->path, arch);
			else if (machine && strcmp(machine, "pc") &&
				 strncmp(machine, "pc-i440fx", 9))
				log_warn(
				    "%s: <os><type machine='%s'>: plugvm has one machine, laid "
				    "out as QEMU's pc: taken as pc",
				    r->path, machine);
			xmlFree(arch);
			xmlFree(machine);
			free(t);
			if (ret)
				return ret;
		} else if (is(n, "kernel")) {
			char *k = text(n);

			if (k && (!*k || strlen(k) >= PATH_MAX)) {
				size_t len = strlen(k);

				free(k);
				return len ? fail(r,
						  "%s: <os><kernel>: %zu bytes, longer than a file "
						  "name may be (%d)",
						  r->path, len, PATH_MAX - 1)
					   : fail(r, "%s: <os><kernel>: empty", r->path);
			}
			if (set_str(&r->cfg->kernel_path, k))
				return -ENOMEM;
			r->saw_kernel = true;
		} else if (is(n, "cmdline")) {
			char *c = text(n);

			if (c && strlen(c) > CONFIG_MAX_CMDLINE) {
				free(c);
				return fail(r, "%s: <os><cmdline>: longer than %d bytes", r->path,
					    CONFIG_MAX_CMDLINE);
			}
			if (set_str(&r->cfg->cmdline, c))
				return -ENOMEM;
		} else if (is(n, "boot") || is(n, "bootmenu") || is(n, "smbios") || is(n, "bios")) {
			log_warn("%s: <os><%s>: ignored (plugvm boots <kernel> directly)", r->path,
				 n->name);
		} else {
			return fail(r,
				    "%s: <os><%s>: not supported by plugvm (it boots an ELF "
				    "<kernel> with <cmdline>, no firmware, no initrd)",
				    r->path, n->name);
		}
	}
	return 0;
}

/*
 * <serial>/<console>: the guest's console is plugvm's stdio (type='stdio'), or its output
 * goes to a file (type='file' with <source path=>; input stays on stdin). There is one
 * console: <serial> and <console> naming different files is an error.
 */
static int read_console(struct reader *r, const xmlNode *n)
{
	char *type = attr(n, "type"), *path = NULL;
	const xmlNode *c;
	int ret = 0;

	if (!type || !strcmp(type, "stdio")) {
		;
	} else if (!strcmp(type, "pty")) {
		log_warn("%s: <%s type='pty'>: plugvm's console is its stdio (run it under a "
			 "terminal or `script` for a pty)",
			 r->path, n->name);
	} else if (!strcmp(type, "file")) {
		for (c = n->children; c && !path; c = c->next)
			if (is(c, "source"))
				path = attr(c, "path");
		if (!path || !*path)
			ret = fail(r, "%s: <%s type='file'>: needs <source path='FILE'/>", r->path,
				   n->name);
		else if (strlen(path) >= PATH_MAX)
			ret = fail(r,
				   "%s: <%s><source path=...>: longer than a file name may be (%d)",
				   r->path, n->name, PATH_MAX - 1);
		else if (r->cfg->console_path && strcmp(r->cfg->console_path, path))
			ret = fail(r,
				   "%s: <%s type='file'>: %s, but the console already goes to %s "
				   "(plugvm has one console)",
				   r->path, n->name, path, r->cfg->console_path);
		else if (!r->cfg->console_path && !(r->cfg->console_path = strdup(path)))
			ret = -ENOMEM;
	} else {
		ret = fail(r,
			   "%s: <%s type='%s'>: not supported by plugvm (the console is its "
			   "stdio, type='stdio', or a file, type='file')",
			   r->path, n->name, type);
	}
	xmlFree(type);
	xmlFree(path);
	return ret;
}

static int read_devices(struct reader *r, const xmlNode *devices)
{
	/* Safe to go without: the guest does not depend on them. */
	static const char *const ignored[] = { "emulator", "controller", "input",   "graphics",
					       "video",	   "memballoon", "channel", "sound" };
	const xmlNode *n;
	size_t i;
	int ret;

	for (n = devices->children; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (is(n, "serial") || is(n, "console")) {
			if ((ret = read_console(r, n)))
				return ret;
			continue;
		}
		for (i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
			if (is(n, ignored[i]))
				break;
		if (i < sizeof(ignored) / sizeof(ignored[0])) {
			log_warn("%s: <devices><%s>: ignored (plugvm has no such device; the guest "
				 "does not need it)",
				 r->path, n->name);
			continue;
		}
		return fail(r,
			    "%s: <devices><%s>: not supported by plugvm (its devices are the "
			    "console, the ACPI CPU hotplug block and the virtio consoles)",
			    r->path, n->name);
	}
	return 0;
}

static int read_features(struct reader *r, const xmlNode *features)
{
	bool acpi = false, apic = false;
	const xmlNode *n;

	for (n = features->children; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (is(n, "acpi"))
			acpi = true;
		else if (is(n, "apic"))
			apic = true;
		else if (is(n, "pae"))
			;
		else
			log_warn("%s: <features><%s>: ignored", r->path, n->name);
	}
	if (!acpi || !apic)
		log_warn("%s: <features> without <%s/>: plugvm always has it (the guest needs it)",
			 r->path, !acpi ? "acpi" : "apic");
	return 0;
}

/* <on_poweroff>/<on_crash>/<on_reboot>: plugvm ends in every case (QEMU's -no-reboot). */
static int read_lifecycle(struct reader *r, const xmlNode *n)
{
	char *v = text(n);
	int ret = 0;

	if (!v)
		return -ENOMEM;
	if (!strcmp(v, "destroy"))
		;
	else if (is(n, "on_reboot") && !strcmp(v, "restart"))
		log_warn("%s: <on_reboot>restart</on_reboot>: plugvm has no reboot: a guest reset "
			 "ends it",
			 r->path);
	else if (is(n, "on_crash") && !strcmp(v, "coredump-destroy"))
		log_warn("%s: <on_crash>coredump-destroy</on_crash>: no core dump; a crash ends "
			 "plugvm with a register dump",
			 r->path);
	else
		ret = fail(r, "%s: <%s>%s</%s>: plugvm always ends the VM (destroy)", r->path,
			   n->name, v, n->name);
	free(v);
	return ret;
}

/* <metadata><plugvm:plugvm xmlns:plugvm=DOMAIN_XML_PLUGVM_NS>: <qmp path=/>, <chaos spec=/>. */
static int read_metadata(struct reader *r, const xmlNode *metadata)
{
	const xmlNode *own, *n;
	int ret;

	for (own = metadata->children; own; own = own->next) {
		if (own->type != XML_ELEMENT_NODE || !own->ns ||
		    strcmp((const char *)own->ns->href, DOMAIN_XML_PLUGVM_NS))
			continue; /* other applications' metadata */
		if (!is(own, "plugvm"))
			return fail(r, "%s: <metadata>: <%s> in plugvm's namespace (want <plugvm>)",
				    r->path, own->name);
		for (n = own->children; n; n = n->next) {
			char *v;

			if (n->type != XML_ELEMENT_NODE)
				continue;
			if (is(n, "qmp")) {
				v = attr(n, "path");
				ret = v ? config_parse_qmp(r->cfg, v, r->err, r->errlen)
					: fail(r, "%s: <plugvm:qmp>: needs path='unix:PATH|none'",
					       r->path);
			} else if (is(n, "chaos")) {
				v = attr(n, "spec");
				ret = config_parse_chaos(&r->cfg->chaos, v, r->err, r->errlen);
			} else {
				return fail(r,
					    "%s: <metadata><plugvm:%s>: unknown (plugvm:qmp, "
					    "plugvm:chaos)",
					    r->path, n->name);
			}
			xmlFree(v);
			if (ret)
				return ret == -ENOMEM ? ret : -EINVAL;
		}
	}
	return 0;
}

/* A vCPU id set in cpuset syntax (<vcpusched vcpus=...>), each below max_cpus. */
static int vcpu_set(struct reader *r, const char *what, const char *s, cpu_set_t *set)
{
	unsigned i;

	if (rt_parse_cpuset(s, set))
		return fail(r, "%s: %s='%s': not a set of vCPUs (e.g. 0-3,^2)", r->path, what,
			    s ? s : "");
	for (i = r->cfg->max_cpus; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, set))
			return fail(r, "%s: %s='%s': vCPU %u is past the last one (%u)", r->path,
				    what, s, i, r->cfg->max_cpus - 1);
	return 0;
}

static int read_vcpusched(struct reader *r, const xmlNode *n)
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
			ret = fail(r,
				   "%s: <vcpusched scheduler='%s'>: not fifo, rr, batch, idle "
				   "or other",
				   r->path, sched ? sched : "");
	}
	if (!ret && (policy == SCHED_FIFO || policy == SCHED_RR) &&
	    (parse_uint(prio, 99, &p) || !p))
		ret = fail(r,
			   "%s: <vcpusched scheduler='%s' priority='%s'>: fifo and rr need a "
			   "priority in 1..99",
			   r->path, sched, prio ? prio : "");
	for (i = 0; !ret && i < r->cfg->max_cpus; i++)
		if (CPU_ISSET(i, &set)) {
			rt->vcpus[i].policy = policy;
			rt->vcpus[i].priority = (int)p;
		}
	xmlFree(vcpus);
	xmlFree(sched);
	xmlFree(prio);
	return ret;
}

/* <cputune>: vcpupin, emulatorpin, vcpusched (libvirt's "KVM Real Time Guest Config"). */
static int read_cputune(struct reader *r, const xmlNode *cputune)
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
				ret = fail(r, "%s: <vcpupin vcpu='%s'>: not a vCPU in 0..%u",
					   r->path, vcpu ? vcpu : "", r->cfg->max_cpus - 1);
			else if (rt_parse_cpuset(cpuset, &rt->vcpus[id].cpus))
				ret = fail(r,
					   "%s: <vcpupin cpuset='%s'>: not a host CPU set (e.g. "
					   "0-3,^2)",
					   r->path, cpuset ? cpuset : "");
			else
				rt->vcpus[id].pinned = true;
			xmlFree(vcpu);
			xmlFree(cpuset);
		} else if (is(n, "emulatorpin")) {
			char *cpuset = attr(n, "cpuset");

			if (rt_parse_cpuset(cpuset, &rt->emulator_cpus))
				ret = fail(r, "%s: <emulatorpin cpuset='%s'>: not a host CPU set",
					   r->path, cpuset ? cpuset : "");
			else
				rt->emulator_pinned = true;
			xmlFree(cpuset);
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
				ret = fail(r,
					   "%s: <cputune><%s>: not supported by plugvm (vcpupin, "
					   "emulatorpin, vcpusched)",
					   r->path, n->name);
		}
	}
	return ret;
}

static int read_memory_backing(struct reader *r, const xmlNode *mb)
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
			return fail(r, "%s: <memoryBacking><%s>: not supported by plugvm (locked)",
				    r->path, n->name);
	}
	return 0;
}

static int read_domain(struct reader *r, const xmlNode *root)
{
	const xmlNode *n, *vcpus = NULL;
	unsigned long long mem = 0, cur = 0;
	bool have_vcpu = false;
	char *type;
	int ret = 0;

	if (!is(root, "domain"))
		return fail(r, "%s: the root element is <%s>, not a libvirt <domain>", r->path,
			    root->name);
	type = attr(root, "type");
	if (!type || strcmp(type, "kvm"))
		ret = fail(r, "%s: <domain type='%s'>: plugvm runs type='kvm' domains", r->path,
			   type ? type : "");
	xmlFree(type);
	if (ret)
		return ret;
	for (n = root->children; n && !ret; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (is(n, "name"))
			ret = read_name(r, n);
		else if (is(n, "uuid"))
			ret = read_uuid(r, n);
		else if (is(n, "title") || is(n, "description"))
			;
		else if (is(n, "memory"))
			ret = read_memory(r, n, &mem);
		else if (is(n, "currentMemory"))
			ret = read_memory(r, n, &cur);
		else if (is(n, "vcpu"))
			ret = read_vcpu(r, n), have_vcpu = true;
		else if (is(n, "vcpus"))
			vcpus = n;
		else if (is(n, "cpu") || is(n, "cputune"))
			; /* after <vcpu>, below */
		else if (is(n, "memoryBacking"))
			ret = read_memory_backing(r, n);
		else if (is(n, "os"))
			ret = read_os(r, n);
		else if (is(n, "features"))
			ret = read_features(r, n);
		else if (is(n, "on_poweroff") || is(n, "on_crash") || is(n, "on_reboot"))
			ret = read_lifecycle(r, n);
		else if (is(n, "devices"))
			ret = read_devices(r, n);
		else if (is(n, "metadata"))
			ret = read_metadata(r, n);
		else if (is(n, "clock") || is(n, "pm") || is(n, "resource"))
			log_warn("%s: <%s>: ignored", r->path, n->name);
		else
			ret = fail(r, "%s: <%s>: not supported by plugvm (docs/domain-xml.md)",
				   r->path, n->name);
	}
	if (ret)
		return ret;
	if (!have_vcpu)
		return fail(r, "%s: no <vcpu>", r->path);
	for (n = root->children; n && !ret; n = n->next)
		if (is(n, "cpu"))
			ret = read_cpu(r, n);
		else if (is(n, "cputune"))
			ret = read_cputune(r, n);
	if (ret)
		return ret;
	if (!mem)
		return fail(r, "%s: no <memory>", r->path);
	if (cur && cur != mem)
		log_warn("%s: <currentMemory> below <memory>: plugvm has no balloon; the guest "
			 "gets all of <memory>",
			 r->path);
	r->cfg->mem_bytes = mem;
	if (vcpus && (ret = read_vcpus(r, vcpus)))
		return ret;
	if (!r->saw_kernel)
		return fail(r,
			    "%s: no <os><kernel>: plugvm boots a kernel directly (the guest "
			    "ELF, e.g. build/guest.elf)",
			    r->path);
	return 0;
}

/*
 * The file at `path` whole (malloc'd, NUL-terminated, its length in *len), at most
 * DOMAIN_XML_MAX_BYTES: checked on its size before reading and on what was read (it may
 * grow). Opened without blocking: a FIFO or a device is refused, not waited on. NULL with
 * *ret the -errno (-EINVAL: not a regular file, too large) and err saying why.
 */
static char *read_document(const char *path, size_t *len, int *ret, char *err, size_t errlen)
{
	size_t cap = DOMAIN_XML_MAX_BYTES + 1, n = 0;
	struct stat st;
	char *b = NULL;
	int fd;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		goto sys_err;
	if (fstat(fd, &st))
		goto sys_err;
	*ret = -EINVAL;
	if (!S_ISREG(st.st_mode)) {
		config_set_err(err, errlen, "--domain %s: not a regular file", path);
		goto out;
	}
	if (st.st_size > DOMAIN_XML_MAX_BYTES)
		goto too_large;
	*ret = -ENOMEM;
	b = malloc(cap + 1);
	if (!b)
		goto out;
	while (n < cap) {
		ssize_t got = read(fd, b + n, cap - n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			goto sys_err;
		if (!got)
			break;
		n += (size_t)got;
	}
	if (n > DOMAIN_XML_MAX_BYTES)
		goto too_large;
	b[n] = '\0';
	*len = n;
	close(fd);
	return b;
sys_err:
	*ret = errno ? -errno : -EIO;
	config_set_err(err, errlen, "--domain %s: %s", path, strerror(-*ret));
	goto out;
too_large:
	*ret = -EINVAL;
	config_set_err(err, errlen, "--domain %s: larger than the %u KiB a domain document may be",
		       path, DOMAIN_XML_MAX_BYTES >> 10);
out:
	free(b);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/*
 * The markup counts of domain_xml.h over the raw bytes, conservatively: libxml2 reads them
 * as UTF-8 (as told, whatever the document declares; a byte that is not UTF-8 makes it
 * fall back to Latin-1), so every tag starts at a '<' byte, a tag ends at a '>' before the
 * next '<' (an attribute value holding '<' ends the tag), and each attribute it parses
 * takes one '=' byte. So the '=' between a '<' and the last '>' before the next '<' bound
 * that tag's attributes; '=' in comments, PIs and text before a '>' count too (overcounted,
 * never undercounted). Returns 0 or fail()'s -EINVAL.
 */
static int scan_markup(struct reader *r, const char *b, size_t len)
{
	const char *p = memchr(b, '<', len), *end = b + len;
	unsigned long nr_markup = 0, nr_attrs = 0;

	while (p) {
		const char *next = memchr(p + 1, '<', (size_t)(end - p - 1)),
			   *stop = next ? next : end;
		const char *gt = stop;
		unsigned long attrs = 0;

		if (++nr_markup > DOMAIN_XML_MAX_MARKUP)
			return fail(r,
				    "%s: more than %d tags: past what a domain document may hold",
				    r->path, DOMAIN_XML_MAX_MARKUP);
		while (gt > p && gt[-1] != '>')
			gt--;
		if (gt == p)
			gt = stop; /* no '>': libxml2 reads attributes to the end */
		if (p + 1 < end && p[1] != '!' && p[1] != '?')
			for (const char *c = p; (c = memchr(c, '=', (size_t)(gt - c))); c++)
				attrs++;
		if (attrs > DOMAIN_XML_MAX_ATTRS)
			return fail(r, "%s: a tag with more than %d attributes", r->path,
				    DOMAIN_XML_MAX_ATTRS);
		nr_attrs += attrs;
		if (nr_attrs > DOMAIN_XML_MAX_ATTRS_TOTAL)
			return fail(r,
				    "%s: more than %d attributes: past what a domain document "
				    "may hold",
				    r->path, DOMAIN_XML_MAX_ATTRS_TOTAL);
		p = next;
	}
	return 0;
}

/*
 * libxml2's SAX callback for <!DOCTYPE ...>, before any of its internal subset is read:
 * marks the document refused and stops the parser there, so no entity is declared, none
 * expanded and no external DTD or entity loaded.
 */
static void refuse_doctype(void *ctx, const xmlChar *name, const xmlChar *external_id,
			   const xmlChar *system_id)
{
	xmlParserCtxtPtr ctxt = ctx;

	(void)name;
	(void)external_id;
	(void)system_id;
	*(bool *)ctxt->_private = true;
	xmlStopParser(ctxt);
}

int domain_xml_load(struct vm_config *cfg, const char *path, char *err, size_t errlen)
{
	struct reader r = { .cfg = cfg, .path = path, .err = err, .errlen = errlen };
	bool saw_doctype = false;
	xmlParserCtxtPtr ctxt;
	xmlDocPtr doc;
	size_t len = 0;
	char *buf;
	int ret = 0;

	LIBXML_TEST_VERSION;
	buf = read_document(path, &len, &ret, err, errlen);
	if (!buf)
		return ret;
	ret = scan_markup(&r, buf, len);
	if (ret) {
		free(buf);
		return ret;
	}
	ctxt = xmlNewParserCtxt();
	if (!ctxt) {
		free(buf);
		return -ENOMEM;
	}
	ctxt->_private = &saw_doctype;
	ctxt->sax->internalSubset = refuse_doctype;
	/*
	 * UTF-8 whatever the document declares (scan_markup() counted its bytes as that); no
	 * network, no DTD loading, no entity substitution, libxml2's own limits on names, text
	 * and depth (never XML_PARSE_HUGE); errors come back, not on stderr.
	 */
	doc = xmlCtxtReadMemory(ctxt, buf, (int)len, path, "UTF-8",
				XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
				    XML_PARSE_IGNORE_ENC);
	free(buf);
	if (saw_doctype) {
		config_set_err(
		    err, errlen,
		    "%s: <!DOCTYPE>: refused (plugvm reads no DTD and expands no entities)", path);
		xmlFreeDoc(doc);
		xmlFreeParserCtxt(ctxt);
		return -EINVAL;
	}
	if (!doc) {
		const xmlError *e = xmlCtxtGetLastError(ctxt);
		const char *msg = e && e->message ? e->message : "unreadable";

		config_set_err(err, errlen, "%s:%d: malformed XML: %.*s", path, e ? e->line : 0,
			       (int)strcspn(msg, "\n"), msg);
		xmlFreeParserCtxt(ctxt);
		return -EINVAL;
	}
	if (!xmlDocGetRootElement(doc))
		ret = fail(&r, "%s: an empty document", path);
	else
		ret = read_domain(&r, xmlDocGetRootElement(doc));
	if (ret == -ENOMEM)
		config_set_err(err, errlen, "%s: out of memory", path);
	xmlFreeDoc(doc);
	xmlFreeParserCtxt(ctxt);
	return ret;
}
