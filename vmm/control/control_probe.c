// SPDX-License-Identifier: MIT
/*
 * What plugvm says about itself, in QEMU 7.2's shapes (control_probe.h): the target, KVM,
 * the QMP schema generated from the command table, plugvm's QOM types and their properties,
 * its machine types under QEMU's names, its command-line options. Every answer is read off
 * plugvm: nothing is replayed from QEMU. All run without a guest machine (-machine none).
 */
#include "control_probe.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "control_cpus.h"
#include "../kvm.h"
#include "plugvm_abi.h"
#include "../version.h"
#include "../vm.h"

#define STR_(x) #x
#define STR(x)	STR_(x)
/* "7.2": the machine types are QEMU's of the release plugvm implements (version.h). */
#define COMPAT_MACHINE	 STR(PLUGVM_QEMU_COMPAT_MAJOR) "." STR(PLUGVM_QEMU_COMPAT_MINOR)
#define MACHINE_NAME_PC	 "pc-i440fx-" COMPAT_MACHINE
#define MACHINE_NAME_Q35 "pc-q35-" COMPAT_MACHINE
#define CPU_TYPE	 CONTROL_CPU_TYPE

const char *const control_event_names[] = {
	"SHUTDOWN",
	"RESET",
	"POWERDOWN",
	"STOP",
	"RESUME",
	"ACPI_DEVICE_OST",
	"DEVICE_DELETED",
	"DEVICE_UNPLUG_GUEST_ERROR",
	"PLUGVM_CPU_ONLINE",
	"PLUGVM_CPU_OFFLINE",
	"CPUHP_STATE",
	"GUEST_LOCKDEP_WARNING",
	"PLUGVM_AUTOSCALE",
	NULL,
};

/* /dev/kvm as control_probe_init() found it. */
static struct {
	bool present; /* the device exists */
	bool usable; /* plugvm runs on it: the VM's own, or it opens and speaks KVM's API */
	unsigned max_vcpus; /* KVM's vCPU limit (0: unknown) */
} kvm_seen;

void control_probe_init(const struct vm *vm)
{
	struct stat st;

	if (vm->kvm.dev_fd >= 0) {
		kvm_seen.present = kvm_seen.usable = true;
		kvm_seen.max_vcpus = vm->kvm.max_vcpus;
		return;
	}
	kvm_seen.present = stat("/dev/kvm", &st) == 0;
	kvm_seen.usable = kvm_probe("/dev/kvm", &kvm_seen.max_vcpus) == 0;
	if (!kvm_seen.usable)
		kvm_seen.max_vcpus = 0;
}

/*
 * The most vCPUs a VM of this plugvm may have: KVM's limit capped by plugvm's own, the two
 * checks `--smp maxcpus=` meets (config_smp.c, machine.c). Guarded by test_qmp_probe.py's
 * test_cpu_max_is_what_smp_accepts.
 */
static unsigned cpu_max(void)
{
	if (kvm_seen.max_vcpus && kvm_seen.max_vcpus < PLUGVM_MAX_CPUS)
		return kvm_seen.max_vcpus;
	return PLUGVM_MAX_CPUS;
}

static void add_str(struct json_object *o, const char *key, const char *val)
{
	json_object_object_add(o, key, json_object_new_string(val));
}

static void add_bool(struct json_object *o, const char *key, bool val)
{
	json_object_object_add(o, key, json_object_new_boolean(val));
}

static const char *arg_string(struct json_object *args, const char *key)
{
	struct json_object *o;

	return json_object_object_get_ex(args, key, &o) ? json_object_get_string(o) : NULL;
}

/* ---- query-target, query-kvm ------------------------------------------------------------ */

static struct json_object *query_target(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct json_object *r = json_object_new_object();

	(void)ctx;
	(void)args;
	(void)err;
	add_str(r, "arch", "x86_64");
	return r;
}

/*
 * present: /dev/kvm exists; enabled: plugvm runs its VMs on it (it has no other
 * accelerator). libvirt probes again whenever this disagrees with its own look at /dev/kvm.
 */
static struct json_object *query_kvm(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct json_object *r = json_object_new_object();

	(void)ctx;
	(void)args;
	(void)err;
	add_bool(r, "enabled", kvm_seen.present && kvm_seen.usable);
	add_bool(r, "present", kvm_seen.present);
	return r;
}

/* ---- query-qmp-schema ------------------------------------------------------------------- */

