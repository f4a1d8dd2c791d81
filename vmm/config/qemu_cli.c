// SPDX-License-Identifier: MIT
/*
 * plugvm-qemu's command line (qemu_cli.h): the table of QEMU's options, the simple ones'
 * handlers and the refusals. Options are "-name VALUE" (one dash or two, the value always
 * the next argument, as QEMU); an option not in the table is an error.
 */
#include "qemu_cli_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * gcc 12's -fanalyzer loses heap pointers stored through the vm_config reached from the
 * parser's state and reports them as leaked; test_qemu_cli under ASan (make check-san)
 * checks these paths for real leaks.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif

const char qemu_cli_usage[] =
    "usage: plugvm-qemu [QEMU options]\n"
    "\n"
    "plugvm with QEMU's command line, as libvirt's QEMU driver writes it for a domain whose\n"
    "<emulator> names this program: -machine, -accel kvm, -cpu host, -m, -smp, -kernel,\n"
    "-append, -qmp, -chardev, -mon, -device isa-serial, -add-fd, -name, -uuid, -S,\n"
    "-no-shutdown, -no-reboot, -pidfile, -daemonize and the rest in README, \"plugvm-qemu\".\n"
    "What plugvm cannot do (disks, networks, USB, graphics, sound) is refused with the\n"
    "domain XML element to remove. Exit status: as plugvm's (2: bad usage).\n";

enum config_status qcli_fail(struct qcli *q, const char *fmt, ...)
{
	va_list ap;

	if (q->err && q->errlen) {
		va_start(ap, fmt);
		vsnprintf(q->err, q->errlen, fmt, ap);
		va_end(ap);
	}
	return CONFIG_ERROR;
}

int qcli_bool(const char *val, bool *out)
{
	if (!strcmp(val, "on") || !strcmp(val, "yes") || !strcmp(val, "true")) {
		*out = true;
		return 0;
	}
	if (!strcmp(val, "off") || !strcmp(val, "no") || !strcmp(val, "false")) {
		*out = false;
		return 0;
	}
	return -EINVAL;
}

enum config_status qcli_opts(struct qcli *q, struct qopts *o, const char *val, const char *implied,
			     const char *opt)
{
	return qopts_parse(o, val, implied, opt, q->err, q->errlen) ? CONFIG_ERROR : CONFIG_RUN;
}

enum config_status qcli_done(struct qcli *q, struct qopts *o, const char *opt, const char *hint)
{
	int ret = qopts_check_used(o, opt, hint, q->err, q->errlen);

	qopts_free(o);
	return ret ? CONFIG_ERROR : CONFIG_RUN;
}

/* *dst = a copy of val; CONFIG_ERROR "out of memory" if it cannot be copied. */
static enum config_status set_str(struct qcli *q, char **dst, const char *val)
{
	return config_replace_str(dst, val) ? qcli_fail(q, "out of memory") : CONFIG_RUN;
}

/* A key's value that must be one of the words in `ok` (NUL-separated, ending "\0\0"). */
static enum config_status one_of(struct qcli *q, const char *opt, const char *key, const char *val,
				 const char *ok, const char *hint)
{
	const char *w;

	if (!val)
		return CONFIG_RUN;
	for (w = ok; *w; w += strlen(w) + 1)
		if (!strcmp(w, val))
			return CONFIG_RUN;
	return qcli_fail(q, "%s: %s=%s is not supported%s%s", opt, key, val, hint ? ": " : "",
			 hint ? hint : "");
}

static enum config_status opt_name(struct qcli *q, const char *val)
{
	struct qopts o;
	const char *guest, *dbg;
	bool b;

	if (qcli_opts(q, &o, val, "guest", "-name"))
		return CONFIG_ERROR;
	guest = qopts_take(&o, "guest");
	dbg = qopts_take(&o, "debug-threads");
	if (dbg && qcli_bool(dbg, &b)) {
		qcli_fail(q, "-name: debug-threads=%s is not on or off", dbg);
		qopts_free(&o);
		return CONFIG_ERROR;
	}
	if (guest && set_str(q, &q->name, guest)) {
		qopts_free(&o);
		return CONFIG_ERROR;
	}
	return qcli_done(q, &o, "-name", NULL);
}

