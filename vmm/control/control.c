// SPDX-License-Identifier: MIT
/*
 * The control socket's commands: QEMU's shapes for status, version and CPUs, and quit; and
 * the vCPU lifecycle's events (cpus.h) as QMP events. QMP in, calls out; events in, QMP out:
 * what a CPU is and how it changes is cpus.c's.
 */
#include "control.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "control_agent.h"
#include "control_domain.h"
#include "control_latency.h"
#include "control_stats.h"
#include "../cpus.h"
#include "../devices/acpi_pm.h"
#include "../exitcode.h"
#include "../log.h"
#include "qmp.h"
#include "../version.h"
#include "../vm.h"

/*
 * gcc 12's -fanalyzer loses heap pointers stored through the VM reached from the commands'
 * void *ctx and reports them as leaked; the ASan run of the integration tests (make check)
 * checks these paths for real leaks.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif

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

/* The QOM path of the CPU in `slot` (QEMU's: boot CPUs unattached, added ones peripheral). */
static void cpu_path(unsigned slot, const char *id, char *buf, size_t len)
{
	if (id)
		snprintf(buf, len, "/machine/peripheral/%s", id);
	else
		snprintf(buf, len, "/machine/unattached/device[%u]", slot);
}

void control_cpu_path(struct vm *vm, unsigned slot, char *buf, size_t len)
{
	cpu_path(slot, cpus_id(vm->cpus, slot), buf, len);
}

/* The QOM path of the present CPU in `slot`, as a JSON string. */
static struct json_object *qom_path(struct vm *vm, unsigned slot)
{
	char path[96];

	control_cpu_path(vm, slot, path, sizeof(path));
	return json_object_new_string(path);
}

/* DEVICE_DELETED, DEVICE_UNPLUG_GUEST_ERROR: the device's id (if any) and path. */
static struct json_object *device_data(const struct cpus_event *e)
{
	struct json_object *data = json_object_new_object();
	char path[96];

	cpu_path(e->slot, e->id, path, sizeof(path));
	if (e->id)
		json_object_object_add(data, "device", json_object_new_string(e->id));
	json_object_object_add(data, "path", json_object_new_string(path));
	return data;
}

static struct json_object *ost_data(const struct cpus_event *e)
{
	struct json_object *data = json_object_new_object(), *info = json_object_new_object();
	char s[16];

	snprintf(s, sizeof(s), "%u", e->slot);
	json_object_object_add(info, "source", json_object_new_int64(e->ost_source));
	json_object_object_add(info, "status", json_object_new_int64(e->ost_status));
	json_object_object_add(info, "slot", json_object_new_string(s));
	json_object_object_add(info, "slot-type", json_object_new_string("CPU"));
	json_object_object_add(data, "info", info);
	return data;
}

static struct json_object *report_data(const struct cpus_event *e)
{
	struct json_object *data = json_object_new_object();

	json_object_object_add(data, "slot", json_object_new_int((int)e->slot));
	json_object_object_add(data, "result", json_object_new_int(e->result));
	json_object_object_add(data, "guest-ns", json_object_new_int64((int64_t)e->guest_ns));
	/* From the device_add / device_del that asked for it, if one did. */
	if (e->requested)
		json_object_object_add(data, "host-ns", json_object_new_int64((int64_t)e->host_ns));
	return data;
}

/*
 * A lifecycle event as QMP. OST and REPORT come from vCPU threads, at the guest's pace:
 * rate-limited per slot (one `rep outsl` is as many _OST writes as it has words).
 */
static void cpus_event(void *opaque, const struct cpus_event *e)
{
	struct vm *vm = opaque;

	if (!vm->qmp)
		return; /* the socket closed at the VM's end */
	switch (e->type) {
	case CPUS_EVENT_OST:
		qmp_server_event_key(vm->qmp, 0, "ACPI_DEVICE_OST", e->slot, ost_data(e));
		break;
	case CPUS_EVENT_REPORT:
		qmp_server_event_key(vm->qmp, 0,
				     e->online ? "PLUGVM_CPU_ONLINE" : "PLUGVM_CPU_OFFLINE",
				     e->slot, report_data(e));
		break;
	case CPUS_EVENT_DELETED:
		qmp_server_event(vm->qmp, "DEVICE_DELETED", device_data(e));
		break;
	case CPUS_EVENT_UNPLUG_FAILED:
		qmp_server_event(vm->qmp, "DEVICE_UNPLUG_GUEST_ERROR", device_data(e));
		break;
	}
}