/* QAPI's name for what an argument of type `t` may hold (SchemaInfo's builtin types). */
static const char *schema_type(enum json_type t)
{
	switch (t) {
	case json_type_string:
		return "str";
	case json_type_int:
		return "int";
	case json_type_boolean:
		return "bool";
	case json_type_double:
		return "number";
	case json_type_array:
		return "[any]"; /* the table does not say what the elements are */
	default:
		return "any"; /* json_type_null (any value), or an object the table does not describe */
	}
}

static void schema_add(struct json_object *r, const char *name, const char *meta, const char *key,
		       const char *val)
{
	struct json_object *e = json_object_new_object();

	add_str(e, "name", name);
	add_str(e, "meta-type", meta);
	if (key)
		add_str(e, key, val);
	json_object_array_add(r, e);
}

/* A command and the object type of its arguments ("q_empty" when it takes none). */
static void schema_command(struct json_object *r, const struct qmp_command *cmd)
{
	struct json_object *c = json_object_new_object(), *o, *members;
	char type[96];
	const struct qmp_arg *a;

	snprintf(type, sizeof(type), "q_obj_%s-arg", cmd->name);
	add_str(c, "name", cmd->name);
	add_str(c, "meta-type", "command");
	add_str(c, "arg-type", cmd->args && cmd->args->name ? type : "q_empty");
	add_str(c, "ret-type", "any"); /* the table does not describe replies */
	json_object_array_add(r, c);
	if (!cmd->args || !cmd->args->name)
		return;
	o = json_object_new_object();
	members = json_object_new_array();
	for (a = cmd->args; a->name; a++) {
		struct json_object *m = json_object_new_object();

		add_str(m, "name", a->name);
		add_str(m, "type", schema_type(a->type));
		if (!a->required) /* QAPI marks an optional member by a "default" of null */
			json_object_object_add(m, "default", NULL);
		json_object_array_add(members, m);
	}
	add_str(o, "name", type);
	add_str(o, "meta-type", "object");
	json_object_object_add(o, "members", members);
	json_object_array_add(r, o);
}

/*
 * QEMU's introspection format (SchemaInfo), generated from the table the server dispatches
 * from, so it lists exactly what query-commands lists (test_qmp_probe.py's
 * test_schema_lists_what_query_commands_lists), with each command's arguments, and the
 * events plugvm emits. No feature is claimed: libvirt then writes -device and -object as
 * key=value, which plugvm-qemu reads.
 */
static struct json_object *query_qmp_schema(void *ctx, struct json_object *args,
					    struct qmp_error *err)
{
	static const char *const builtins[][2] = {
		{ "str", "string" },   { "int", "int" },   { "number", "number" },
		{ "bool", "boolean" }, { "null", "null" }, { "any", "value" },
	};
	struct vm *vm = ctx;
	struct json_object *r = json_object_new_array(), *empty;
	const struct qmp_command *cmd;
	const char *const *ev;
	size_t i;

	(void)args;
	(void)err;
	schema_command(r, &qmp_capabilities_command);
	for (cmd = qmp_server_commands(vm->qmp); cmd->name; cmd++)
		schema_command(r, cmd);
	for (ev = control_event_names; *ev; ev++)
		schema_add(r, *ev, "event", "arg-type", "any"); /* their data is not described */
	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		schema_add(r, builtins[i][0], "builtin", "json-type", builtins[i][1]);
	schema_add(r, "[any]", "array", "element-type", "any");
	empty = json_object_new_object();
	add_str(empty, "name", "q_empty");
	add_str(empty, "meta-type", "object");
	json_object_object_add(empty, "members", json_object_new_array());
	json_object_array_add(r, empty);
	return r;
}

/* ---- QOM types and their properties ------------------------------------------------------ */

/* A property plugvm honours when the command line or device_add sets it. */
struct qom_prop {
	const char *name, *type;
};

struct qom_type {
	const char *name, *parent; /* parent NULL: a root */
	bool abstract;
	const struct qom_prop *props; /* ends with name NULL; NULL: none */
};

