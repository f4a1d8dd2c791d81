// SPDX-License-Identifier: MIT
/* The control socket's commands: QEMU's shapes for status, version and CPUs, and quit. */
#include "control.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exitcode.h"
#include "log.h"
#include "plugvm_abi.h"
#include "qmp.h"
#include "vcpu.h"
#include "version.h"
#include "vm.h"

#define CPU_TYPE "host-x86_64-cpu" /* QEMU's <model>-x86_64-cpu: plugvm passes the host's */

/*
 * QEMU's topology properties of the vCPU with APIC ID `id`. plugvm's APIC IDs are dense
 * (0 .. maxcpus-1), so the ids are the index split by the topology, threads innermost.
 */
static struct json_object *cpu_props(const struct vm_config *cfg, unsigned id)
{
	struct json_object *p = json_object_new_object();
	unsigned threads = cfg->topo.threads, cores = cfg->topo.cores, dies = cfg->topo.dies;

	json_object_object_add(p, "socket-id",
			       json_object_new_int((int)(id / (threads * cores * dies))));
	if (dies > 1)
		json_object_object_add(p, "die-id",
				       json_object_new_int((int)(id / (threads * cores) % dies)));
	json_object_object_add(p, "core-id", json_object_new_int((int)(id / threads % cores)));
	json_object_object_add(p, "thread-id", json_object_new_int((int)(id % threads)));
	return p;
}

static void qom_path(char *buf, size_t len, unsigned id)
{
	snprintf(buf, len, "/machine/unattached/device[%u]", id);
}

static struct json_object *query_status(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct json_object *r = json_object_new_object();
	bool stopping = vm_stopping(ctx);

	(void)args;
	(void)err;
	json_object_object_add(r, "status",
			       json_object_new_string(stopping ? "shutdown" : "running"));
	json_object_object_add(r, "singlestep", json_object_new_boolean(false));
	json_object_object_add(r, "running", json_object_new_boolean(!stopping));
	return r;
}

static struct json_object *query_version(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct json_object *r = json_object_new_object(), *v = json_object_new_object();

	(void)ctx;
	(void)args;
	(void)err;
	json_object_object_add(v, "micro", json_object_new_int(PLUGVM_VERSION_MICRO));
	json_object_object_add(v, "minor", json_object_new_int(PLUGVM_VERSION_MINOR));
	json_object_object_add(v, "major", json_object_new_int(PLUGVM_VERSION_MAJOR));
	json_object_object_add(r, "qemu", v);
	json_object_object_add(r, "package", json_object_new_string("plugvm " PLUGVM_VERSION));
	return r;
}

static struct json_object *query_cpus_fast(void *ctx, struct json_object *args,
					   struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *r = json_object_new_array();
	unsigned i, index = 0;
	char path[64];

	(void)args;
	(void)err;
	for (i = 0; i < vm->cfg->max_cpus; i++) {
		struct vcpu *v = &vm->vcpus[i];
		struct json_object *c;

		if (atomic_load(&v->state) != VCPU_RUNNING)
			continue;
		c = json_object_new_object();
		qom_path(path, sizeof(path), i);
		json_object_object_add(c, "thread-id", json_object_new_int(v->tid));
		json_object_object_add(c, "props", cpu_props(vm->cfg, i));
		json_object_object_add(c, "qom-path", json_object_new_string(path));
		json_object_object_add(c, "cpu-index", json_object_new_int((int)index++));
		json_object_object_add(c, "target", json_object_new_string("x86_64"));
		json_object_array_add(r, c);
	}
	return r;
}

static struct json_object *query_hotpluggable_cpus(void *ctx, struct json_object *args,
						   struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *r = json_object_new_array();
	unsigned i;
	char path[64];

	(void)args;
	(void)err;
	/* Highest first, as QEMU lists them; present ones carry their qom-path. */
	for (i = vm->cfg->max_cpus; i-- > 0;) {
		struct json_object *c = json_object_new_object();

		json_object_object_add(c, "props", cpu_props(vm->cfg, i));
		json_object_object_add(c, "vcpus-count", json_object_new_int(1));
		if (atomic_load(&vm->vcpus[i].state) == VCPU_RUNNING) {
			qom_path(path, sizeof(path), i);
			json_object_object_add(c, "qom-path", json_object_new_string(path));
		}
		json_object_object_add(c, "type", json_object_new_string(CPU_TYPE));
		json_object_array_add(r, c);
	}
	return r;
}

