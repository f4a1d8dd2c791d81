// SPDX-License-Identifier: MIT
/*
 * The control socket's CPU commands in QEMU's shapes (query-cpus-fast,
 * query-hotpluggable-cpus, device_add and device_del of CPUs) and the vCPU lifecycle's
 * events (cpus.h) as QMP events. QMP in, calls out; events in, QMP out: what a CPU is and
 * how it changes is cpus.c's. Main thread, like every QMP command, except the events.
 */
#include "control_cpus.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../autoscale.h"
#include "../cpus.h"
#include "../vm.h"
#include "qmp.h"

/*
 * gcc 12's -fanalyzer loses heap pointers stored through the VM reached from the commands'
 * void *ctx and reports them as leaked; the ASan run of the integration tests (make check)
 * checks these paths for real leaks.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif

#define CPU_TYPE CONTROL_CPU_TYPE

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
	if (e->id) /* QEMU's ACPIOSTInfo: the device's id, while the slot holds one */
		json_object_object_add(info, "device", json_object_new_string(e->id));
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
void control_cpus_event(void *opaque, const struct cpus_event *e)
{
	struct vm *vm = opaque;

	autoscale_cpus_event(vm, e); /* how its own operations end */
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

/* query-cpus-fast's entry for the CPU in `slot`: NULL if none is present there. */
static struct json_object *cpu_fast_json(struct vm *vm, unsigned slot)
{
	struct json_object *c;

	if (!cpus_present(vm->cpus, slot))
		return NULL;
	c = json_object_new_object();

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

/*
 * A JSON array of `entry` for each slot (NULL: left out), lowest first or, as QEMU lists
 * query-hotpluggable-cpus, highest first.
 */
static struct json_object *cpu_array(struct vm *vm,
				     struct json_object *(*entry)(struct vm *vm, unsigned slot),
				     bool highest_first)
{
	struct json_object *r = json_object_new_array(), *c;
	unsigned i, n = vm->cfg->max_cpus;

	for (i = 0; i < n; i++) {
		c = entry(vm, highest_first ? n - 1 - i : i);
		if (c)
			json_object_array_add(r, c);
	}
	return r;
}

static struct json_object *query_cpus_fast(void *ctx, struct json_object *args,
					   struct qmp_error *err)
{
	(void)args;
	(void)err;
	return cpu_array(ctx, cpu_fast_json, false);
}

static struct json_object *query_hotpluggable_cpus(void *ctx, struct json_object *args,
						   struct qmp_error *err)
{
	(void)args;
	(void)err;
	return cpu_array(ctx, hotpluggable_json, true);
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
	int slot, ret, dup = -1;

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
		for (i = 0; i < vm->cfg->max_cpus && dup < 0; i++) {
			other = cpus_id(vm->cpus, i);
			if (other && !strcmp(other, id))
				dup = (int)i;
		}
	}
	slot = cpu_slot(vm, args, err);
	if (slot < 0)
		return NULL;
	if (dup >= 0) {
		/* The same id in the same slot, added by the policy: the operator's now. */
		if (slot != dup || !autoscale_adopt(vm, (unsigned)dup))
			qmp_error_set(err, "GenericError", "Duplicate device ID '%s'", id);
		return NULL;
	}
	ret = cpus_add(vm->cpus, (unsigned)slot, id);
	switch (ret) {
	case 0:
		/* Operator commands win (autoscale.h). */
		autoscale_manual(vm, AUTOSCALE_ADD, (unsigned)slot);
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
		autoscale_manual(vm, AUTOSCALE_REMOVE, (unsigned)slot);
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

/*
 * QEMU's qom-get on a CPU object: the present vCPU whose qom-path (query-cpus-fast's) is
 * `path`, and of its properties the ones device-list-properties names (socket-id, die-id,
 * core-id, thread-id, apic-id). Another path is DeviceNotFound, another property
 * GenericError, as QEMU: libvirt asks a host-passthrough CPU for "migratable" after a
 * restart and takes that error as "not migratable" (docs/libvirt.md). test_control.c:
 * test_qom_get.
 */
static struct json_object *qom_get(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *o, *props, *v;
	const char *path, *prop;
	char buf[96];
	unsigned slot;

	json_object_object_get_ex(args, "path", &o);
	path = json_object_get_string(o);
	json_object_object_get_ex(args, "property", &o);
	prop = json_object_get_string(o);
	for (slot = 0; slot < vm->cfg->max_cpus; slot++) {
		if (!cpus_present(vm->cpus, slot))
			continue;
		control_cpu_path(vm, slot, buf, sizeof(buf));
		if (!strcmp(buf, path))
			break;
	}
	if (slot == vm->cfg->max_cpus) {
		qmp_error_set(err, "DeviceNotFound", "Device '%.64s' not found", path);
		return NULL;
	}
	props = cpu_props(vm->cfg, slot);
	if (!json_object_object_get_ex(props, "die-id", NULL))
		json_object_object_add(props, "die-id", json_object_new_int(0));
	json_object_object_add(props, "apic-id", json_object_new_int((int)slot));
	if (!json_object_object_get_ex(props, prop, &v)) {
		qmp_error_set(err, "GenericError",
			      "Property '" CONTROL_CPU_TYPE ".%.64s' not found", prop);
		json_object_put(props);
		return NULL;
	}
	v = json_object_get(v);
	json_object_put(props);
	return v;
}

static const struct qmp_arg qom_get_args[] = {
	{ "path", json_type_string, true },
	{ "property", json_type_string, true },
	{ NULL, json_type_null, false },
};

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

const struct qmp_command control_cpus_commands[] = {
	{ "query-cpus-fast", query_cpus_fast, NULL },
	{ "query-hotpluggable-cpus", query_hotpluggable_cpus, NULL },
	{ "device_add", device_add, device_add_args },
	{ "device_del", device_del, device_del_args },
	{ "qom-get", qom_get, qom_get_args },
	{ NULL, NULL, NULL },
};
