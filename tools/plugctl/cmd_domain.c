// SPDX-License-Identifier: MIT
/*
 * virsh's lifecycle verbs and domain state on a plugvm VM, over QEMU's QMP commands as
 * libvirt's QEMU driver sends them: shutdown (system_powerdown: the guest decides; returns
 * once asked, as virsh does), destroy (quit; returns once the VM is gone), reboot
 * (system_reset), suspend (stop), resume (cont); dominfo and domstate from query-status,
 * query-plugvm-domain, the CPU slots and the VMM process's /proc.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "plugctl.h"

#define MAX_VCPUS 1024 /* PLUGVM_MAX_CPUS */

/* The domain's name, as virsh quotes it: query-plugvm-domain's, else "plugvm". */
static void domain_name(struct conn *c, char *buf, size_t size)
{
	struct json_object *d = conn_cmd(c, "query-plugvm-domain", NULL);

	snprintf(buf, size, "%s",
		 tty(get_str(d, "name", NULL) ? get_str(d, "name", NULL) : "plugvm"));
	json_object_put(d);
}

/* Run `cmd` (no arguments) and say, as virsh does, "Domain 'NAME' <done>". */
static int lifecycle(struct conn *c, const char *cmd, const char *done)
{
	char name[128];

	domain_name(c, name, sizeof(name));
	json_object_put(conn_cmd(c, cmd, NULL));
	if (!json_out)
		printf("Domain '%s' %s\n\n", name, done);
	return 0;
}

/* No virsh flags here but the given one (or none), and no positional argument. */
static void only_flag(const char *verb, char **argv, const char *flag)
{
	for (; *argv; argv++)
		if (!flag || strcmp(*argv, flag))
			die(EXIT_USAGE, "error: command '%s' doesn't support option %s", verb,
			    *argv);
}

int cmd_shutdown(struct conn *c, char **argv)
{
	/* virsh --mode acpi is what QEMU's driver does without an agent: the power button. */
	if (argv[0] &&
	    (strcmp(argv[0], "--mode") || !argv[1] || strcmp(argv[1], "acpi") || argv[2]))
		die(EXIT_USAGE, "error: shutdown takes no argument but --mode acpi (plugvm has the "
				"ACPI power button only)");
	return lifecycle(c, "system_powerdown", "is being shutdown");
}

int cmd_reboot(struct conn *c, char **argv)
{
	only_flag("reboot", argv, NULL);
	return lifecycle(c, "system_reset", "is being rebooted");
}

int cmd_suspend(struct conn *c, char **argv)
{
	only_flag("suspend", argv, NULL);
	return lifecycle(c, "stop", "suspended");
}

int cmd_resume(struct conn *c, char **argv)
{
	only_flag("resume", argv, NULL);
	return lifecycle(c, "cont", "resumed");
}

int cmd_destroy(struct conn *c, char **argv)
{
	int64_t deadline = now_ms() + c->timeout_ms;
	char name[128], buf[4096];

	/* --graceful: virsh's SIGTERM only; quit is as graceful as plugvm gets. */
	only_flag("destroy", argv, "--graceful");
	domain_name(c, name, sizeof(name));
	json_object_put(conn_cmd(c, "quit", NULL));
	/* virsh returns once the domain is gone: here, once the VM closes its socket. */
	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int64_t left = deadline - now_ms();
		ssize_t n;

		if (left <= 0)
			die(EXIT_NO,
			    "error: Failed to destroy domain '%s': the VM did not end in "
			    "%d s",
			    name, c->timeout_ms / 1000);
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			die(EXIT_USAGE, "poll: %s", strerror(errno));
		n = read(c->fd, buf, sizeof(buf));
		if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			break;
	}
	if (!json_out)
		printf("Domain '%s' destroyed\n\n", name);
	return 0;
}

/* QMP's run state as libvirt names it: its state, and its reason for --reason. */
static void state_of(const char *status, const char **state, const char **reason)
{
	static const struct {
		const char *qmp, *state, *reason;
	} map[] = {
		{ "running", "running", "unknown" },
		{ "paused", "paused", "user" },
		{ "prelaunch", "paused", "starting up" },
		{ "shutdown", "paused", "shutting down" },
		{ "guest-panicked", "crashed", "panicked" },
		{ "internal-error", "paused", "unknown" },
		{ "io-error", "paused", "I/O error" },
		{ "watchdog", "paused", "watchdog" },
		{ "debug", "paused", "debugged" },
		{ "inmigrate", "paused", "migrating" },
		{ "postmigrate", "paused", "migrating" },
		{ "finish-migrate", "paused", "migrating" },
		{ "suspended", "pmsuspended", "unknown" },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (status && !strcmp(status, map[i].qmp)) {
			*state = map[i].state;
			*reason = map[i].reason;
			return;
		}
	*state = "paused";
	*reason = "unknown";
}

/* domstate [--reason] */
int cmd_domstate(struct conn *c, char **argv)
{
	struct json_object *r;
	const char *state, *reason;

	only_flag("domstate", argv, "--reason");
	r = conn_cmd(c, "query-status", NULL);
	state_of(get_str(r, "status", NULL), &state, &reason);
	if (json_out)
		print_json(r);
	else if (argv[0])
		printf("%s (%s)\n\n", state, reason);
	else
		printf("%s\n\n", state);
	json_object_put(r);
	return 0;
}

/* dominfo: virsh's fields, each from what the VM and its host say. */
int cmd_dominfo(struct conn *c, char **argv)
{
	static int tids[MAX_VCPUS];
	struct json_object *d = conn_cmd(c, "query-plugvm-domain", NULL);
	struct json_object *st = conn_cmd(c, "query-status", NULL);
	const char *name = get_str(d, "name", NULL), *uuid = get_str(d, "uuid", NULL);
	const char *state, *reason;
	unsigned long long ticks = 0;
	size_t n = vcpu_threads(c, tids, MAX_VCPUS), i, online = 0;
	long long kib = (long long)(get_i64(d, "memory-bytes") / 1024);
	int tgid = 0;

	only_flag("dominfo", argv, NULL);
	for (i = 0; i < n; i++)
		if (tids[i]) {
			online++;
			if (!tgid)
				tgid = proc_tgid(tids[i]);
		}
	if (tgid)
		proc_stat(tgid, 0, &ticks, NULL);
	state_of(get_str(st, "status", NULL), &state, &reason);
	/* No libvirt domain id: '-', as virsh shows for a domain that has none. */
	printf("%-15s %s\n", "Id:", "-");
	printf("%-15s %s\n", "Name:", tty(name ? name : "plugvm"));
	printf("%-15s %s\n", "UUID:", uuid ? tty(uuid) : "");
	printf("%-15s %s\n", "OS Type:", "hvm");
	printf("%-15s %s\n", "State:", state);
	printf("%-15s %zu\n", "CPU(s):", online);
	if (tgid)
		printf("%-15s %.1fs\n", "CPU time:", ticks_to_s(ticks));
	printf("%-15s %lld KiB\n", "Max memory:", kib);
	/* No balloon: the guest has all of it. */
	printf("%-15s %lld KiB\n", "Used memory:", kib);
	printf("%-15s %s\n", "Persistent:", "no");
	printf("%-15s %s\n", "Autostart:", "disable");
	printf("%-15s %s\n", "Managed save:", "no");
	printf("%-15s %s\n", "Security model:", "none");
	printf("%-15s %s\n\n", "Security DOI:", "0");
	json_object_put(st);
	json_object_put(d);
	return 0;
}