static enum config_status opt_paused(struct qcli *q, const char *val)
{
	(void)val;
	q->cfg->start_paused = true;
	return CONFIG_RUN;
}

/* Options that change nothing in plugvm (see the report table in qemu_cli.h's docs). */
static enum config_status opt_noop(struct qcli *q, const char *val)
{
	(void)q, (void)val;
	return CONFIG_RUN;
}

static enum config_status opt_nodefaults(struct qcli *q, const char *val)
{
	(void)val;
	q->nodefaults = true;
	return CONFIG_RUN;
}

static enum config_status opt_accel(struct qcli *q, const char *val)
{
	struct qopts o;
	const char *a;

	if (qcli_opts(q, &o, val, "accel", "-accel"))
		return CONFIG_ERROR;
	a = qopts_take(&o, "accel");
	if (!a || strcmp(a, "kvm")) {
		qcli_fail(q, "-accel %s: plugvm runs on KVM only: use <domain type='kvm'>",
			  a ? a : "");
		qopts_free(&o);
		return CONFIG_ERROR;
	}
	return qcli_done(q, &o, "-accel", NULL);
}

static enum config_status mem_size(struct qcli *q, const char *opt, const char *val,
				   uint64_t *bytes)
{
	if (config_parse_mem(val, bytes))
		return qcli_fail(q, "%s: bad memory size '%s' (e.g. 96, 96M, 98304k)", opt, val);
	if (*bytes < CONFIG_MIN_MEM_BYTES || *bytes > CONFIG_MAX_MEM_BYTES)
		return qcli_fail(q, "%s: %s is outside %lluM..%lluG (<memory>)", opt, val,
				 CONFIG_MIN_MEM_BYTES >> 20, CONFIG_MAX_MEM_BYTES >> 30);
	return CONFIG_RUN;
}

static enum config_status opt_mem(struct qcli *q, const char *val)
{
	struct qopts o;
	const char *size;

	if (qcli_opts(q, &o, val, "size", "-m"))
		return CONFIG_ERROR;
	size = qopts_take(&o, "size");
	if (qopts_take(&o, "slots") || qopts_take(&o, "maxmem")) {
		qopts_free(&o);
		return qcli_fail(q, "-m: slots/maxmem: plugvm has no memory hotplug: remove "
				    "<maxMemory> from the domain XML");
	}
	if (!size || mem_size(q, "-m", size, &q->cfg->mem_bytes)) {
		qopts_free(&o);
		return size ? CONFIG_ERROR : qcli_fail(q, "-m: no size given");
	}
	q->have_m = true;
	return qcli_done(q, &o, "-m", NULL);
}

static enum config_status opt_overcommit(struct qcli *q, const char *val)
{
	struct qopts o;
	const char *lock, *pm;

	if (qcli_opts(q, &o, val, NULL, "-overcommit"))
		return CONFIG_ERROR;
	lock = qopts_take(&o, "mem-lock");
	pm = qopts_take(&o, "cpu-pm");
	if (one_of(q, "-overcommit", "mem-lock", lock, "on\0off\0", NULL) ||
	    one_of(q, "-overcommit", "cpu-pm", pm, "off\0",
		   "plugvm leaves idle vCPUs to KVM: remove <feature policy='require' "
		   "name='...'/> or the domain's <pm>")) {
		qopts_free(&o);
		return CONFIG_ERROR;
	}
	/* <memoryBacking><locked/>: the same mlockall() (rt_tune.c) as plugvm's own. */
	if (lock)
		q->cfg->rt.mlock = !strcmp(lock, "on");
	return qcli_done(q, &o, "-overcommit", NULL);
}

static enum config_status opt_smp(struct qcli *q, const char *val)
{
	if (config_parse_smp_topo(val, &q->cfg->nr_cpus, &q->cfg->max_cpus, &q->cfg->topo, q->err,
				  q->errlen))
		return CONFIG_ERROR;
	return CONFIG_RUN;
}