int control_next_timeout_ms(struct vm *vm)
{
	return vm->qmp ? qmp_server_next_timeout_ms(vm->qmp) : -1;
}

void control_tick(struct vm *vm)
{
	if (vm->qmp)
		qmp_server_tick(vm->qmp); /* rate-limited events whose turn came */
}

int control_fd(const struct vm *vm)
{
	return vm->qmp ? qmp_server_fd(vm->qmp) : -1;
}

void control_dispatch(struct vm *vm)
{
	if (vm->qmp)
		qmp_server_dispatch(vm->qmp);
}

/* QEMU's run state names for the VM's. */
static const char *run_state_name(struct vm *vm)
{
	if (vm_stopping(vm))
		return "shutdown";
	switch (cpus_run_state(vm->cpus)) {
	case CPUS_PRELAUNCH:
		return "prelaunch";
	case CPUS_PAUSED:
		return "paused";
	default:
		return "running";
	}
}

static struct json_object *query_status(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *r = json_object_new_object();
	const char *status = run_state_name(vm);

	(void)args;
	(void)err;
	json_object_object_add(r, "status", json_object_new_string(status));
	json_object_object_add(r, "singlestep", json_object_new_boolean(false));
	json_object_object_add(r, "running", json_object_new_boolean(!strcmp(status, "running")));
	return r;
}

/* QEMU's `cont`: after -S or `stop` the vCPUs run (RESUME); a running VM stays so. */
static struct json_object *cmd_cont(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;

	(void)args;
	(void)err;
	if (cpus_resume(vm->cpus))
		qmp_server_event(vm->qmp, "RESUME", NULL);
	return NULL;
}

/* QEMU's `stop`: every vCPU leaves the guest, the reply when they did (STOP). */
static struct json_object *cmd_stop(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;

	(void)args;
	if (cpus_run_state(vm->cpus) != CPUS_RUNNING)
		return NULL; /* QEMU: stopping a stopped VM does nothing */
	if (cpus_pause(vm->cpus))
		qmp_error_set(err, "GenericError",
			      "a vCPU did not stop within %d ms (the VM counts as paused)",
			      CPUS_PAUSE_TIMEOUT_MS);
	qmp_server_event(vm->qmp, "STOP", NULL);
	return NULL;
}

/* QEMU's system_reset: the main loop resets the machine (RESET), the guest boots again. */
static struct json_object *system_reset(void *ctx, struct json_object *args, struct qmp_error *err)
{
	(void)args;
	(void)err;
	vm_request_reset(ctx);
	return NULL;
}

void control_reset_done(struct vm *vm)
{
	struct json_object *data;

	if (!vm->qmp)
		return;
	data = json_object_new_object();
	json_object_object_add(data, "guest", json_object_new_boolean(false));
	json_object_object_add(data, "reason", json_object_new_string("host-qmp-system-reset"));
	qmp_server_event(vm->qmp, "RESET", data);
}

/* HMP's `info cpus`, as QEMU 7.2 prints it (the monitor's CPU is the first one). */
static struct json_object *hmp_info_cpus(struct vm *vm)
{
	struct printbuf *pb = printbuf_new();
	struct json_object *r;
	bool first = true;
	unsigned i;

	for (i = 0; pb && i < vm->cfg->max_cpus; i++) {
		if (!cpus_present(vm->cpus, i))
			continue;
		sprintbuf(pb, "%c CPU #%u: thread_id=%d\r\n", first ? '*' : ' ', i,
			  (int)cpus_tid(vm->cpus, i));
		first = false;
	}
	r = json_object_new_string(pb && pb->buf ? pb->buf : "");
	printbuf_free(pb);
	return r;
}

/* HMP's `info status`, as QEMU prints it. */
static struct json_object *hmp_info_status(struct vm *vm)
{
	char text[64];
	const char *s = run_state_name(vm);

