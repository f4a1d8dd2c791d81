// SPDX-License-Identifier: MIT
/*
 * The <domain> element and its plain children of a libvirt document (domain_xml.h,
 * docs/domain-xml.md): <name>, <uuid>, <memory>, <vcpu>, <os>, <devices>, <features>, the
 * lifecycle actions and <metadata>; domain_xml_cpus.c reads the CPU and real-time elements.
 * Every element is read, refused with an error naming it, or warned about once.
 */
#include "domain_xml.h"
#include "domain_xml_reader.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xml_lib.h"

#include "../log.h"
#include "plugvm_abi.h"

/* One line into the caller's err; returns -EINVAL. */
__attribute__((format(printf, 2, 3))) int domain_xml_fail(struct domain_xml_reader *r,
							  const char *fmt, ...)
{
	va_list ap;

	if (r->err && r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err, r->errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* The element's text with surrounding blanks trimmed, malloc'd; NULL only without memory. */
char *domain_xml_text(const xmlNode *n)
{
	xmlChar *c = xml_lib.node_get_content(n);
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
	xml_free(c);
	return out;
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
static int read_memory(struct domain_xml_reader *r, const xmlNode *n, unsigned long long *bytes)
{
	char *unit = attr(n, "unit"), *v = domain_xml_text(n);
	int ret = 0;

	if (!v)
		ret = -ENOMEM;
	else if (domain_xml_parse_size(v, unit, bytes))
		ret = domain_xml_fail(
		    r,
		    "%s: <%s unit='%s'>%s</%s>: not a size (a number, unit b, KiB, MiB, "
		    "GiB, TiB, KB, MB, GB or TB)",
		    r->path, n->name, unit ? unit : "KiB", v, n->name);
	else if (*bytes < CONFIG_MIN_MEM_BYTES || *bytes > CONFIG_MAX_MEM_BYTES)
		ret = domain_xml_fail(r, "%s: <%s>: %llu bytes is outside %lluM..%lluG", r->path,
				      n->name, *bytes, CONFIG_MIN_MEM_BYTES >> 20,
				      CONFIG_MAX_MEM_BYTES >> 30);
	xml_free(unit);
	free(v);
	return ret;
}

static int read_vcpu(struct domain_xml_reader *r, const xmlNode *n)
{
	char *placement = attr(n, "placement"), *current = attr(n, "current"),
	     *cpuset = attr(n, "cpuset"), *v = domain_xml_text(n);
	unsigned long long max = 0, cur;
	int ret = 0;

	if (!v) {
		ret = -ENOMEM;
		goto out;
	}
	if (parse_uint(v, PLUGVM_MAX_CPUS, &max) || !max) {
		ret = domain_xml_fail(r, "%s: <vcpu>%s</vcpu>: not a vCPU count in 1..%d", r->path,
				      v, PLUGVM_MAX_CPUS);
		goto out;
	}
	cur = max;
	if (current && (parse_uint(current, PLUGVM_MAX_CPUS, &cur) || !cur)) {
		ret = domain_xml_fail(r, "%s: <vcpu current='%s'>: not a vCPU count", r->path,
				      current);
		goto out;
	}
	if (cur > max) {
		ret = domain_xml_fail(
		    r,
		    "%s: <vcpu current='%llu'>%llu</vcpu>: current is more than the "
		    "maximum",
		    r->path, cur, max);
		goto out;
	}
	if (cpuset)
		log_warn("%s: <vcpu cpuset='%s'>: ignored (pin vCPUs with <cputune><vcpupin>)",
			 r->path, cpuset);
	if (placement && strcmp(placement, "static"))
		log_warn("%s: <vcpu placement='%s'>: plugvm has no NUMA placement; taken as "
			 "static",
			 r->path, placement);
	r->cfg->nr_cpus = (unsigned)cur;
	r->cfg->max_cpus = (unsigned)max;
	r->cfg->topo = (struct smp_topology){ 1, 1, (unsigned)max, 1 };
out:
	xml_free(placement);
	xml_free(current);
	xml_free(cpuset);
	free(v);
	return ret;
}

int domain_xml_yes_no(struct domain_xml_reader *r, const xmlNode *n, const char *name, bool dflt,
		      bool *out)
{
	char *v = attr(n, name);
	int ret = 0;

	*out = dflt;
	if (v && !strcmp(v, "yes"))
		*out = true;
	else if (v && !strcmp(v, "no"))
		*out = false;
	else if (v)
		ret = domain_xml_fail(r, "%s: <%s %s='%s'>: not yes or no", r->path, n->name, name,
				      v);
	xml_free(v);
	return ret;
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
static int read_name(struct domain_xml_reader *r, const xmlNode *n)
{
	char *v = domain_xml_text(n);
	size_t len = v ? strlen(v) : 0;
	bool newline = len && memchr(v, '\n', len);

	if (!v)
		return -ENOMEM;
	if (len && len <= DOMAIN_XML_MAX_NAME && !newline)
		return set_str(&r->cfg->name, v);
	free(v);
	return domain_xml_fail(
	    r, "%s: <name>: %zu bytes%s: not a domain name (1..%d bytes, one line)", r->path, len,
	    newline && len <= DOMAIN_XML_MAX_NAME ? " with a newline" : "", DOMAIN_XML_MAX_NAME);
}

/* <uuid>: 32 hex digits and dashes, at most DOMAIN_XML_MAX_UUID bytes (libvirt's buffer). */
static int read_uuid(struct domain_xml_reader *r, const xmlNode *n)
{
	char *v = domain_xml_text(n);
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
		return domain_xml_fail(r,
				       "%s: <uuid>: not a UUID (32 hex digits, as "
				       "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)",
				       r->path);
	}
	return set_str(&r->cfg->uuid, v);
}

static int read_os(struct domain_xml_reader *r, const xmlNode *os)
{
	const xmlNode *n;

	for (n = os->children; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		if (is(n, "type")) {
			char *arch = attr(n, "arch"), *machine = attr(n, "machine"),
			     *t = domain_xml_text(n);
			int ret = 0;

			if (!t)
				ret = -ENOMEM;
			else if (strcmp(t, "hvm"))
				ret = domain_xml_fail(
				    r, "%s: <os><type>%s</type>: plugvm runs hvm guests only",
				    r->path, t);
			else if (arch && strcmp(arch, "x86_64"))
				ret = domain_xml_fail(
				    r, "%s: <os><type arch='%s'>: plugvm runs x86_64 only", r->path,
				    arch);
			else if (machine && config_parse_machine_type(machine, &r->cfg->machine)) {
				r->cfg->machine = MACHINE_PC;
				log_warn("%s: <os><type machine='%s'>: plugvm presents QEMU's pc "
					 "(pc-i440fx-*) or q35 (pc-q35-*): taken as pc",
					 r->path, machine);
			}
			xml_free(arch);
			xml_free(machine);
			free(t);
			if (ret)
				return ret;
		} else if (is(n, "kernel")) {
			char *k = domain_xml_text(n);

			if (k && (!*k || strlen(k) >= PATH_MAX)) {
				size_t len = strlen(k);

				free(k);
				return len ? domain_xml_fail(
						 r,
						 "%s: <os><kernel>: %zu bytes, longer than a file "
						 "name may be (%d)",
						 r->path, len, PATH_MAX - 1)
					   : domain_xml_fail(r, "%s: <os><kernel>: empty", r->path);
			}
			if (set_str(&r->cfg->kernel_path, k))
				return -ENOMEM;
			r->saw_kernel = true;
		} else if (is(n, "cmdline")) {
			char *c = domain_xml_text(n);

			if (c && strlen(c) > CONFIG_MAX_CMDLINE) {
				free(c);
				return domain_xml_fail(r, "%s: <os><cmdline>: longer than %d bytes",
						       r->path, CONFIG_MAX_CMDLINE);
			}
			if (set_str(&r->cfg->cmdline, c))
				return -ENOMEM;
		} else if (is(n, "boot") || is(n, "bootmenu") || is(n, "smbios") || is(n, "bios")) {
			log_warn("%s: <os><%s>: ignored (plugvm boots <kernel> directly)", r->path,
				 n->name);
		} else {
			return domain_xml_fail(
			    r,
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
static int read_console(struct domain_xml_reader *r, const xmlNode *n)
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
			ret =
			    domain_xml_fail(r, "%s: <%s type='file'>: needs <source path='FILE'/>",
					    r->path, n->name);
		else if (strlen(path) >= PATH_MAX)
			ret = domain_xml_fail(
			    r, "%s: <%s><source path=...>: longer than a file name may be (%d)",
			    r->path, n->name, PATH_MAX - 1);
		else if (r->cfg->console_path && strcmp(r->cfg->console_path, path))
			ret = domain_xml_fail(
			    r,
			    "%s: <%s type='file'>: %s, but the console already goes to %s "
			    "(plugvm has one console)",
			    r->path, n->name, path, r->cfg->console_path);
		else if (!r->cfg->console_path && !(r->cfg->console_path = strdup(path)))
			ret = -ENOMEM;
	} else {
		ret = domain_xml_fail(
		    r,
		    "%s: <%s type='%s'>: not supported by plugvm (the console is its "
		    "stdio, type='stdio', or a file, type='file')",
		    r->path, n->name, type);
	}
	xml_free(type);
	xml_free(path);
	return ret;
}

/*
 * <devices> children plugvm need not act on: the guest does not depend on them. Accepted in
 * silence when they say there is none (the value of `none_attr`, or `none_value` for it),
 * as libvirt's dumpxml writes them for a machine without them; otherwise warned about.
 */
static const struct {
	const char *name, *why;
	const char *none_attr, *none_value;
} devices_ignored[] = {
	{ "emulator", "the emulator is plugvm itself", NULL, NULL },
	{ "controller", "plugvm has no USB, IDE, SATA or PCI devices behind it", "model", "none" },
	{ "input", "no keyboard or mouse: the console is the guest's input", NULL, NULL },
	{ "video", "no display", NULL, NULL },
	{ "audio", "no sound device", "type", "none" },
	{ "sound", "no sound device", NULL, NULL },
	{ "memballoon", "no balloon: the guest has all of <memory>", "model", "none" },
	{ "channel", "the guest runs no QEMU agent", NULL, NULL },
	{ "watchdog", "no watchdog device: the guest's watchdog is its own", NULL, NULL },
};

/* <controller type='pci' model='pci-root|pcie-root'/>: the root bus every machine has. */
static bool is_root_bus(const xmlNode *n)
{
	char *type = attr(n, "type"), *model = attr(n, "model");
	bool root = type && model && !strcmp(type, "pci") &&
		    (!strcmp(model, "pci-root") || !strcmp(model, "pcie-root"));

	xml_free(type);
	xml_free(model);
	return root;
}

/* A <devices> child in devices_ignored: its warning, or none when it names no device. */
static void ignore_device(struct domain_xml_reader *r, const xmlNode *n, size_t i)
{
	char *v = devices_ignored[i].none_attr ? attr(n, devices_ignored[i].none_attr) : NULL;
	bool none = (v && !strcmp(v, devices_ignored[i].none_value)) || is(n, "emulator") ||
		    (is(n, "controller") && is_root_bus(n));

	if (!none && v)
		log_warn("%s: <devices><%s %s='%s'>: ignored (%s)", r->path, n->name,
			 devices_ignored[i].none_attr, v, devices_ignored[i].why);
	else if (!none)
		log_warn("%s: <devices><%s>: ignored (%s)", r->path, n->name,
			 devices_ignored[i].why);
	xml_free(v);
}

static int read_devices(struct domain_xml_reader *r, const xmlNode *devices)
{
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
		for (i = 0; i < sizeof(devices_ignored) / sizeof(devices_ignored[0]); i++)
			if (is(n, devices_ignored[i].name))
				break;
		if (i < sizeof(devices_ignored) / sizeof(devices_ignored[0])) {
			ignore_device(r, n, i);
			continue;
		}
		/* A disk, a NIC, a display, a host device: what the guest would use, refused. */
		return domain_xml_fail(
		    r,
		    "%s: <devices><%s>: not supported by plugvm (its devices are the "
		    "console, the ACPI CPU hotplug block and the virtio consoles): remove it",
		    r->path, n->name);
	}
	return 0;
}

static int read_features(struct domain_xml_reader *r, const xmlNode *features)
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
static int read_lifecycle(struct domain_xml_reader *r, const xmlNode *n)
{
	char *v = domain_xml_text(n);
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
		ret = domain_xml_fail(r, "%s: <%s>%s</%s>: plugvm always ends the VM (destroy)",
				      r->path, n->name, v, n->name);
	free(v);
	return ret;
}

/*
 * <metadata><plugvm:plugvm xmlns:plugvm=DOMAIN_XML_PLUGVM_NS>: <qmp path=/>, <chaos spec=/>,
 * <autoscale spec=/>.
 */
static int read_metadata(struct domain_xml_reader *r, const xmlNode *metadata)
{
	const xmlNode *own, *n;
	int ret;

	for (own = metadata->children; own; own = own->next) {
		if (own->type != XML_ELEMENT_NODE || !own->ns ||
		    strcmp((const char *)own->ns->href, DOMAIN_XML_PLUGVM_NS))
			continue; /* other applications' metadata */
		if (!is(own, "plugvm"))
			return domain_xml_fail(
			    r, "%s: <metadata>: <%s> in plugvm's namespace (want <plugvm>)",
			    r->path, own->name);
		for (n = own->children; n; n = n->next) {
			char *v;

			if (n->type != XML_ELEMENT_NODE)
				continue;
			if (is(n, "qmp")) {
				v = attr(n, "path");
				ret = v ? config_parse_qmp(r->cfg, v, r->err, r->errlen)
					: domain_xml_fail(
					      r, "%s: <plugvm:qmp>: needs path='unix:PATH|none'",
					      r->path);
			} else if (is(n, "chaos")) {
				v = attr(n, "spec");
				ret = config_parse_chaos(&r->cfg->chaos, v, r->err, r->errlen);
			} else if (is(n, "autoscale")) {
				v = attr(n, "spec");
				ret = v ? config_parse_autoscale(&r->cfg->autoscale, v, r->err,
								 r->errlen)
					: domain_xml_fail(r,
							  "%s: <plugvm:autoscale>: needs "
							  "spec='on|off|KEY=VALUE,...'",
							  r->path);
			} else {
				return domain_xml_fail(
				    r,
				    "%s: <metadata><plugvm:%s>: unknown (plugvm:qmp, "
				    "plugvm:chaos, plugvm:autoscale)",
				    r->path, n->name);
			}
			xml_free(v);
			if (ret)
				return ret == -ENOMEM ? ret : -EINVAL;
		}
	}
	return 0;
}

int domain_xml_read_domain(struct domain_xml_reader *r, const xmlNode *root)
{
	const xmlNode *n, *vcpus = NULL;
	unsigned long long mem = 0, cur = 0;
	bool have_vcpu = false;
	char *type;
	int ret = 0;

	if (!is(root, "domain"))
		return domain_xml_fail(r, "%s: the root element is <%s>, not a libvirt <domain>",
				       r->path, root->name);
	type = attr(root, "type");
	if (!type || strcmp(type, "kvm"))
		ret = domain_xml_fail(r, "%s: <domain type='%s'>: plugvm runs type='kvm' domains",
				      r->path, type ? type : "");
	xml_free(type);
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
			ret = domain_xml_read_memory_backing(r, n);
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
		else if (is(n, "seclabel"))
			log_warn("%s: <seclabel>: ignored (plugvm confines itself with its seccomp "
				 "sandbox; a label is its launcher's to apply)",
				 r->path);
		else
			ret = domain_xml_fail(
			    r, "%s: <%s>: not supported by plugvm (docs/domain-xml.md)", r->path,
			    n->name);
	}
	if (ret)
		return ret;
	if (!have_vcpu)
		return domain_xml_fail(r, "%s: no <vcpu>", r->path);
	for (n = root->children; n && !ret; n = n->next)
		if (is(n, "cpu"))
			ret = domain_xml_read_cpu(r, n);
		else if (is(n, "cputune"))
			ret = domain_xml_read_cputune(r, n);
	if (ret)
		return ret;
	if (!mem)
		return domain_xml_fail(r, "%s: no <memory>", r->path);
	if (cur && cur != mem)
		log_warn("%s: <currentMemory> below <memory>: plugvm has no balloon; the guest "
			 "gets all of <memory>",
			 r->path);
	r->cfg->mem_bytes = mem;
	if (vcpus && (ret = domain_xml_read_vcpus(r, vcpus)))
		return ret;
	if (!r->saw_kernel)
		return domain_xml_fail(
		    r,
		    "%s: no <os><kernel>: plugvm boots a kernel directly (the guest "
		    "ELF, e.g. build/guest.elf)",
		    r->path);
	return 0;
}
