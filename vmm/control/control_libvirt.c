// SPDX-License-Identifier: MIT
/*
 * What libvirt's QEMU driver asks of a running domain beyond the CPU commands, answered
 * for what plugvm is: no migration (one capability, "events", kept and read back), no block
 * layer and no jobs (empty lists), character devices as the command line made them, a QOM
 * tree of the hot-added vCPUs only, and QEMU's set-action for the actions plugvm has.
 * Main thread, like every QMP command. docs/qmp.md has the shapes.
 */
#include "control_libvirt.h"

#include <stdio.h>
#include <string.h>

#include "../cpus.h"
#include "../vm.h"
#include "qmp.h"

#define CPU_TYPE_CHILD "child<host-x86_64-cpu>" /* control_cpus.c's CPU_TYPE as a child */

/*
 * plugvm never migrates. Of QEMU's migration capabilities it has "events" (MIGRATION events
 * on each migration's state change): kept and read back, and true to its word as no
 * migration ever changes state. Any other is refused.
 */
static struct json_object *query_migrate_capabilities(void *ctx, struct json_object *args,
						      struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *r = json_object_new_array(), *c = json_object_new_object();

	(void)args;
	(void)err;
	json_object_object_add(c, "capability", json_object_new_string("events"));
	json_object_object_add(c, "state", json_object_new_boolean(vm->migrate_events));
	json_object_array_add(r, c);
	return r;
}

/* One entry of migrate-set-capabilities' list: its state, or -1 with err set. */
static int capability_state(struct json_object *entry, struct qmp_error *err)
{
	struct json_object *name, *state;

	if (!json_object_is_type(entry, json_type_object) ||
	    !json_object_object_get_ex(entry, "capability", &name) ||
	    !json_object_is_type(name, json_type_string) ||
	    !json_object_object_get_ex(entry, "state", &state) ||
	    !json_object_is_type(state, json_type_boolean) ||
	    json_object_object_length(entry) != 2) {
		qmp_error_set(err, "GenericError",
			      "Invalid parameter 'capabilities': each entry takes a string "
			      "'capability' and a boolean 'state', nothing else");
		return -1;
	}
	if (strcmp(json_object_get_string(name), "events")) {
		qmp_error_set(err, "GenericError",
			      "Migration capability '%.64s' is not supported: plugvm does not "
			      "migrate (it has 'events' only)",
			      json_object_get_string(name));
		return -1;
	}
	return json_object_get_boolean(state);
}

/* All entries are checked before any is applied: a refused request changes nothing. */
static struct json_object *migrate_set_capabilities(void *ctx, struct json_object *args,
						    struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *list;
	size_t i, n;
	int state = -1;

	json_object_object_get_ex(args, "capabilities", &list);
	n = json_object_array_length(list);
	for (i = 0; i < n; i++) {
		int s = capability_state(json_object_array_get_idx(list, i), err);

		if (s < 0)
			return NULL;
		state = s; /* the last entry for a capability wins, as QEMU's */
	}
	if (state >= 0)
		vm->migrate_events = state;
	return NULL;
}

static void add_chardev(struct json_object *r, const char *label, const char *filename)
{
	struct json_object *c = json_object_new_object();

	json_object_object_add(c, "label", json_object_new_string(label));
	json_object_object_add(c, "filename", json_object_new_string(filename));
	json_object_object_add(c, "frontend-open", json_object_new_boolean(true));
	json_object_array_add(r, c);
}

/*
 * QEMU's character devices: those the front end's command line made (cfg->chardevs), or for
 * plugvm's own flags what is there: the QMP socket (as QEMU's -qmp names it) and the console
 * (-serial's name, the backend QEMU would report).
 */
static struct json_object *query_chardev(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *r = json_object_new_array();
	const char *path = vm->qmp ? qmp_server_path(vm->qmp) : NULL;
	char monitor[CONFIG_MAX_QMP_PATH + 32];
	unsigned i;

	(void)args;
	(void)err;
	if (vm->cfg->nr_chardevs) {
		for (i = 0; i < vm->cfg->nr_chardevs && i < CONFIG_MAX_CHARDEVS; i++)
			add_chardev(r, vm->cfg->chardevs[i].label, vm->cfg->chardevs[i].filename);
		return r;
	}
	if (path) {
		snprintf(monitor, sizeof(monitor), "unix:%s,server=on", path);
		add_chardev(r, "compat_monitor0", monitor);
	}
	switch (vm->cfg->console) {
	case CONSOLE_STDIO:
		add_chardev(r, "serial0", "stdio");
		break;
	case CONSOLE_FILE:
	case CONSOLE_FD:
		add_chardev(r, "serial0", "file");
		break;
	default: /* a pty is in chardevs once opened; none: no device */
		break;
	}
	return r;
}

static void add_property(struct json_object *r, const char *name, const char *type)
{
	struct json_object *p = json_object_new_object();

	json_object_object_add(p, "name", json_object_new_string(name));
	json_object_object_add(p, "type", json_object_new_string(type));
	json_object_array_add(r, p);
}

/*
 * QOM: plugvm has no object tree. /machine/peripheral lists what device_add made with an id
 * (its vCPUs, as query-cpus-fast's qom-paths name them); every other path, the boot CPUs'
 * /machine/unattached/device[N] included, is DeviceNotFound, which libvirt takes as "no CPU
 * feature properties to check".
 */
