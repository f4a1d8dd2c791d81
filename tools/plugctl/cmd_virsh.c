// SPDX-License-Identifier: MIT
/*
 * plugctl's virsh words with virsh's flags: setvcpus N (= cpu set N), vcpucount (laid out as
 * virsh prints them) and dumpxml (the running VM as a libvirt domain document that `plugvm
 * --domain` boots again: query-plugvm-domain and the CPU slots). A plugvm VM is what libvirt
 * calls a running transient domain: --live and --current act on it, --config is refused as
 * libvirt refuses it for a transient domain.
 */
#include <stdio.h>
#include <string.h>

#include "plugctl.h"

static const struct {
	const char *name;
	unsigned flag;
} virsh_options[] = {
	{ "--live", VIRSH_LIVE },
	{ "--config", VIRSH_CONFIG },
	{ "--current", VIRSH_CURRENT },
	{ "--maximum", VIRSH_MAXIMUM },
	{ "--active", VIRSH_ACTIVE },
	{ "--guest", VIRSH_GUEST },
	{ "--hotpluggable", VIRSH_HOTPLUGGABLE },
};

/* virsh's VSH_EXCLUSIVE_OPTIONS: the pairs it refuses together. */
static const struct {
	unsigned a, b;
} virsh_exclusive[] = {
	{ VIRSH_CURRENT, VIRSH_LIVE },
	{ VIRSH_CURRENT, VIRSH_CONFIG },
	{ VIRSH_ACTIVE, VIRSH_MAXIMUM },
	{ VIRSH_GUEST, VIRSH_CONFIG },
};

static const char *virsh_option_name(unsigned flag)
{
	size_t i;

	for (i = 0; i < sizeof(virsh_options) / sizeof(virsh_options[0]); i++)
		if (virsh_options[i].flag == flag)
			return virsh_options[i].name;
	return "?";
}

unsigned virsh_flags(const char *verb, char **argv, unsigned allowed, char **pos, int max_pos)
{
	unsigned flags = 0;
	int npos = 0;
	size_t i;

	for (i = 0; i <= (size_t)max_pos; i++)
		pos[i] = NULL;
	for (; *argv; argv++) {
		const char *a = *argv;

		if (a[0] != '-' || a[1] != '-') {
			if (npos == max_pos)
				die(EXIT_USAGE, "error: unexpected data '%s' (usage: %s)", a, verb);
			pos[npos++] = *argv;
			continue;
		}
		for (i = 0; i < sizeof(virsh_options) / sizeof(virsh_options[0]); i++)
			if (!strcmp(a, virsh_options[i].name) && (allowed & virsh_options[i].flag))
				break;
		if (i == sizeof(virsh_options) / sizeof(virsh_options[0]))
			die(EXIT_USAGE, "error: command '%s' doesn't support option %s", verb, a);
		flags |= virsh_options[i].flag;
	}
	for (i = 0; i < sizeof(virsh_exclusive) / sizeof(virsh_exclusive[0]); i++)
		if ((flags & virsh_exclusive[i].a) && (flags & virsh_exclusive[i].b))
			die(EXIT_USAGE, "error: Options %s and %s are mutually exclusive",
			    virsh_option_name(virsh_exclusive[i].a),
			    virsh_option_name(virsh_exclusive[i].b));
	return flags;
}

void virsh_refuse_unsupported(unsigned flags)
{
	/* libvirt's words for a transient domain (VIR_ERR_OPERATION_INVALID). */
	if (flags & VIRSH_CONFIG)
		die(EXIT_NO, "error: Requested operation is not valid: cannot change persistent "
			     "config of a transient domain (a plugvm VM has no persistent "
			     "configuration: --config is refused)");
	/* libvirt's --guest needs the QEMU guest agent, which plugvm's guest is not. */
	if (flags & VIRSH_GUEST)
		die(EXIT_NO, "error: argument unsupported: --guest needs the QEMU guest agent, "
			     "which plugvm's guest does not run");
}

/* setvcpus COUNT [--live] [--config] [--current] [--maximum] [--guest] [--hotpluggable] */
int cmd_setvcpus(struct conn *c, char **argv)
{
	char *pos[2];
	unsigned flags = virsh_flags("setvcpus", argv,
				     VIRSH_LIVE | VIRSH_CONFIG | VIRSH_CURRENT | VIRSH_MAXIMUM |
					 VIRSH_GUEST | VIRSH_HOTPLUGGABLE,
				     pos, 1);

	if (!pos[0])
		die(EXIT_USAGE, "error: command 'setvcpus' requires <count> option");
	virsh_refuse_unsupported(flags);
	/* libvirt's words (VIR_ERR_INVALID_ARG): the maximum is fixed while the VM runs. */
	if (flags & VIRSH_MAXIMUM)
		die(EXIT_NO,
		    "error: invalid argument: maximum vcpu count of a live domain can't be "
		    "modified");
	/* --live, --current or none: hot-add or hot-remove; --hotpluggable: they all are. */
	return cmd_cpu_set(c, pos);
}

#define MAX_SLOTS 1024 /* PLUGVM_MAX_CPUS */

/*
 * Possible slots (returned), how many hold a CPU; with the arrays given, which slots hold
 * one (`on`) and which of those are boot CPUs (`boot`, QOM path /machine/unattached/).
 */