	if (!strcmp(s, "running"))
		snprintf(text, sizeof(text), "VM status: running\r\n");
	else if (!strcmp(s, "paused"))
		snprintf(text, sizeof(text), "VM status: paused\r\n");
	else
		snprintf(text, sizeof(text), "VM status: paused (%s)\r\n", s);
	return json_object_new_string(text);
}

static const struct qmp_arg hmp_args[] = {
	{ "command-line", json_type_string, true },
	{ "cpu-index", json_type_int, false },
	{ NULL, json_type_null, false },
};

/*
 * QEMU's human-monitor-command, for what clients ask of it most (`virsh qemu-monitor-command
 * --hmp`): `info cpus` and `info status`. Anything else fails with CommandNotFound.
 */
static struct json_object *human_monitor_command(void *ctx, struct json_object *args,
						 struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *o;
	char words[2][16] = { "", "" };
	const char *line;

	json_object_object_get_ex(args, "command-line", &o);
	line = json_object_get_string(o);
	if (sscanf(line, " %15s %15s", words[0], words[1]) >= 1 && !strcmp(words[0], "info")) {
		if (!strcmp(words[1], "cpus"))
			return hmp_info_cpus(vm);
		if (!strcmp(words[1], "status"))
			return hmp_info_status(vm);
	}
	qmp_error_set(err, "CommandNotFound",
		      "The HMP command '%.64s' is not supported: plugvm answers 'info cpus' and "
		      "'info status' only",
		      line);
	return NULL;
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

/* query-cpus-fast's entry for the present CPU in `slot`. */
static struct json_object *cpu_fast_json(struct vm *vm, unsigned slot)
{
	struct json_object *c = json_object_new_object();

	json_object_object_add(c, "thread-id", json_object_new_int(cpus_tid(vm->cpus, slot)));
	json_object_object_add(c, "props", cpu_props(vm->cfg, slot));
	json_object_object_add(c, "qom-path", qom_path(vm, slot));
	json_object_object_add(c, "cpu-index", json_object_new_int((int)slot));
	json_object_object_add(c, "target", json_object_new_string("x86_64"));
	return c;
}

/* query-hotpluggable-cpus' entry for `slot`: present ones carry their qom-path. */
static struct json_object *hotpluggable_json(struct vm *vm, unsigned slot)
{
	struct json_object *c = json_object_new_object();

	json_object_object_add(c, "props", cpu_props(vm->cfg, slot));
	json_object_object_add(c, "vcpus-count", json_object_new_int(1));
	if (cpus_present(vm->cpus, slot))
		json_object_object_add(c, "qom-path", qom_path(vm, slot));
	json_object_object_add(c, "type", json_object_new_string(CPU_TYPE));
	return c;
}

static struct json_object *query_cpus_fast(void *ctx, struct json_object *args,
					   struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *r = json_object_new_array();
	unsigned i;

	(void)args;
	(void)err;
	for (i = 0; i < vm->cfg->max_cpus; i++)
		if (cpus_present(vm->cpus, i))
			json_object_array_add(r, cpu_fast_json(vm, i));
	return r;
}

static struct json_object *query_hotpluggable_cpus(void *ctx, struct json_object *args,
						   struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *r = json_object_new_array();
	unsigned i;

	(void)args;
	(void)err;
	for (i = vm->cfg->max_cpus; i-- > 0;) /* highest first, as QEMU lists them */
		json_object_array_add(r, hotpluggable_json(vm, i));
	return r;
}

/* The slot named by QEMU's CPU properties (or apic-id), or -1 with err set. */
static int cpu_slot(struct vm *vm, struct json_object *args, struct qmp_error *err)
{
	static const char *const keys[4] = { "socket-id", "die-id", "core-id", "thread-id" };
	const struct smp_topology *t = &vm->cfg->topo;
	const unsigned limit[4] = { t->sockets, t->dies, t->cores, t->threads };
	unsigned v[4] = { 0, 0, 0, 0 }, k;
	struct json_object *o;

	if (json_object_object_get_ex(args, "apic-id", &o)) {
		int64_t id = json_object_get_int64(o);

		if (id < 0 || id >= (int64_t)vm->cfg->max_cpus) {
			qmp_error_set(err, "GenericError",
				      "Invalid apic-id %lld: must be in range 0:%u", (long long)id,
				      vm->cfg->max_cpus - 1);
			return -1;
		}
		return (int)id;
	}
	for (k = 0; k < 4; k++) {
		int64_t x;

		if (!json_object_object_get_ex(args, keys[k], &o)) {
			if (k == 1 && limit[k] == 1)
				continue; /* die-id only with dies > 1, as QEMU */
			qmp_error_set(err, "GenericError", "Parameter '%s' is missing", keys[k]);
			return -1;
		}
		x = json_object_get_int64(o);
		if (x < 0 || x >= (int64_t)limit[k]) {
			qmp_error_set(err, "GenericError",
				      "Invalid CPU %s: %lld must be in range 0:%u", keys[k],
				      (long long)x, limit[k] - 1);
			return -1;
		}
		v[k] = (unsigned)x;
	}
	return (int)(((v[0] * t->dies + v[1]) * t->cores + v[2]) * t->threads + v[3]);
}

static bool valid_id(const char *id)
{
	size_t i, n = strlen(id);

	/* QEMU's rule: a letter, then letters, digits, '-', '.', '_'; bounded here. */
	if (!n || n > 64 || !((id[0] >= 'a' && id[0] <= 'z') || (id[0] >= 'A' && id[0] <= 'Z')))
		return false;
	for (i = 1; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._",
			    id[i]))
			return false;
	return true;
}