static enum config_status opt_uuid(struct qcli *q, const char *val)
{
	static const char shape[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
	size_t i;

	for (i = 0; i < sizeof(shape) - 1; i++)
		if (!val[i] ||
		    (shape[i] == '-' ? val[i] != '-' : !strchr("0123456789abcdefABCDEF", val[i])))
			break;
	if (i != sizeof(shape) - 1 || val[i])
		return qcli_fail(q, "-uuid: '%s' is not a UUID (%s)", val, shape);
	return set_str(q, &q->uuid, val);
}

static enum config_status opt_display(struct qcli *q, const char *val)
{
	if (strcmp(val, "none"))
		return qcli_fail(q,
				 "-display %s: plugvm has no display: remove <graphics> and "
				 "<video> from the domain XML",
				 val);
	return CONFIG_RUN;
}

static enum config_status opt_qmp(struct qcli *q, const char *val)
{
	char *fn;

	if (q->have_qmp || q->mon_chardev)
		return qcli_fail(q, "-qmp: plugvm serves one QMP monitor");
	if (strncmp(val, "unix:", 5))
		return qcli_fail(q,
				 "-qmp %s: plugvm serves QMP on a Unix socket only "
				 "(unix:PATH,server=on,wait=off)",
				 val);
	if (config_parse_qmp(q->cfg, val, q->err, q->errlen))
		return CONFIG_ERROR;
	q->have_qmp = true;
	if (q->cfg->nr_chardevs == CONFIG_MAX_CHARDEVS)
		return qcli_fail(q, "-qmp: too many character devices");
	if (asprintf(&fn, "unix:%s,server=on", q->cfg->qmp_path) < 0)
		return qcli_fail(q, "out of memory");
	q->cfg->chardevs[q->cfg->nr_chardevs].filename = fn;
	q->cfg->chardevs[q->cfg->nr_chardevs].label = strdup("compat_monitor0");
	if (!q->cfg->chardevs[q->cfg->nr_chardevs++].label)
		return qcli_fail(q, "out of memory");
	return CONFIG_RUN;
}

static enum config_status opt_mon(struct qcli *q, const char *val)
{
	struct qopts o;
	const char *chr, *mode;

	if (qcli_opts(q, &o, val, "chardev", "-mon"))
		return CONFIG_ERROR;
	chr = qopts_take(&o, "chardev");
	mode = qopts_take(&o, "mode");
	qopts_take(&o, "id");
	if (!chr || !mode || strcmp(mode, "control")) {
		qopts_free(&o);
		return qcli_fail(q, "-mon: plugvm serves QMP only: chardev=ID,mode=control");
	}
	if (q->have_qmp || q->mon_chardev) {
		qopts_free(&o);
		return qcli_fail(q, "-mon: plugvm serves one QMP monitor");
	}
	if (set_str(q, &q->mon_chardev, chr)) {
		qopts_free(&o);
		return CONFIG_ERROR;
	}
	return qcli_done(q, &o, "-mon", NULL);
}

static enum config_status opt_monitor(struct qcli *q, const char *val)
{
	if (strcmp(val, "none"))
		return qcli_fail(q,
				 "-monitor %s: plugvm has no human monitor (HMP): use -qmp or "
				 "-mon mode=control",
				 val);
	return CONFIG_RUN;
}

static enum config_status opt_rtc(struct qcli *q, const char *val)
{
	struct qopts o;

	if (qcli_opts(q, &o, val, NULL, "-rtc"))
		return CONFIG_ERROR;
	/* plugvm's guest keeps time by the TSC: the base and the drift policy change nothing. */
	if (one_of(q, "-rtc", "base", qopts_take(&o, "base"), "utc\0",
		   "plugvm's clock is UTC: use <clock offset='utc'>") ||
	    one_of(q, "-rtc", "driftfix", qopts_take(&o, "driftfix"), "slew\0none\0", NULL) ||
	    one_of(q, "-rtc", "clock", qopts_take(&o, "clock"), "host\0", NULL)) {
		qopts_free(&o);
		return CONFIG_ERROR;
	}
	return qcli_done(q, &o, "-rtc", NULL);
}

static enum config_status opt_no_shutdown(struct qcli *q, const char *val)
{
	(void)val;
	q->cfg->on_poweroff = ACTION_PAUSE;
	return CONFIG_RUN;
}

static enum config_status opt_no_reboot(struct qcli *q, const char *val)
{
	(void)val;
	q->cfg->on_reset = ACTION_EXIT;
	return CONFIG_RUN;
}

static enum config_status opt_boot(struct qcli *q, const char *val)
{
	struct qopts o;
	bool b;
	const char *strict, *menu;

