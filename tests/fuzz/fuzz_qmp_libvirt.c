// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: vmm/control/control_libvirt.c and control_probe.c, the commands libvirt
 * sends a running domain and its capabilities probe, run by a negotiated QMP session over a VM whose slots 0-1 hold CPUs (slot 1 with
 * an id). The input is what a client sends after qmp_capabilities, in pieces whose sizes
 * come from its first byte. Every output line must be one JSON object, and the actions
 * set-action leaves are ones plugvm has.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/control/control_libvirt.h"
#include "vmm/control/control_probe.h"
#include "vmm/kvm.h"
#include "vmm/cpus.h"
#include "vmm/vm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

bool cpus_present(const struct cpus *c, unsigned slot)
{
	(void)c;
	return slot < 2;
}

const char *cpus_id(const struct cpus *c, unsigned slot)
{
	(void)c;
	return slot == 1 ? "vcpu1" : NULL;
}

/* query-kvm's look at /dev/kvm: a fixed answer, so that a run does not depend on the host. */
int kvm_probe(const char *path, unsigned *max_vcpus)
{
	(void)path;
	*max_vcpus = 1024;
	return 0;
}

/* Both tables in one, as control.c merges them. */
static struct qmp_command cmds[128];

static void merge(void)
{
	const struct qmp_command *tables[] = { control_libvirt_commands, control_probe_commands };
	size_t n = 0, t;

	for (t = 0; t < 2; t++)
		for (const struct qmp_command *c = tables[t]; c->name && n < 127; c++)
			cmds[n++] = *c;
}

/* Each complete line of the output must parse as a JSON object. */
static void check_output(struct qmp_session *c)
{
	size_t len;
	const char *out = qmp_session_output(c, &len), *nl;

	if (len > QMP_MAX_OUTPUT)
		abort();
	while (len && (nl = memchr(out, '\n', len)) != NULL) {
		size_t n = (size_t)(nl - out) + 1;
		char *line = strndup(out, n);
		struct json_object *o = json_tokener_parse(line);

		if (!o || !json_object_is_type(o, json_type_object))
			abort();
		json_object_put(o);
		free(line);
		qmp_session_consume(c, n);
		out = qmp_session_output(c, &len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char hello[] = "{\"execute\": \"qmp_capabilities\"}\r\n";
	struct vm_config cfg = { .nr_cpus = 1, .max_cpus = 4, .console = CONSOLE_STDIO };
	struct vm vm = { .cfg = &cfg };
	struct qmp_server *s;
	struct qmp_session *c;
	size_t step = size ? (size_t)data[0] % 64 + 1 : 1, off = size ? 1 : 0;

	if (!cmds[0].name)
		merge();
	vm.kvm.dev_fd = -1;
	s = qmp_server_create(cmds, &vm, "fuzz", 0, 0, 0);
	c = s ? qmp_session_create(s) : NULL;
	vm.qmp = s;
	if (!c) {
		qmp_server_destroy(s);
		return 0;
	}
	qmp_session_input(c, hello, sizeof(hello) - 1);
	check_output(c);
	while (off < size && !qmp_session_closing(c)) {
		size_t n = size - off < step ? size - off : step;

		qmp_session_input(c, (const char *)data + off, n);
		check_output(c);
		off += n;
	}
	if ((vm.on_poweroff != ACTION_EXIT && vm.on_poweroff != ACTION_PAUSE) ||
	    (vm.on_reset != ACTION_EXIT && vm.on_reset != ACTION_RESET))
		abort();
	qmp_session_destroy(c);
	qmp_server_destroy(s);
	return 0;
}
