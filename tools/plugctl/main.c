// SPDX-License-Identifier: MIT
/*
 * plugctl: the friendly client of plugvm's QMP control socket.
 *
 *   plugctl [-s PATH] [--json] [-t SECONDS] cpus | cpu add [SLOT] | cpu del SLOT |
 *           cpu set N | states | cpuhp | target CPU STATE | fail CPU STATE |
 *           timers [CPU] | sched [CPU] | latency | autoscale [on KEY=VALUE... | off] |
 *           status | nmi | quit |
 *           qmp '{"execute": ...}'
 *
 * Human-readable output by default, the raw QMP values with --json; exit status 0 on
 * success, 1 when the VM or the guest says no, 2 on bad usage or no connection. The
 * commands are one table: a verb (and a sub-verb), how many arguments, what to say when
 * that number is wrong, and the function that runs it once connected.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugctl.h"
#include "vmm/version.h"

static const char usage[] =
    "usage: plugctl [-s PATH] [--json] [-t SECONDS] COMMAND\n"
    "\n"
    "  cpus             every possible CPU: slot, topology, present or not, host thread\n"
    "  cpu add [SLOT]   hot-add a CPU (default: the lowest free slot); waits for the guest\n"
    "  cpu del SLOT     hot-remove the CPU in SLOT; waits for the guest to eject it\n"
    "  cpu set N        add or remove CPUs until N are present\n"
    "  states           the guest's cpuhp states: id, name, section, what they allow\n"
    "  cpuhp            every CPU's current and target cpuhp state\n"
    "  target CPU STATE move CPU to cpuhp STATE (name or id); prints each state's time\n"
    "  fail CPU STATE   fail STATE's callback in CPU's next transition (STATE none: clear)\n"
    "  timers [CPU]     timer wheel statistics per CPU and level\n"
    "  sched [CPU]      run-queue statistics per CPU\n"
    "  stats [NAME...]  KVM's counters per vCPU (default: VM exits by reason)\n"
    "\n"
    "  virsh's words, with virsh's flags (the VM is a running transient domain: --live and\n"
    "  --current act on it; --config, --guest and setvcpus --maximum are refused):\n"
    "  setvcpus N [--live|--current] [--hotpluggable]   cpu set N\n"
    "  vcpucount [--maximum|--active] [--live|--current] maximum and current vCPUs\n"
    "  vcpuinfo         each vCPU's host CPU, CPU time and affinity\n"
    "  vcpupin [VCPU [CPULIST]]  show or set a vCPU thread's host CPU affinity\n"
    "  shutdown [--mode acpi]    ACPI power button (system_powerdown); returns at once\n"
    "  destroy [--graceful]      end the VM (quit); returns once it is gone\n"
    "  reboot           reset the VM (system_reset): the guest boots again\n"
    "  suspend, resume  stop and continue the vCPUs (stop, cont)\n"
    "  dominfo          the domain's fields as virsh prints them\n"
    "  domstate [--reason]  running, paused, ... as virsh names them\n"
    "  dumpxml          the running VM as a libvirt domain document (plugvm --domain)\n"
    "\n"
    "  latency          the live figures of the guest's latency measurement, per CPU\n"
    "  autoscale [on [KEY=VALUE...] | off]\n"
    "                   vCPUs on demand: show, set (min, max, pressure, pressure-ms,\n"
    "                   idle, idle-ms, cooldown-ms, period-ms) or stop it\n"
    "  status           the VM's run state\n"
    "  nmi              an NMI to every vCPU (QMP inject-nmi): the plugvm guest prints\n"
    "                   each CPU's interrupt and timer state on its console\n"
    "  quit             stop the VM\n"
    "  qmp JSON         send one QMP command as given, print the reply\n"
    "\n"
    "  -s, --socket PATH   the VM's QMP socket (default: $PLUGVM_QMP, else the only\n"
    "                      plugvm-*.qmp someone listens on in $XDG_RUNTIME_DIR, or /tmp)\n"
    "  -j, --json          print QMP values as JSON\n"
    "  -t, --timeout SECS  how long to wait for the VM or the guest (default 60)\n"
    "  -h, --help, -V, --version\n"
    "\n"
    "Exit status: 0 done, 1 the VM or the guest said no, 2 bad usage, 3 no VM reached.\n";

bool json_out;

const char prog_name[] = "plugctl";

long parse_num(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0)
		die(EXIT_USAGE, "%s: '%s' is not a number", what, s);
	return v;
}

static int cmd_status(struct conn *c, char **argv)
{
	struct json_object *r = conn_cmd(c, "query-status", NULL);

	(void)argv;
	if (json_out)
		print_json(r);
	else
		printf("%s\n", tty(get_str(r, "status", NULL)));
	json_object_put(r);
	return 0;
}

/* A command without arguments whose reply says nothing: `said` tells a human it was done. */
static int run_plain(struct conn *c, const char *name, const char *said)
{
	json_object_put(conn_cmd(c, name, NULL));
	if (!json_out)
		printf("%s\n", said);
	return 0;
}