static size_t count_cpus(struct conn *c, size_t *present, unsigned char *on, unsigned char *boot)
{
	struct json_object *hp = conn_cmd(c, "query-hotpluggable-cpus", NULL);
	size_t i, n = json_object_array_length(hp);

	*present = 0;
	for (i = 0; i < n; i++) {
		const char *path = get_str(json_object_array_get_idx(hp, i), "qom-path", NULL);
		size_t slot = n - 1 - i; /* listed highest first */

		if (!path)
			continue;
		(*present)++;
		if (on && slot < MAX_SLOTS) {
			on[slot] = 1;
			boot[slot] = !strncmp(path, "/machine/unattached/", 20);
		}
	}
	json_object_put(hp);
	return n;
}

/* vcpucount [--maximum | --active] [--live | --config | --current] [--guest] */
int cmd_vcpucount(struct conn *c, char **argv)
{
	char *pos[1];
	unsigned flags = virsh_flags("vcpucount", argv,
				     VIRSH_MAXIMUM | VIRSH_ACTIVE | VIRSH_LIVE | VIRSH_CONFIG |
					 VIRSH_CURRENT | VIRSH_GUEST,
				     pos, 0);
	size_t present, n;

	virsh_refuse_unsupported(flags);
	n = count_cpus(c, &present, NULL, NULL);
	if (json_out) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "maximum", json_object_new_int((int)n));
		json_object_object_add(o, "current", json_object_new_int((int)present));
		print_json(o);
		json_object_put(o);
		return 0;
	}
	/* Any flag: one number, as virsh prints it (--live and --current: the running VM's). */
	if (flags) {
		printf("%zu\n", flags & VIRSH_MAXIMUM ? n : present);
		return 0;
	}
	/* virsh vcpucount DOM, for a running transient domain: the live values. */
	printf("%-12s %-12s %3zu\n", "maximum", "live", n);
	printf("%-12s %-12s %3zu\n", "current", "live", present);
	return 0;
}

/* `s` as XML character data / attribute value. */
static void xml_text(const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", stdout);
			break;
		case '<':
			fputs("&lt;", stdout);
			break;
		case '>':
			fputs("&gt;", stdout);
			break;
		case '\'':
			fputs("&apos;", stdout);
			break;
		case '"':
			fputs("&quot;", stdout);
			break;
		default:
			putchar(*s);
		}
	}
}

int cmd_dumpxml(struct conn *c, char **argv)
{
	struct json_object *d = conn_cmd(c, "query-plugvm-domain", NULL);
	const char *name = get_str(d, "name", NULL), *uuid = get_str(d, "uuid", NULL);
	const char *kernel = get_str(d, "kernel", NULL), *cmdline = get_str(d, "cmdline", NULL);
	const char *qmp = get_str(d, "qmp", NULL), *console = get_str(d, "console-file", NULL);
	int64_t mem = get_i64(d, "memory-bytes");
	static unsigned char on[MAX_SLOTS], boot[MAX_SLOTS];
	size_t present, n, i, nboot;

	(void)argv;
	n = count_cpus(c, &present, on, boot);
	if (n > MAX_SLOTS)
		die(EXIT_NO, "%zu CPU slots: more than %d", n, MAX_SLOTS);
	/* libvirt boots vCPUs 0..K-1 (not hotpluggable); every other present one is hot-added. */
	for (nboot = 0; nboot < n && on[nboot] && boot[nboot]; nboot++)
		;
	printf("<domain type='kvm'>\n  <name>");
	xml_text(name ? name : "plugvm");
	printf("</name>\n");
	if (uuid) {
		printf("  <uuid>");
		xml_text(uuid);
		printf("</uuid>\n");
	}
	if (qmp) {
		printf("  <metadata>\n    <plugvm:plugvm "
		       "xmlns:plugvm='https://plugvm.dev/xmlns/domain/1'>\n"
		       "      <plugvm:qmp path='unix:");
		xml_text(qmp);
		printf("'/>\n    </plugvm:plugvm>\n  </metadata>\n");
	}
	printf("  <memory unit='b'>%lld</memory>\n", (long long)mem);
	printf("  <vcpu placement='static' current='%zu'>%zu</vcpu>\n  <vcpus>\n", present, n);
	for (i = 0; i < n; i++) {
		printf("    <vcpu id='%zu' enabled='%s' hotpluggable='%s'", i, on[i] ? "yes" : "no",
		       i < nboot ? "no" : "yes");
		if (on[i])
			printf(" order='%zu'", i + 1);
		printf("/>\n");
	}
	printf("  </vcpus>\n  <os>\n    <type arch='x86_64' machine='pc'>hvm</type>\n"
	       "    <kernel>");
	xml_text(kernel);
	printf("</kernel>\n    <cmdline>");
	xml_text(cmdline);
	printf("</cmdline>\n  </os>\n  <features>\n    <acpi/>\n    <apic/>\n  </features>\n");
	printf(
	    "  <cpu>\n    <topology sockets='%d' dies='%d' cores='%d' threads='%d'/>\n  </cpu>\n",
	    get_int(d, "topology", "sockets"), get_int(d, "topology", "dies"),
	    get_int(d, "topology", "cores"), get_int(d, "topology", "threads"));
	printf("  <on_poweroff>destroy</on_poweroff>\n  <on_reboot>destroy</on_reboot>\n"
	       "  <on_crash>destroy</on_crash>\n  <devices>\n");
	if (console) {
		printf("    <serial type='file'>\n      <source path='");
		xml_text(console);
		printf("'/>\n      <target port='0'/>\n    </serial>\n");
	} else {
		printf("    <serial type='stdio'>\n      <target port='0'/>\n    </serial>\n");
	}
	printf("  </devices>\n</domain>\n");
	json_object_put(d);
	return 0;
}