	if (qcli_opts(q, &o, val, "order", "-boot"))
		return CONFIG_ERROR;
	/* plugvm boots -kernel only: the firmware's order and menu have nothing to choose. */
	qopts_take(&o, "order");
	strict = qopts_take(&o, "strict");
	menu = qopts_take(&o, "menu");
	if ((strict && qcli_bool(strict, &b)) || (menu && (qcli_bool(menu, &b) || b))) {
		qopts_free(&o);
		return qcli_fail(q,
				 "-boot %s: strict=on|off and menu=off only (plugvm has no "
				 "boot menu: remove <bootmenu enable='yes'/>)",
				 val);
	}
	return qcli_done(q, &o, "-boot", NULL);
}

static enum config_status opt_kernel(struct qcli *q, const char *val)
{
	if (!*val)
		return qcli_fail(q, "-kernel: empty file name");
	q->have_kernel = true;
	return set_str(q, &q->kernel_path, val);
}

static enum config_status opt_append(struct qcli *q, const char *val)
{
	if (strlen(val) > CONFIG_MAX_CMDLINE)
		return qcli_fail(q, "-append: command line longer than %d bytes (<cmdline>)",
				 CONFIG_MAX_CMDLINE);
	return set_str(q, &q->cmdline, val);
}

enum config_status qcli_keep_fd(struct qcli *q, const char *opt, const char *val, int *fd)
{
	unsigned long long n;
	unsigned i;

	if (!val || config_parse_uint(val, strlen(val), QCLI_MAX_FD, &n) || n < 3)
		return qcli_fail(q, "%s: fd=%s is not an inherited descriptor number (3 or more)",
				 opt, val ? val : "");
	*fd = (int)n;
	for (i = 0; i < q->cfg->nr_keep_fds; i++)
		if (q->cfg->keep_fds[i] == *fd)
			return CONFIG_RUN;
	if (q->cfg->nr_keep_fds == sizeof(q->cfg->keep_fds) / sizeof(q->cfg->keep_fds[0]))
		return qcli_fail(q, "%s: too many inherited descriptors", opt);
	q->cfg->keep_fds[q->cfg->nr_keep_fds++] = *fd;
	return CONFIG_RUN;
}

static enum config_status opt_add_fd(struct qcli *q, const char *val)
{
	struct qopts o;
	const char *set, *fd;
	unsigned long long n;
	unsigned i;
	int f;

	if (qcli_opts(q, &o, val, NULL, "-add-fd"))
		return CONFIG_ERROR;
	set = qopts_take(&o, "set");
	fd = qopts_take(&o, "fd");
	qopts_take(&o, "opaque");
	if (!set || config_parse_uint(set, strlen(set), 1u << 20, &n)) {
		qcli_fail(q, "-add-fd: set=%s is not a set number", set ? set : "");
		qopts_free(&o);
		return CONFIG_ERROR;
	}
	if (qcli_keep_fd(q, "-add-fd", fd, &f)) {
		qopts_free(&o);
		return CONFIG_ERROR;
	}
	for (i = 0; i < q->nr_fdsets; i++)
		if (q->fdsets[i].set == n) {
			qopts_free(&o);
			return qcli_fail(q,
					 "-add-fd: set %llu has a descriptor already (plugvm "
					 "takes one per set)",
					 n);
		}
	if (q->nr_fdsets == QCLI_MAX_FDSETS) {
		qopts_free(&o);
		return qcli_fail(q, "-add-fd: more than %d sets", QCLI_MAX_FDSETS);
	}
	q->fdsets[q->nr_fdsets].set = (unsigned)n;
	q->fdsets[q->nr_fdsets++].fd = f;
	return qcli_done(q, &o, "-add-fd", NULL);
}

static enum config_status opt_audiodev(struct qcli *q, const char *val)
{
	struct qopts o;
	const char *drv;