static int cmd_nmi(struct conn *c, char **argv)
{
	(void)argv;
	return run_plain(c, "inject-nmi", "NMI sent to every vCPU");
}

static int cmd_quit(struct conn *c, char **argv)
{
	(void)argv;
	return run_plain(c, "quit", "the VM is stopping");
}

/* One raw QMP command; its reply printed as it came, but for the id plugctl added. */
static int cmd_qmp(struct conn *c, char **argv)
{
	struct json_object *req = json_tokener_parse(argv[0]), *name, *args = NULL, *reply;
	int status;

	if (!req || !json_object_is_type(req, json_type_object) ||
	    !json_object_object_get_ex(req, "execute", &name) ||
	    !json_object_is_type(name, json_type_string))
		die(EXIT_USAGE, "qmp: expected {\"execute\": NAME, \"arguments\": {...}}");
	if (json_object_object_get_ex(req, "arguments", &args))
		json_object_get(args);
	reply = conn_execute(c, json_object_get_string(name), args);
	json_object_object_del(reply, "id");
	print_json(reply);
	status = json_object_object_get_ex(reply, "error", NULL) ? EXIT_NO : 0;
	json_object_put(reply);
	json_object_put(req);
	return status;
}

static const struct command {
	const char *verb, *sub; /* sub: the second word (cpu add), or NULL */
	int min_args, max_args; /* after the verb (and sub) */
	const char *misuse; /* what to say when the arguments do not fit */
	int (*run)(struct conn *c, char **argv); /* argv: the arguments, NULL-terminated */
} commands[] = {
	{ "cpus", NULL, 0, 0, "cpus takes no argument", cmd_cpus },
	{ "cpu", "add", 0, 1, "cpu add [SLOT] | cpu del SLOT | cpu set N", cmd_cpu_add },
	{ "cpu", "del", 1, 1, "cpu add [SLOT] | cpu del SLOT | cpu set N", cmd_cpu_del },
	{ "cpu", "set", 1, 1, "cpu add [SLOT] | cpu del SLOT | cpu set N", cmd_cpu_set },
	{ "states", NULL, 0, 0, "states takes no argument", cmd_states },
	{ "cpuhp", NULL, 0, 0, "cpuhp takes no argument", cmd_cpuhp },
	{ "target", NULL, 2, 2, "target CPU STATE", cmd_target },
	{ "fail", NULL, 2, 2, "fail CPU STATE", cmd_fail },
	{ "timers", NULL, 0, 1, "timers [CPU]", cmd_timers },
	{ "sched", NULL, 0, 1, "sched [CPU]", cmd_sched },
	{ "stats", NULL, 0, 16, "stats [NAME...] (at most 16)", cmd_stats },
	{ "setvcpus", NULL, 1, 8,
	  "setvcpus N [--live] [--config] [--current] [--maximum] [--guest]", cmd_setvcpus },
	{ "vcpucount", NULL, 0, 6,
	  "vcpucount [--maximum | --active] [--live | --config | --current] [--guest]",
	  cmd_vcpucount },
	{ "vcpuinfo", NULL, 0, 0, "vcpuinfo takes no argument", cmd_vcpuinfo },
	{ "vcpupin", NULL, 0, 5, "vcpupin [VCPU] [CPULIST] [--live | --config | --current]",
	  cmd_vcpupin },
	{ "shutdown", NULL, 0, 2, "shutdown [--mode acpi]", cmd_shutdown },
	{ "destroy", NULL, 0, 1, "destroy [--graceful]", cmd_destroy },
	{ "reboot", NULL, 0, 0, "reboot takes no argument", cmd_reboot },
	{ "suspend", NULL, 0, 0, "suspend takes no argument", cmd_suspend },
	{ "resume", NULL, 0, 0, "resume takes no argument", cmd_resume },
	{ "dominfo", NULL, 0, 0, "dominfo takes no argument", cmd_dominfo },
	{ "domstate", NULL, 0, 1, "domstate [--reason]", cmd_domstate },
	{ "dumpxml", NULL, 0, 0, "dumpxml takes no argument", cmd_dumpxml },
	{ "latency", NULL, 0, 0, "latency takes no argument", cmd_latency },
	{ "autoscale", NULL, 0, 9, "autoscale [on [KEY=VALUE...] | off]", cmd_autoscale },
	{ "status", NULL, 0, 0, "status takes no argument", cmd_status },
	{ "nmi", NULL, 0, 0, "nmi takes no argument", cmd_nmi },
	{ "quit", NULL, 0, 0, "quit takes no argument", cmd_quit },
	{ "qmp", NULL, 1, 1, "qmp takes one JSON argument", cmd_qmp },
};