static struct json_object *cmd_quit(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;

	(void)args;
	(void)err;
	atomic_store(&vm->quit_requested, true);
	vm_request_stop(vm, PLUGVM_EXIT_OK);
	return NULL;
}

static struct json_object *query_commands(void *ctx, struct json_object *args,
					  struct qmp_error *err);

static const struct qmp_command commands[] = {
	{ "query-status", query_status, NULL },
	{ "query-version", query_version, NULL },
	{ "query-commands", query_commands, NULL },
	{ "query-cpus-fast", query_cpus_fast, NULL },
	{ "query-hotpluggable-cpus", query_hotpluggable_cpus, NULL },
	{ "quit", cmd_quit, NULL },
	{ NULL, NULL, NULL },
};

static struct json_object *query_commands(void *ctx, struct json_object *args,
					  struct qmp_error *err)
{
	struct json_object *r = json_object_new_array(), *c;
	const struct qmp_command *cmd;

	(void)ctx;
	(void)args;
	(void)err;
	c = json_object_new_object();
	json_object_object_add(c, "name", json_object_new_string("qmp_capabilities"));
	json_object_array_add(r, c);
	for (cmd = commands; cmd->name; cmd++) {
		c = json_object_new_object();
		json_object_object_add(c, "name", json_object_new_string(cmd->name));
		json_object_array_add(r, c);
	}
	return r;
}

int control_start(struct vm *vm)
{
	const char *path = vm->cfg->qmp_path, *dir = getenv("XDG_RUNTIME_DIR");
	char fallback[CONFIG_MAX_QMP_PATH + 1];
	int err;

	if (vm->cfg->qmp_disabled)
		return 0;
	if (!path) {
		/* One per VM, like a pid file; announced so that plugctl users can find it. */
		if (!dir || !*dir || strlen(dir) > sizeof(fallback) - 32)
			dir = "/tmp";
		snprintf(fallback, sizeof(fallback), "%s/plugvm-%d.qmp", dir, (int)getpid());
		path = fallback;
	}
	vm->qmp = qmp_server_create(commands, vm, "plugvm " PLUGVM_VERSION, PLUGVM_VERSION_MAJOR,
				    PLUGVM_VERSION_MINOR, PLUGVM_VERSION_MICRO);
	if (!vm->qmp) {
		log_error("qmp: out of memory");
		return -ENOMEM;
	}
	err = qmp_server_listen(vm->qmp, path);
	if (err) {
		qmp_server_destroy(vm->qmp);
		vm->qmp = NULL;
		return err;
	}
	/* Not a warning, but shown unless --quiet: users need the path to connect. */
	if (!vm->cfg->qmp_path && log_get_level() >= LOG_WARN)
		fprintf(stderr, "plugvm: QMP socket: %s\n", path);
	return 0;
}

void control_stop(struct vm *vm, int status)
{
	struct json_object *data;
	const char *reason;
	bool guest = false;

	if (!vm->qmp)
		return;
	if (atomic_load(&vm->quit_requested)) {
		reason = "host-qmp-quit";
	} else if (status >= PLUGVM_EXIT_SIGNAL_BASE) {
		reason = "host-signal";
	} else if (status == PLUGVM_EXIT_INTERNAL || status == PLUGVM_EXIT_SETUP) {
		reason = "host-error";
	} else if (status == PLUGVM_EXIT_GUEST_CRASH) {
		reason = "guest-panic";
		guest = true;
	} else {
		reason = "guest-shutdown";
		guest = true;
	}
	data = json_object_new_object();
	json_object_object_add(data, "guest", json_object_new_boolean(guest));
	json_object_object_add(data, "reason", json_object_new_string(reason));
	qmp_server_event(vm->qmp, "SHUTDOWN", data);
	qmp_server_flush(vm->qmp, 1000);
	qmp_server_destroy(vm->qmp);
	vm->qmp = NULL;
}