static struct json_object *device_add(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *o;
	const char *driver, *id = NULL, *other;
	size_t dlen;
	unsigned i;
	int slot, ret;

	json_object_object_get_ex(args, "driver", &o);
	driver = json_object_get_string(o);
	dlen = strlen(driver);
	if (dlen < 11 || strcmp(driver + dlen - 11, "-x86_64-cpu")) {
		qmp_error_set(err, "GenericError",
			      "'%.64s' is not a valid device model name (plugvm adds CPUs: %s)",
			      driver, CPU_TYPE);
		return NULL;
	}
	if (json_object_object_get_ex(args, "id", &o)) {
		id = json_object_get_string(o);
		if (!valid_id(id)) {
			qmp_error_set(
			    err, "GenericError",
			    "Parameter 'id' expects an identifier (a letter, then letters, "
			    "digits, '-', '.', '_'; at most 64)");
			return NULL;
		}
		for (i = 0; i < vm->cfg->max_cpus; i++) {
			other = cpus_id(vm->cpus, i);
			if (other && !strcmp(other, id)) {
				qmp_error_set(err, "GenericError", "Duplicate device ID '%s'", id);
				return NULL;
			}
		}
	}
	slot = cpu_slot(vm, args, err);
	if (slot < 0)
		return NULL;
	ret = cpus_add(vm->cpus, (unsigned)slot, id);
	switch (ret) {
	case 0:
		break;
	case -EEXIST:
		qmp_error_set(err, "GenericError", "CPU[%d] with APIC ID %d exists", slot, slot);
		break;
	case -ESHUTDOWN:
		qmp_error_set(err, "GenericError", "the VM is shutting down");
		break;
	default:
		qmp_error_set(err, "GenericError", "cannot create vCPU %d: %s", slot,
			      strerror(-ret));
		break;
	}
	return NULL;
}

/* The slot of a device id or QOM path, or -1. */
static int find_cpu(struct vm *vm, const char *name)
{
	unsigned i;
	char path[96];

	for (i = 0; i < vm->cfg->max_cpus; i++) {
		const char *id = cpus_id(vm->cpus, i);

		if (!cpus_present(vm->cpus, i))
			continue;
		if (id && !strcmp(id, name))
			return (int)i;
		cpu_path(i, id, path, sizeof(path));
		if (!strcmp(path, name))
			return (int)i;
	}
	return -1;
}