static struct json_object *qom_list(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;
	struct json_object *o, *r;
	const char *path;
	unsigned i;

	json_object_object_get_ex(args, "path", &o);
	path = json_object_get_string(o);
	if (strcmp(path, "/machine/peripheral")) {
		qmp_error_set(
		    err, "DeviceNotFound",
		    "Device '%.64s' not found (plugvm's QOM has /machine/peripheral only)", path);
		return NULL;
	}
	r = json_object_new_array();
	add_property(r, "type", "string");
	for (i = 0; i < vm->cfg->max_cpus; i++) {
		const char *id = cpus_id(vm->cpus, i);

		if (id && cpus_present(vm->cpus, i))
			add_property(r, id, CPU_TYPE_CHILD);
	}
	return r;
}

/* query-named-block-nodes, query-block, query-jobs: plugvm has no disks and no jobs. */
static struct json_object *empty_list(void *ctx, struct json_object *args, struct qmp_error *err)
{
	(void)ctx;
	(void)args;
	(void)err;
	return json_object_new_array();
}

/* One of set-action's values, checked: its index in `ok` (accepted), or -1 with err set. */
static int action_value(struct json_object *args, const char *key, const char *const *ok,
			const char *const *refused, const char *why, struct qmp_error *err)
{
	struct json_object *o;
	const char *v;
	unsigned i;

	if (!json_object_object_get_ex(args, key, &o))
		return -2; /* absent: unchanged */
	v = json_object_get_string(o);
	for (i = 0; ok[i]; i++)
		if (!strcmp(v, ok[i]))
			return (int)i;
	for (i = 0; refused && refused[i]; i++) {
		if (!strcmp(v, refused[i])) {
			qmp_error_set(err, "GenericError",
				      "set-action: %s '%s' is not supported: %s", key, v, why);
			return -1;
		}
	}
	qmp_error_set(err, "GenericError", "Parameter '%s' does not accept value '%.32s'", key, v);
	return -1;
}

/*
 * QEMU 6.0's set-action for what plugvm can do: shutdown poweroff (plugvm ends) or pause
 * (-no-shutdown), reboot reset or shutdown (-no-reboot), panic shutdown (a guest crash ends
 * plugvm). Everything is checked before anything changes.
 */
static struct json_object *set_action(void *ctx, struct json_object *args, struct qmp_error *err)
{
	static const char *const shutdown_ok[] = { "poweroff", "pause", NULL };
	static const char *const reboot_ok[] = { "reset", "shutdown", NULL };
	static const char *const panic_ok[] = { "shutdown", NULL };
	static const char *const panic_no[] = { "pause", "none", "exit-failure", NULL };
	struct vm *vm = ctx;
	int shutdown, reboot;

	shutdown = action_value(args, "shutdown", shutdown_ok, NULL, NULL, err);
	reboot = shutdown == -1 ? -1 : action_value(args, "reboot", reboot_ok, NULL, NULL, err);
	if (shutdown == -1 || reboot == -1 ||
	    action_value(args, "panic", panic_ok, panic_no,
			 "a guest crash ends plugvm (its status 6)", err) == -1)
		return NULL;
	if (json_object_object_get_ex(args, "watchdog", NULL)) {
		qmp_error_set(
		    err, "GenericError",
		    "set-action: plugvm has no watchdog device (watchdog action refused)");
		return NULL;
	}
	if (shutdown >= 0)
		atomic_store(&vm->on_poweroff, shutdown ? ACTION_PAUSE : ACTION_EXIT);
	if (reboot >= 0)
		atomic_store(&vm->on_reset, reboot ? ACTION_EXIT : ACTION_RESET);
	return NULL;
}

static const struct qmp_arg migrate_set_capabilities_args[] = {
	{ "capabilities", json_type_array, true },
	{ NULL, json_type_null, false },
};

static const struct qmp_arg qom_list_args[] = {
	{ "path", json_type_string, true },
	{ NULL, json_type_null, false },
};

static const struct qmp_arg named_block_nodes_args[] = {
	{ "flat", json_type_boolean, false },
	{ NULL, json_type_null, false },
};

static const struct qmp_arg set_action_args[] = {
	{ "shutdown", json_type_string, false }, { "reboot", json_type_string, false },
	{ "panic", json_type_string, false },	 { "watchdog", json_type_string, false },
	{ NULL, json_type_null, false },
};

/*
 * Those that need no guest (QMP_CMD_NO_MACHINE) answer libvirt's probe under -machine none
 * too (query-migrate-capabilities is in it); the character devices and the vCPUs need one.
 */
const struct qmp_command control_libvirt_commands[] = {
	{ "query-migrate-capabilities", query_migrate_capabilities, NULL, QMP_CMD_NO_MACHINE },
	{ "migrate-set-capabilities", migrate_set_capabilities, migrate_set_capabilities_args,
	  QMP_CMD_NO_MACHINE },
	{ "query-chardev", query_chardev, NULL, 0 },
	{ "qom-list", qom_list, qom_list_args, 0 },
	{ "query-named-block-nodes", empty_list, named_block_nodes_args, QMP_CMD_NO_MACHINE },
	{ "query-block", empty_list, NULL, QMP_CMD_NO_MACHINE },
	{ "query-jobs", empty_list, NULL, QMP_CMD_NO_MACHINE },
	{ "set-action", set_action, set_action_args, QMP_CMD_NO_MACHINE },
	{ NULL, NULL, NULL, 0 },
};