	if (qcli_opts(q, &o, val, "driver", "-audiodev"))
		return CONFIG_ERROR;
	drv = qopts_take(&o, "driver");
	if (!qopts_take(&o, "id") || !drv || strcmp(drv, "none")) {
		qopts_free(&o);
		return qcli_fail(q, "-audiodev: plugvm has no sound: only driver none with an id "
				    "(remove <sound> and <audio> from the domain XML)");
	}
	return qcli_done(q, &o, "-audiodev", NULL);
}

static enum config_status opt_sandbox(struct qcli *q, const char *val)
{
	static const char *const keys[] = { "obsolete", "elevateprivileges", "spawn",
					    "resourcecontrol" };
	struct qopts o;
	const char *en;
	bool on;
	size_t i;

	if (qcli_opts(q, &o, val, "enable", "-sandbox"))
		return CONFIG_ERROR;
	en = qopts_take(&o, "enable");
	if (!en || qcli_bool(en, &on)) {
		qopts_free(&o);
		return qcli_fail(q, "-sandbox: '%s': on or off first", val);
	}
	/* plugvm's own filters deny all of these whatever is asked: allow is not looser. */
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (one_of(q, "-sandbox", keys[i], qopts_take(&o, keys[i]),
			   "deny\0allow\0children\0", NULL)) {
			qopts_free(&o);
			return CONFIG_ERROR;
		}
	q->cfg->sandbox_disabled = !on;
	return qcli_done(q, &o, "-sandbox", NULL);
}

static enum config_status opt_msg(struct qcli *q, const char *val)
{
	struct qopts o;
	const char *ts, *gn;
	bool b = false, g = false;

	if (qcli_opts(q, &o, val, NULL, "-msg"))
		return CONFIG_ERROR;
	ts = qopts_take(&o, "timestamp");
	gn = qopts_take(&o, "guest-name");
	/* plugvm's lines name the program, not the guest: guest-name=on is not offered. */
	if ((ts && qcli_bool(ts, &b)) || (gn && (qcli_bool(gn, &g) || g))) {
		qopts_free(&o);
		return qcli_fail(q, "-msg: '%s': timestamp=on|off, guest-name=off", val);
	}
	q->cfg->log_timestamps = b;
	return qcli_done(q, &o, "-msg", NULL);
}

static enum config_status opt_pidfile(struct qcli *q, const char *val)
{
	if (!*val)
		return qcli_fail(q, "-pidfile: empty file name");
	return set_str(q, &q->pidfile, val);
}

static enum config_status opt_daemonize(struct qcli *q, const char *val)
{
	(void)val;
	q->cfg->daemonize = true;
	return CONFIG_RUN;
}

/* -global DRIVER.PROP=VALUE: only the settings plugvm's machine already has. */
static enum config_status opt_global(struct qcli *q, const char *val)
{
	static const char *const harmless[] = {
		"kvm-pit.lost_tick_policy=delay", /* no PIT: no ticks to lose */
		"PIIX4_PM.disable_s3=1", /* no S3 in plugvm's DSDT */
		"PIIX4_PM.disable_s4=1", /* no S4 either */
	};
	size_t i;

