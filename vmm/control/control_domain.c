// SPDX-License-Identifier: MIT
/* query-plugvm-domain (see control_domain.h). Main thread, like every QMP command. */
#include "control_domain.h"

#include <limits.h>
#include <stdlib.h>

#include <json-c/json.h>

#include "../config/config.h"
#include "../vm.h"

static void add_str(struct json_object *o, const char *key, const char *val)
{
	if (val)
		json_object_object_add(o, key, json_object_new_string(val));
}

static struct json_object *query_domain(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	const struct vm_config *cfg = vm->cfg;
	struct json_object *r = json_object_new_object(), *topo = json_object_new_object();

	(void)args;
	(void)err;
	add_str(r, "name", cfg->name);
	add_str(r, "uuid", cfg->uuid);
	json_object_object_add(r, "memory-bytes", json_object_new_int64((int64_t)cfg->mem_bytes));
	json_object_object_add(r, "boot-cpus", json_object_new_int((int)cfg->nr_cpus));
	json_object_object_add(r, "max-cpus", json_object_new_int((int)cfg->max_cpus));
	json_object_object_add(topo, "sockets", json_object_new_int((int)cfg->topo.sockets));
	json_object_object_add(topo, "dies", json_object_new_int((int)cfg->topo.dies));
	json_object_object_add(topo, "cores", json_object_new_int((int)cfg->topo.cores));
	json_object_object_add(topo, "threads", json_object_new_int((int)cfg->topo.threads));
	json_object_object_add(r, "topology", topo);
	/*
	 * Absolute, as libvirt's schema wants it (resolved at start: the sandboxed main thread
	 * reads no links); the path as given if it could not be resolved.
	 */
	add_str(r, "kernel", vm->kernel_abs ? vm->kernel_abs : cfg->kernel_path);
	add_str(r, "cmdline", cfg->cmdline);
	add_str(r, "qmp", cfg->qmp_path);
	add_str(r, "console-file", cfg->console_path);
	return r;
}

const struct qmp_command control_domain_commands[] = {
	{ "query-plugvm-domain", query_domain, NULL },
	{ NULL, NULL, NULL },
};
