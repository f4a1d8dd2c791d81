// SPDX-License-Identifier: MIT
/*
 * The control socket: its command table, merged from the tables of control_*.c, and the
 * general commands in QEMU's shapes (run state, version, reset, power button, NMI, quit, the
 * HMP `info` commands). The CPU commands and the lifecycle's events are control_cpus.c's.
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
#include "control_autoscale.h"
#include "control_cpus.h"
#include "control_domain.h"
#include "control_probe.h"
#include "control_latency.h"
#include "control_libvirt.h"
#include "control_stats.h"
#include "../cpus.h"
#include "../devices/acpi_pm.h"
#include "../exitcode.h"
#include "../jail.h"
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
	if (vm_stopping(vm) || vm->powered_off)
		return "shutdown";
	if (!vm_has_machine(vm)) /* QEMU's -machine none: -S holds it in prelaunch, as QEMU */
		return vm->cfg->start_paused ? "prelaunch" : "running";
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

/*
 * QEMU's `cont`: after -S or `stop` the vCPUs run (RESUME); a running VM stays so; a guest
 * powered off under -no-shutdown needs system_reset first (test_qmp_libvirt.py).
 */
static struct json_object *cmd_cont(void *ctx, struct json_object *args, struct qmp_error *err)
{
	struct vm *vm = ctx;

	(void)args;
	if (vm->powered_off) {
		qmp_error_set(err, "GenericError", "Resetting the Virtual Machine is required");
		return NULL;
	}
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

/* SHUTDOWN's and RESET's data: who asked, and QEMU's ShutdownCause. */
static struct json_object *cause(bool guest, const char *reason)
{
	struct json_object *data = json_object_new_object();

	json_object_object_add(data, "guest", json_object_new_boolean(guest));
	json_object_object_add(data, "reason", json_object_new_string(reason));
	return data;
}

void control_reset_done(struct vm *vm, bool guest)
{
	if (vm->qmp)
		qmp_server_event(vm->qmp, "RESET",
				 cause(guest, guest ? "guest-reset" : "host-qmp-system-reset"));
}

void control_guest_shutdown(struct vm *vm, bool reset)
{
	if (vm->qmp)
		qmp_server_event(vm->qmp, "SHUTDOWN",
				 cause(true, reset ? "guest-reset" : "guest-shutdown"));
}

void control_stopped(struct vm *vm)
{
	if (vm->qmp)
		qmp_server_event(vm->qmp, "STOP", NULL);
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
	/* The QEMU release whose interface plugvm implements; plugvm's own in `package`. */
	json_object_object_add(v, "micro", json_object_new_int(PLUGVM_QEMU_COMPAT_MICRO));
	json_object_object_add(v, "minor", json_object_new_int(PLUGVM_QEMU_COMPAT_MINOR));
	json_object_object_add(v, "major", json_object_new_int(PLUGVM_QEMU_COMPAT_MAJOR));
	json_object_object_add(r, "qemu", v);
	json_object_object_add(r, "package", json_object_new_string(PLUGVM_PACKAGE));
	return r;
}

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

/* query-commands lists these, the CPU commands, then machine_commands, as QEMU. */
static const struct qmp_command base_commands[] = {
	{ "query-status", query_status, NULL, QMP_CMD_NO_MACHINE },
	{ "cont", cmd_cont, NULL },
	{ "stop", cmd_stop, NULL },
	{ "human-monitor-command", human_monitor_command, hmp_args },
	{ "query-version", query_version, NULL, QMP_CMD_NO_MACHINE },
	{ "query-commands", query_commands, NULL, QMP_CMD_NO_MACHINE },
	{ NULL, NULL, NULL },
};

static const struct qmp_command machine_commands[] = {
	{ "system_powerdown", system_powerdown, NULL },
	{ "system_reset", system_reset, NULL },
	{ "inject-nmi", inject_nmi, NULL },
	{ "quit", cmd_quit, NULL, QMP_CMD_NO_MACHINE },
	{ NULL, NULL, NULL },
};

/*
 * base_commands, the CPU commands (control_cpus.c), machine_commands, the ones libvirt
 * asks of a running domain (control_libvirt.c), then the agent's
 * (control_agent.c), the domain's (control_domain.c), the statistics (control_stats.c), the
 * latency one (control_latency.c), the probe's (control_probe.c), then the end marker.
 */
static struct qmp_command commands[128];

static void merge_commands(void)
{
	const struct qmp_command *tables[] = { base_commands,	       control_cpus_commands,
					       machine_commands,       control_libvirt_commands,
					       control_agent_commands, control_domain_commands,
					       control_stats_commands, control_latency_commands,
					       control_probe_commands, control_autoscale_commands },
				 *c;
	unsigned n = 0, t;

	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		for (c = tables[t]; c->name && n < 127; c++)
			commands[n++] = *c;
		if (c->name) /* never silently: query-commands would not list what is missing */
			log_error("qmp: the command table is full: %s and later are left out",
				  c->name);
	}
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

	/* Heard with or without a socket: the autoscaler follows its own operations. */
	if (vm_has_machine(vm)) {
		cpus_set_event_fn(vm->cpus, control_cpus_event, vm);
		control_autoscale_start(vm);
	}
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
	control_probe_init(vm);
	agent_set_event_fn(vm, control_agent_event);
	vm->qmp = qmp_server_create(commands, vm, PLUGVM_PACKAGE, PLUGVM_QEMU_COMPAT_MAJOR,
				    PLUGVM_QEMU_COMPAT_MINOR, PLUGVM_QEMU_COMPAT_MICRO);
	if (!vm->qmp) {
		log_error("qmp: out of memory");
		return -ENOMEM;
	}
	qmp_server_set_event_names(vm->qmp, control_event_names);
	if (!vm_has_machine(vm))
		qmp_server_set_no_machine(vm->qmp,
					  "no machine: plugvm-qemu was started with -machine none");
	/* Guest-triggered events are rate-limited per CPU slot; the last key is "no slot". */
	qmp_server_set_event_keys(vm->qmp, vm->cfg->max_cpus + 1);
	/* Jailed, DIR is "/" now: DIR/NAME is /NAME (clients still use the host path). */
	if (vm->cfg->jail_dir)
		path = jail_inner_path(path);
	err = vm->cfg->qmp_fd >= 0 ? qmp_server_listen_fd(vm->qmp, vm->cfg->qmp_fd)
				   : qmp_server_listen(vm->qmp, path);
	if (err) {
		qmp_server_destroy(vm->qmp);
		vm->qmp = NULL;
		return err;
	}
	/* Not a warning, but shown unless --quiet: users need the path to connect. */
	if (!vm->cfg->qmp_path && vm->cfg->qmp_fd < 0 && log_get_level() >= LOG_WARN)
		fprintf(stderr, "plugvm: QMP socket: %s\n", path);
	return 0;
}

void control_stop(struct vm *vm, int status)
{
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
		reason = atomic_load(&vm->reset_shutdown) ? "guest-reset" : "guest-shutdown";
		guest = true;
	}
	qmp_server_event(vm->qmp, "SHUTDOWN", cause(guest, reason));
	qmp_server_flush(vm->qmp, 1000);
	qmp_server_destroy(vm->qmp);
	vm->qmp = NULL;
}

void control_free(struct vm *vm)
{
	control_agent_free(vm);
}