/*
 * The command argv names, its arguments left in *args (NULL-terminated, as argv is);
 * dies with EXIT_USAGE when there is none or its arguments do not fit.
 */
static const struct command *find_command(char **argv, char ***args)
{
	const struct command *e, *verb = NULL;
	int n;

	for (e = commands; e < commands + sizeof(commands) / sizeof(commands[0]); e++) {
		if (strcmp(e->verb, argv[0]))
			continue;
		verb = e;
		if (e->sub && (!argv[1] || strcmp(e->sub, argv[1])))
			continue;
		*args = argv + (e->sub ? 2 : 1);
		for (n = 0; (*args)[n]; n++)
			;
		if (n < e->min_args || n > e->max_args)
			die(EXIT_USAGE, "%s", e->misuse);
		return e;
	}
	if (verb)
		die(EXIT_USAGE, "%s", verb->misuse);
	die(EXIT_USAGE, "unknown command '%s' (see --help)", argv[0]);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },  { "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' }, { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },	     { NULL, 0, NULL, 0 },
	};
	struct conn c = { .fd = -1, .timeout_ms = 60000 };
	const struct command *cmd;
	const char *path = NULL;
	char **args;
	int opt, status;

	while ((opt = getopt_long(argc, argv, "+s:jt:hV", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			path = optarg;
			break;
		case 'j':
			json_out = true;
			break;
		case 't':
			c.timeout_ms = (int)parse_num(optarg, "--timeout") * 1000;
			if (c.timeout_ms <= 0 || c.timeout_ms > 3600 * 1000)
				die(EXIT_USAGE, "--timeout: 1 to 3600 seconds");
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			printf("plugctl %s\n", PLUGVM_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fputs(usage, stderr);
		return EXIT_USAGE;
	}
	cmd = find_command(argv + optind, &args);
	conn_open(&c, path ? path : conn_default_socket());
	status = cmd->run(&c, args);
	conn_close(&c);
	return status;
}