/* The IDs device_add takes (control_cpus.c), as query-hotpluggable-cpus gives them. */
static const struct qom_prop cpu_props[] = {
	{ "socket-id", "int32" }, { "die-id", "int32" },   { "core-id", "int32" },
	{ "thread-id", "int32" }, { "apic-id", "uint32" }, { NULL, NULL },
};
/* The one 16550, at COM1: its backend and index 0 (its port and IRQ are fixed). */
static const struct qom_prop serial_props[] = {
	{ "chardev", "str" },
	{ "index", "uint32" },
	{ NULL, NULL },
};
/* What -machine pc-*,... takes besides the type and the accelerator. */
static const struct qom_prop pc_props[] = {
	{ "usb", "bool" },
	{ "dump-guest-core", "bool" },
	{ "memory-backend", "link<memory-backend>" },
	{ NULL, NULL },
};
/* Guest RAM: plugvm's one RAM region, of -m's size. */
static const struct qom_prop ram_props[] = {
	{ "size", "int" },
	{ NULL, NULL },
};

/*
 * plugvm's types under QEMU's names: its vCPU model, its serial port, its machine offered
 * as QEMU's pc and q35 of the release it implements, the probe's `none`, KVM, guest RAM.
 */
static const struct qom_type qom_types[] = {
	{ "object", NULL, true, NULL },
	{ "device", "object", true, NULL },
	{ "cpu", "device", true, NULL },
	{ "x86_64-cpu", "cpu", true, NULL },
	{ CPU_TYPE, "x86_64-cpu", false, cpu_props },
	{ "isa-serial", "device", false, serial_props },
	{ "machine", "object", true, NULL },
	{ MACHINE_NAME_PC "-machine", "machine", false, pc_props },
	{ MACHINE_NAME_Q35 "-machine", "machine", false, pc_props },
	{ "none-machine", "machine", false, NULL },
	{ "accel", "object", true, NULL },
	{ "kvm-accel", "accel", false, NULL },
	{ "memory-backend", "object", true, NULL },
	{ "memory-backend-ram", "memory-backend", false, ram_props },
};

#define NR_QOM_TYPES (sizeof(qom_types) / sizeof(qom_types[0]))

static const struct qom_type *qom_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < NR_QOM_TYPES; i++)
		if (!strcmp(qom_types[i].name, name))
			return &qom_types[i];
	return NULL;
}

/* `t` is `ancestor` or derives from it. The parents form a tree (each is listed). */
static bool qom_is_a(const struct qom_type *t, const char *ancestor)
{
	unsigned depth;

	for (depth = 0; t && depth < NR_QOM_TYPES; depth++) {
		if (!strcmp(t->name, ancestor))
			return true;
		t = qom_find(t->parent);
	}
	return false;
}

static struct json_object *props_json(const struct qom_prop *p)
{
	struct json_object *r = json_object_new_array();

	for (; p && p->name; p++) {
		struct json_object *o = json_object_new_object();

		add_str(o, "name", p->name);
		add_str(o, "type", p->type);
		json_object_array_add(r, o);
	}
	return r;
}

static const struct qmp_arg list_types_args[] = {
	{ "implements", json_type_string, false },
	{ "abstract", json_type_boolean, false },
	{ NULL, json_type_null, false },
};

/* QEMU's qom-list-types: the concrete types (abstract ones too if asked), maybe filtered. */
static struct json_object *qom_list_types(void *ctx, struct json_object *args,
					  struct qmp_error *err)
{
	const char *implements = arg_string(args, "implements");
	struct json_object *r = json_object_new_array(), *o;
	bool abstract = false;
	size_t i;

	(void)ctx;
	(void)err;
	if (json_object_object_get_ex(args, "abstract", &o))
		abstract = json_object_get_boolean(o);
	for (i = 0; i < NR_QOM_TYPES; i++) {
		const struct qom_type *t = &qom_types[i];

		if ((t->abstract && !abstract) || (implements && !qom_is_a(t, implements)))
			continue;
		o = json_object_new_object();
		add_str(o, "name", t->name);
		if (t->abstract)
			add_bool(o, "abstract", true);
		if (t->parent)
			add_str(o, "parent", t->parent);
		json_object_array_add(r, o);
	}
	return r;
}

static const struct qmp_arg typename_args[] = {
	{ "typename", json_type_string, true },
	{ NULL, json_type_null, false },
};

/* QEMU's device-list-properties: a device plugvm has, else QEMU's errors. */
static struct json_object *device_list_properties(void *ctx, struct json_object *args,
						  struct qmp_error *err)
{
	const char *name = arg_string(args, "typename");
	const struct qom_type *t = qom_find(name);