static struct json_object *device_del(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *o;
	const char *name;
	int slot, ret;

	json_object_object_get_ex(args, "id", &o);
	name = json_object_get_string(o);
	slot = find_cpu(vm, name);
	if (slot < 0) {
		qmp_error_set(err, "DeviceNotFound", "Device '%.64s' not found", name);
		return NULL;
	}
	ret = cpus_request_removal(vm->cpus, (unsigned)slot);
	switch (ret) {
	case 0:
		break;
	case -EALREADY:
		qmp_error_set(err, "GenericError",
			      "Device %.64s is already in the process of unplug", name);
		break;
	case -EPERM:
		qmp_error_set(err, "GenericError", "Boot CPU is unpluggable");
		break;
	case -EOPNOTSUPP:
		qmp_error_set(err, "GenericError",
			      "acpi: device unplug request for not supported device type: the "
			      "guest has not switched to the modern CPU hotplug interface");
		break;
	default:
		qmp_error_set(err, "GenericError", "cannot remove CPU %d: %s", slot,
			      strerror(-ret));
		break;
	}
	return NULL;
}

static const struct qmp_arg device_add_args[] = {
	{ "driver", json_type_string, true },  { "id", json_type_string, false },
	{ "socket-id", json_type_int, false }, { "die-id", json_type_int, false },
	{ "core-id", json_type_int, false },   { "thread-id", json_type_int, false },
	{ "apic-id", json_type_int, false },   { NULL, json_type_null, false },
};

static const struct qmp_arg device_del_args[] = {
	{ "id", json_type_string, true },
	{ NULL, json_type_null, false },
};

/* ACPI power button, as QEMU: the guest decides what to do (ours powers off). */
static struct json_object *system_powerdown(void *ctx, struct json_object *args,
					    struct qmp_error *err)
{
	struct vm *vm = ctx;

	(void)args;
	(void)err;
	acpi_pm_power_button(vm);
	qmp_server_event(vm->qmp, "POWERDOWN", NULL);
	return NULL;
}

/* NMI to every vCPU, as QEMU's inject-nmi on x86; plugvm's guest prints each CPU's state. */
static struct json_object *inject_nmi(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;

	(void)args;
	(void)err;
	log_info("inject-nmi: NMI to %u vCPUs", cpus_inject_nmi(vm->cpus));
	return NULL;
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

static const struct qmp_command base_commands[] = {
	{ "query-status", query_status, NULL },
	{ "cont", cmd_cont, NULL },
	{ "stop", cmd_stop, NULL },
	{ "human-monitor-command", human_monitor_command, hmp_args },
	{ "query-version", query_version, NULL },
	{ "query-commands", query_commands, NULL },
	{ "query-cpus-fast", query_cpus_fast, NULL },
	{ "query-hotpluggable-cpus", query_hotpluggable_cpus, NULL },
	{ "device_add", device_add, device_add_args },
	{ "device_del", device_del, device_del_args },
	{ "system_powerdown", system_powerdown, NULL },
	{ "system_reset", system_reset, NULL },
	{ "inject-nmi", inject_nmi, NULL },
	{ "quit", cmd_quit, NULL },
	{ NULL, NULL, NULL },
};

/*
 * base_commands, then the agent's (control_agent.c), the domain's (control_domain.c), the
 * statistics (control_stats.c), the latency one (control_latency.c), then the end marker.
 */
static struct qmp_command commands[64];

static void merge_commands(void)
{
	const struct qmp_command *tables[] = { base_commands, control_agent_commands,
					       control_domain_commands, control_stats_commands,
					       control_latency_commands },
				 *c;
	unsigned n = 0, t;

	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (c = tables[t]; c->name && n < 63; c++)
			commands[n++] = *c;
	commands[n] = (struct qmp_command){ NULL, NULL, NULL };
}

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
	merge_commands();
	agent_set_event_fn(vm, control_agent_event);
	cpus_set_event_fn(vm->cpus, cpus_event, vm);
	vm->qmp = qmp_server_create(commands, vm, "plugvm " PLUGVM_VERSION, PLUGVM_VERSION_MAJOR,
				    PLUGVM_VERSION_MINOR, PLUGVM_VERSION_MICRO);
	if (!vm->qmp) {
		log_error("qmp: out of memory");
		return -ENOMEM;
	}
	/* Guest-triggered events are rate-limited per CPU slot; the last key is "no slot". */
	qmp_server_set_event_keys(vm->qmp, vm->cfg->max_cpus + 1);
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

void control_free(struct vm *vm)
{
	control_agent_free(vm);
}