	for (i = 0; i < sizeof(harmless) / sizeof(harmless[0]); i++)
		if (!strcmp(val, harmless[i]))
			return CONFIG_RUN;
	return qcli_fail(q,
			 "-global %s: plugvm's devices have no such property (remove what "
			 "sets it from the domain XML: <pm>, <timer>, <features>)",
			 val);
}

static enum config_status opt_vga(struct qcli *q, const char *val)
{
	if (strcmp(val, "none"))
		return qcli_fail(q,
				 "-vga %s: plugvm has no video device: use <video><model "
				 "type='none'/></video>",
				 val);
	return CONFIG_RUN;
}

static enum config_status opt_help(struct qcli *q, const char *val)
{
	(void)q, (void)val;
	return CONFIG_HELP;
}

static enum config_status opt_version(struct qcli *q, const char *val)
{
	(void)q, (void)val;
	return CONFIG_VERSION;
}

typedef enum config_status qcli_handler(struct qcli *q, const char *val);

struct qoption {
	const char *name;
	bool has_arg;
	qcli_handler *apply;
};

static const struct qoption qoptions[] = {
	{ "name", true, opt_name },
	{ "S", false, opt_paused },
	{ "object", true, qcli_object },
	{ "device", true, qcli_device },
	{ "machine", true, qcli_machine },
	{ "M", true, qcli_machine },
	{ "accel", true, opt_accel },
	{ "enable-kvm", false, opt_noop },
	{ "cpu", true, qcli_cpu },
	{ "m", true, opt_mem },
	{ "overcommit", true, opt_overcommit },
	{ "smp", true, opt_smp },
	{ "uuid", true, opt_uuid },
	{ "display", true, opt_display },
	{ "nographic", false, opt_noop },
	{ "no-user-config", false, opt_noop },
	{ "nodefconfig", false, opt_noop },
	{ "nodefaults", false, opt_nodefaults },
	{ "qmp", true, opt_qmp },
	{ "chardev", true, qcli_chardev },
	{ "mon", true, opt_mon },
	{ "monitor", true, opt_monitor },
	{ "rtc", true, opt_rtc },
	{ "no-shutdown", false, opt_no_shutdown },
	{ "no-reboot", false, opt_no_reboot },
	{ "boot", true, opt_boot },
	{ "kernel", true, opt_kernel },
	{ "append", true, opt_append },
	{ "add-fd", true, opt_add_fd },
	{ "audiodev", true, opt_audiodev },
	{ "sandbox", true, opt_sandbox },
	{ "msg", true, opt_msg },
	{ "pidfile", true, opt_pidfile },
	{ "daemonize", false, opt_daemonize },
	{ "global", true, opt_global },
	{ "serial", true, qcli_serial },
	{ "vga", true, opt_vga },
	{ "h", false, opt_help },
	{ "help", false, opt_help },
	{ "version", false, opt_version },
};

/* argv[*i] applied to q (*i moves past its value). */
static enum config_status apply_one(struct qcli *q, int argc, char *const argv[], int *i)
{
	const char *arg = argv[*i], *name;
	size_t k;

	if (arg[0] != '-' || !arg[1])
		return qcli_fail(q, "unexpected argument '%s' (QEMU's options start with '-')",
				 arg);
	name = arg + 1 + (arg[1] == '-');
	if (qcli_refusal(name))
		return qcli_fail(q, "-%s: %s", name, qcli_refusal(name));
	for (k = 0; k < sizeof(qoptions) / sizeof(qoptions[0]); k++) {
		if (strcmp(name, qoptions[k].name))
			continue;
		if (!qoptions[k].has_arg)
			return qoptions[k].apply(q, NULL);
		if (*i + 1 >= argc)
			return qcli_fail(q, "-%s: needs a value", name);
		return qoptions[k].apply(q, argv[++*i]);
	}
	return qcli_fail(q,
			 "unknown option '%s' (plugvm-qemu takes the options libvirt's "
			 "QEMU driver writes: README, \"plugvm-qemu\")",
			 arg);
}

bool qemu_cli_invoked(const char *argv0)
{
	const char *base = argv0 ? strrchr(argv0, '/') : NULL;

	if (!argv0)
		return false;
	return !strcmp(base ? base + 1 : argv0, QEMU_CLI_NAME);
}

enum config_status qemu_cli_parse(struct vm_config *cfg, int argc, char *const argv[], char *err,
				  size_t errlen)
{
	struct qcli q = { .cfg = cfg, .err = err, .errlen = errlen };
	enum config_status st = CONFIG_RUN;
	int i;

	config_defaults(cfg);
	cfg->on_reset = ACTION_RESET; /* QEMU reboots the guest unless -no-reboot */
	for (i = 1; i < argc && st == CONFIG_RUN; i++)
		st = apply_one(&q, argc, argv, &i);
	if (st == CONFIG_RUN)
		st = qcli_finish(&q);
	qcli_free(&q);
	if (st == CONFIG_RUN && !cfg->cmdline && !(cfg->cmdline = strdup("")))
		st = qcli_fail(&q, "out of memory");
	if (st == CONFIG_RUN && config_validate(cfg, err, errlen))
		st = CONFIG_ERROR;
	return st;
}