	(void)ctx;
	if (!t) {
		qmp_error_set(err, "DeviceNotFound", "Device '%.100s' not found", name);
		return NULL;
	}
	if (!qom_is_a(t, "device")) {
		qmp_error_set(err, "GenericError", "Parameter 'typename' expects device");
		return NULL;
	}
	if (t->abstract) {
		qmp_error_set(err, "GenericError",
			      "Parameter 'typename' expects non-abstract device");
		return NULL;
	}
	return props_json(t->props);
}

/*
 * QEMU's qom-list-properties: a type plugvm has gets its properties; any other gets [],
 * never DeviceNotFound (QEMU's answer): libvirt 9.0 asks this of memory-backend-file
 * whatever the type list says and crashes on that error, reading a list it never got
 * (hypervisor-interfaces.md §9.2 item 9; test_qmp_probe.py replays it).
 */
static struct json_object *qom_list_properties(void *ctx, struct json_object *args,
					       struct qmp_error *err)
{
	const struct qom_type *t = qom_find(arg_string(args, "typename"));

	(void)ctx;
	(void)err;
	return props_json(t ? t->props : NULL);
}

/* ---- query-machines, query-command-line-options ----------------------------------------- */

static struct json_object *machine_info(const char *name, const char *alias, bool dflt,
					unsigned cpus, bool hotplug)
{
	struct json_object *m = json_object_new_object();

	add_str(m, "name", name);
	if (alias)
		add_str(m, "alias", alias);
	if (dflt)
		add_bool(m, "is-default", true);
	json_object_object_add(m, "cpu-max", json_object_new_int((int)cpus));
	add_bool(m, "hotpluggable-cpus", hotplug);
	add_bool(m, "numa-mem-supported", false);
	add_bool(m, "deprecated", false);
	if (cpus) {
		add_str(m, "default-cpu-type", CPU_TYPE);
		add_str(m, "default-ram-id", "pc.ram");
	}
	return m;
}

/*
 * plugvm has one machine (QEMU's pc layout: docs/design.md, "Boot"), offered under QEMU's
 * pc and q35 names of the release it implements so that domain documents written for QEMU
 * name it; and `none`, the probe's, which runs no vCPU.
 */
static struct json_object *query_machines(void *ctx, struct json_object *args,
					  struct qmp_error *err)
{
	struct json_object *r = json_object_new_array();

	(void)ctx;
	(void)args;
	(void)err;
	json_object_array_add(r, machine_info(MACHINE_NAME_PC, "pc", true, cpu_max(), true));
	json_object_array_add(r, machine_info(MACHINE_NAME_Q35, "q35", false, cpu_max(), true));
	json_object_array_add(r, machine_info("none", NULL, false, 0, false));
	return r;
}

static const struct qmp_arg cmdline_args[] = {
	{ "option", json_type_string, false },
	{ NULL, json_type_null, false },
};

/*
 * []: plugvm describes no command-line option here. libvirt 9.0 reads this answer only
 * for -fsdev, -machine hpet, -sandbox, -spice and -vnc; plugvm-qemu has none of those but
 * -sandbox, whose absence only keeps libvirt from adding `-sandbox on,...` (plugvm's own
 * seccomp filters are on regardless). plugvm-qemu's options: docs/libvirt.md.
 */
static struct json_object *query_command_line_options(void *ctx, struct json_object *args,
						      struct qmp_error *err)
{
	(void)ctx;
	(void)args;
	(void)err;
	return json_object_new_array();
}

const struct qmp_command control_probe_commands[] = {
	{ "query-target", query_target, NULL, QMP_CMD_NO_MACHINE },
	{ "query-kvm", query_kvm, NULL, QMP_CMD_NO_MACHINE },
	{ "query-qmp-schema", query_qmp_schema, NULL, QMP_CMD_NO_MACHINE },
	{ "qom-list-types", qom_list_types, list_types_args, QMP_CMD_NO_MACHINE },
	{ "device-list-properties", device_list_properties, typename_args, QMP_CMD_NO_MACHINE },
	{ "qom-list-properties", qom_list_properties, typename_args, QMP_CMD_NO_MACHINE },
	{ "query-machines", query_machines, NULL, QMP_CMD_NO_MACHINE },
	{ "query-command-line-options", query_command_line_options, cmdline_args,
	  QMP_CMD_NO_MACHINE },
	{ NULL, NULL, NULL, 0 },
};
