// SPDX-License-Identifier: MIT
/*
 * QEMU-style command-line parsing into struct vm_config: the flags, -m and --qmp, and the
 * helpers the other parsers share (config_smp.c: -smp, config_chaos.c: --chaos). Pure: no
 * I/O, no exit.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "plugvm_abi.h"

void config_set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int config_parse_uint(const char *s, size_t len, unsigned long long max, unsigned long long *out)
{
	unsigned long long v = 0;
	size_t i;

	if (len == 0)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		/* The digit alone may exceed a small max: max - digit must not wrap. */
		if ((unsigned)(s[i] - '0') > max || v > (max - (unsigned)(s[i] - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	*out = v;
	return 0;
}

int config_parse_mem(const char *s, uint64_t *out)
{
	size_t len = strlen(s);
	unsigned long long v, shift = 20;
	int ret;

	if (len && strchr("kKmMgGtT", s[len - 1])) {
		switch (s[len - 1]) {
		case 'k':
		case 'K':
			shift = 10;
			break;
		case 'm':
		case 'M':
			shift = 20;
			break;
		case 'g':
		case 'G':
			shift = 30;
			break;
		default:
			shift = 40;
			break;
		}
		len--;
	}
	ret = config_parse_uint(s, len, ULLONG_MAX >> shift, &v);
	if (ret)
		return -EINVAL;
	if (v == 0)
		return -EINVAL;
	*out = v << shift;
	return 0;
}

enum opt_arg {
	ARG_NONE, /* a flag */
	ARG_REQUIRED, /* the next argument, or after '=' */
	ARG_OPTIONAL, /* only after '=' (--chaos=SPEC): a bare flag never eats the next one */
};

/*
 * An option's handler: applies `val` (NULL for a flag, or for an optional value not given)
 * to cfg. Returns CONFIG_RUN to go on with the next argument, CONFIG_HELP or
 * CONFIG_VERSION to stop there, or CONFIG_ERROR with err set.
 */
typedef enum config_status opt_handler(struct vm_config *cfg, const char *val, char *err,
				       size_t errlen);

int config_replace_str(char **dst, const char *src)
{
	char *copy = strdup(src);

	if (!copy)
		return -ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

/* *dst = a copy of val; CONFIG_ERROR "out of memory" if it cannot be copied. */
static enum config_status set_str(char **dst, const char *val, char *err, size_t errlen)
{
	if (!config_replace_str(dst, val))
		return CONFIG_RUN;
	config_set_err(err, errlen, "out of memory");
	return CONFIG_ERROR;
}

/* A file or directory name: not empty (`what` names it in the error). */
static enum config_status set_name(char **dst, const char *val, const char *what, char *err,
				   size_t errlen)
{
	if (!*val) {
		config_set_err(err, errlen, "%s", what);
		return CONFIG_ERROR;
	}
	return set_str(dst, val, err, errlen);
}

/* "on" or "off" into *off (`flag` names the option in the error). */
static enum config_status on_off(bool *off, const char *val, const char *flag, char *err,
				 size_t errlen)
{
	if (!strcmp(val, "on") || !strcmp(val, "off")) {
		*off = !strcmp(val, "off");
		return CONFIG_RUN;
	}
	config_set_err(err, errlen, "%s: '%s' is not on or off", flag, val);
	return CONFIG_ERROR;
}

static enum config_status opt_smp(struct vm_config *cfg, const char *val, char *err, size_t errlen)
{
	if (config_parse_smp_topo(val, &cfg->nr_cpus, &cfg->max_cpus, &cfg->topo, err, errlen))
		return CONFIG_ERROR;
	return CONFIG_RUN;
}

static enum config_status opt_spare_vcpus(struct vm_config *cfg, const char *val, char *err,
					  size_t errlen)
{
	unsigned long long n;

	if (config_parse_uint(val, strlen(val), PLUGVM_MAX_CPUS, &n)) {
		config_set_err(err, errlen, "--spare-vcpus: '%s' is not a count of 0..%d", val,
			       PLUGVM_MAX_CPUS);
		return CONFIG_ERROR;
	}
	cfg->spare_vcpus = (unsigned)n;
	return CONFIG_RUN;
}

static enum config_status opt_mem(struct vm_config *cfg, const char *val, char *err, size_t errlen)
{
	if (config_parse_mem(val, &cfg->mem_bytes)) {
		config_set_err(err, errlen, "-m: bad memory size '%s' (e.g. 64M, 1G)", val);
		return CONFIG_ERROR;
	}
	if (cfg->mem_bytes < CONFIG_MIN_MEM_BYTES || cfg->mem_bytes > CONFIG_MAX_MEM_BYTES) {
		config_set_err(err, errlen, "-m: %s is outside %lluM..%lluG", val,
			       CONFIG_MIN_MEM_BYTES >> 20, CONFIG_MAX_MEM_BYTES >> 30);
		return CONFIG_ERROR;
	}
	return CONFIG_RUN;
}

static enum config_status opt_kernel(struct vm_config *cfg, const char *val, char *err,
				     size_t errlen)
{
	return set_name(&cfg->kernel_path, val, "--kernel: empty file name", err, errlen);
}

static enum config_status opt_append(struct vm_config *cfg, const char *val, char *err,
				     size_t errlen)
{
	if (strlen(val) > CONFIG_MAX_CMDLINE) {
		config_set_err(err, errlen, "--append: command line longer than %d bytes",
			       CONFIG_MAX_CMDLINE);
		return CONFIG_ERROR;
	}
	return set_str(&cfg->cmdline, val, err, errlen);
}

static enum config_status opt_qmp(struct vm_config *cfg, const char *val, char *err, size_t errlen)
{
	return config_parse_qmp(cfg, val, err, errlen) ? CONFIG_ERROR : CONFIG_RUN;
}

static enum config_status opt_paused(struct vm_config *cfg, const char *val, char *err,
				     size_t errlen)
{
	(void)val, (void)err, (void)errlen;
	cfg->start_paused = true;
	return CONFIG_RUN;
}

static enum config_status opt_no_shutdown(struct vm_config *cfg, const char *val, char *err,
					  size_t errlen)
{
	(void)val, (void)err, (void)errlen;
	cfg->on_poweroff = ACTION_PAUSE;
	return CONFIG_RUN;
}

static enum config_status opt_no_reboot(struct vm_config *cfg, const char *val, char *err,
					size_t errlen)
{
	(void)val, (void)err, (void)errlen;
	cfg->on_reset = ACTION_EXIT;
	return CONFIG_RUN;
}

/* `s` is "D.D" with D one or more decimal digits. */
static bool is_version(const char *s)
{
	size_t major = strspn(s, "0123456789"), minor;

	if (!major || s[major] != '.')
		return false;
	minor = strspn(s + major + 1, "0123456789");
	return minor && !s[major + 1 + minor];
}

int config_parse_machine_type(const char *name, enum config_machine *out)
{
	if (!strcmp(name, "pc") || (!strncmp(name, "pc-i440fx-", 10) && is_version(name + 10))) {
		*out = MACHINE_PC;
		return 0;
	}
	if (!strcmp(name, "q35") || (!strncmp(name, "pc-q35-", 7) && is_version(name + 7))) {
		*out = MACHINE_Q35;
		return 0;
	}
	return -EINVAL;
}

/* TYPE[,accel=kvm] (QEMU's type=TYPE too): plugvm runs on KVM only and has no other knob. */
static enum config_status opt_machine(struct vm_config *cfg, const char *val, char *err,
				      size_t errlen)
{
	const char *name = strncmp(val, "type=", 5) ? val : val + 5;
	const char *opt = strchr(name, ',');
	size_t len = opt ? (size_t)(opt - name) : strlen(name);
	char type[32];

	while (opt) {
		const char *o = opt + 1, *next = strchr(o, ',');
		size_t olen = next ? (size_t)(next - o) : strlen(o);

		if (!(olen == 9 && !strncmp(o, "accel=kvm", 9))) {
			config_set_err(err, errlen,
				       "--machine: unsupported option '%.*s' in '%s' (plugvm takes "
				       "a machine type and accel=kvm only)",
				       (int)olen, o, val);
			return CONFIG_ERROR;
		}
		opt = next;
	}
	if (len < sizeof(type)) {
		memcpy(type, name, len);
		type[len] = '\0';
	}
	if (len >= sizeof(type) || config_parse_machine_type(type, &cfg->machine)) {
		config_set_err(err, errlen,
			       "--machine: '%.*s' is not a machine plugvm presents: pc "
			       "(pc-i440fx-X.Y) or q35 (pc-q35-X.Y)",
			       (int)len, name);
		return CONFIG_ERROR;
	}
	return CONFIG_RUN;
}

static enum config_status opt_virtio(struct vm_config *cfg, const char *val, char *err,
				     size_t errlen)
{
	return on_off(&cfg->virtio_disabled, val, "--virtio", err, errlen);
}

static enum config_status opt_mem_thp(struct vm_config *cfg, const char *val, char *err,
				      size_t errlen)
{
	bool off = true;
	enum config_status st = on_off(&off, val, "--mem-thp", err, errlen);

	cfg->mem_thp = !off;
	return st;
}

static enum config_status opt_chaos(struct vm_config *cfg, const char *val, char *err,
				    size_t errlen)
{
	return config_parse_chaos(&cfg->chaos, val, err, errlen) ? CONFIG_ERROR : CONFIG_RUN;
}

static enum config_status opt_autoscale(struct vm_config *cfg, const char *val, char *err,
					size_t errlen)
{
	return config_parse_autoscale(&cfg->autoscale, val, err, errlen) ? CONFIG_ERROR
									 : CONFIG_RUN;
}

static enum config_status opt_domain(struct vm_config *cfg, const char *val, char *err,
				     size_t errlen)
{
	return set_name(&cfg->domain_path, val, "--domain: empty file name", err, errlen);
}

static enum config_status opt_dump_acpi(struct vm_config *cfg, const char *val, char *err,
					size_t errlen)
{
	return set_name(&cfg->acpi_dump_dir, val, "--dump-acpi: empty directory name", err, errlen);
}

static enum config_status opt_sandbox(struct vm_config *cfg, const char *val, char *err,
				      size_t errlen)
{
	return on_off(&cfg->sandbox_disabled, val, "--sandbox", err, errlen);
}

static enum config_status opt_runas(struct vm_config *cfg, const char *val, char *err,
				    size_t errlen)
{
	if (!*val || strlen(val) > CONFIG_MAX_USER_NAME) {
		config_set_err(err, errlen, "--runas: '%s' is not a user name (1-%d bytes)", val,
			       CONFIG_MAX_USER_NAME);
		return CONFIG_ERROR;
	}
	return set_str(&cfg->runas, val, err, errlen);
}

static enum config_status opt_jail(struct vm_config *cfg, const char *val, char *err, size_t errlen)
{
	return set_name(&cfg->jail_dir, val, "--jail: empty directory name", err, errlen);
}

static enum config_status opt_verbose(struct vm_config *cfg, const char *val, char *err,
				      size_t errlen)
{
	(void)val, (void)err, (void)errlen;
	if (cfg->verbosity < 2)
		cfg->verbosity++;
	return CONFIG_RUN;
}

static enum config_status opt_quiet(struct vm_config *cfg, const char *val, char *err,
				    size_t errlen)
{
	(void)val, (void)err, (void)errlen;
	cfg->verbosity = -1;
	return CONFIG_RUN;
}

static enum config_status opt_help(struct vm_config *cfg, const char *val, char *err, size_t errlen)
{
	(void)cfg, (void)val, (void)err, (void)errlen;
	return CONFIG_HELP;
}

static enum config_status opt_version(struct vm_config *cfg, const char *val, char *err,
				      size_t errlen)
{
	(void)cfg, (void)val, (void)err, (void)errlen;
	return CONFIG_VERSION;
}

/* The options: a new one is one line here and one handler above (and a line of usage). */
struct opt {
	const char *names[3]; /* without leading dashes */
	enum opt_arg arg;
	opt_handler *apply;
};

static const struct opt opts[] = {
	{ { "smp" }, ARG_REQUIRED, opt_smp },
	{ { "spare-vcpus" }, ARG_REQUIRED, opt_spare_vcpus },
	{ { "m", "memory" }, ARG_REQUIRED, opt_mem },
	{ { "kernel" }, ARG_REQUIRED, opt_kernel },
	{ { "append" }, ARG_REQUIRED, opt_append },
	{ { "qmp" }, ARG_REQUIRED, opt_qmp },
	{ { "S" }, ARG_NONE, opt_paused },
	{ { "no-shutdown" }, ARG_NONE, opt_no_shutdown },
	{ { "no-reboot" }, ARG_NONE, opt_no_reboot },
	{ { "machine", "M" }, ARG_REQUIRED, opt_machine },
	{ { "virtio" }, ARG_REQUIRED, opt_virtio },
	{ { "mem-thp" }, ARG_REQUIRED, opt_mem_thp },
	{ { "chaos" }, ARG_OPTIONAL, opt_chaos },
	{ { "autoscale" }, ARG_REQUIRED, opt_autoscale },
	{ { "domain" }, ARG_REQUIRED, opt_domain },
	{ { "dump-acpi" }, ARG_REQUIRED, opt_dump_acpi },
	{ { "sandbox" }, ARG_REQUIRED, opt_sandbox },
	{ { "runas" }, ARG_REQUIRED, opt_runas },
	{ { "jail" }, ARG_REQUIRED, opt_jail },
	{ { "v", "verbose" }, ARG_NONE, opt_verbose },
	{ { "q", "quiet" }, ARG_NONE, opt_quiet },
	{ { "h", "help" }, ARG_NONE, opt_help },
	{ { "V", "version" }, ARG_NONE, opt_version },
};

static const struct opt *find_opt(const char *name, size_t len)
{
	size_t i, j;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		for (j = 0; j < 3 && opts[i].names[j]; j++)
			if (strlen(opts[i].names[j]) == len &&
			    !strncmp(opts[i].names[j], name, len))
				return &opts[i];
	return NULL;
}

/* `arg` is one of the options (as a missing value's place would be taken by it). */
static bool names_option(const char *arg)
{
	const char *name;

	if (arg[0] != '-' || !arg[1])
		return false;
	name = arg + 1 + (arg[1] == '-');
	return find_opt(name, strcspn(name, "=")) != NULL;
}

int config_parse_qmp(struct vm_config *cfg, const char *val, char *err, size_t errlen)
{
	const char *path = val, *opt;
	size_t len;

	if (!strcmp(val, "none")) {
		cfg->qmp_disabled = true;
		free(cfg->qmp_path);
		cfg->qmp_path = NULL;
		return 0;
	}
	if (!strncmp(val, "fd=", 3)) {
		unsigned long long fd;

		/* An inherited listening socket (as QEMU's fd=): kept open, accept()ed on. */
		if (config_parse_uint(val + 3, strlen(val + 3), INT_MAX, &fd) || fd < 3) {
			config_set_err(err, errlen,
				       "--qmp: '%s': fd=N names an inherited listening socket (N "
				       ">= 3)",
				       val);
			return -EINVAL;
		}
		if (cfg->nr_keep_fds == sizeof(cfg->keep_fds) / sizeof(cfg->keep_fds[0])) {
			config_set_err(err, errlen, "--qmp: too many inherited descriptors");
			return -EINVAL;
		}
		cfg->keep_fds[cfg->nr_keep_fds++] = (int)fd;
		cfg->qmp_fd = (int)fd;
		cfg->qmp_disabled = false;
		free(cfg->qmp_path);
		cfg->qmp_path = NULL;
		return 0;
	}
	if (!strncmp(val, "unix:", 5)) {
		path = val + 5;
	} else if (!strcasecmp(val, "none") || strcspn(val, ":/") < strcspn(val, "/")) {
		/* NONE, tcp:HOST:PORT, telnet:...: not a file name in the current directory. */
		config_set_err(err, errlen,
			       "--qmp: '%s' is not supported: unix:PATH, a PATH or none "
			       "(plugvm listens on Unix sockets only)",
			       val);
		return -EINVAL;
	}
	/* QEMU's chardev options: plugvm always listens and never waits for a client. */
	opt = strchr(path, ',');
	len = opt ? (size_t)(opt - path) : strlen(path);
	while (opt) {
		const char *o = opt + 1, *next = strchr(o, ',');
		size_t olen = next ? (size_t)(next - o) : strlen(o);

		if (!((olen == 6 && !strncmp(o, "server", 6)) ||
		      (olen == 9 && !strncmp(o, "server=on", 9)) ||
		      (olen == 6 && !strncmp(o, "nowait", 6)) ||
		      (olen == 8 && !strncmp(o, "wait=off", 8)))) {
			config_set_err(
			    err, errlen,
			    "--qmp: unsupported option '%.*s' in '%s' (plugvm always listens, "
			    "never waits)",
			    (int)olen, o, val);
			return -EINVAL;
		}
		opt = next;
	}
	if (!len) {
		config_set_err(err, errlen, "--qmp: empty socket path in '%s' (unix:PATH or none)",
			       val);
		return -EINVAL;
	}
	if (len > CONFIG_MAX_QMP_PATH) {
		config_set_err(err, errlen, "--qmp: socket path longer than %d bytes",
			       CONFIG_MAX_QMP_PATH);
		return -EINVAL;
	}
	free(cfg->qmp_path);
	cfg->qmp_path = strndup(path, len);
	cfg->qmp_disabled = false;
	cfg->qmp_fd = -1;
	return cfg->qmp_path ? 0 : -ENOMEM;
}

void config_defaults(struct vm_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->nr_cpus = 1;
	cfg->max_cpus = 1;
	cfg->spare_vcpus = CONFIG_DEFAULT_SPARE_VCPUS;
	cfg->mem_bytes = CONFIG_DEFAULT_MEM_BYTES;
	cfg->topo = (struct smp_topology){ 1, 1, 1, 1 };
	cfg->qmp_fd = -1;
	cfg->console_fd = -1;
	cfg->console_in_fd = -1;
	cfg->on_poweroff = ACTION_EXIT;
	cfg->on_reset = ACTION_EXIT;
}

enum config_status config_parse(struct vm_config *cfg, int argc, char *const argv[], char *err,
				size_t errlen)
{
	enum config_status st;

	config_defaults(cfg);
	st = config_apply_args(cfg, argc, argv, err, errlen);
	if (st == CONFIG_RUN && config_validate(cfg, err, errlen))
		return CONFIG_ERROR;
	return st;
}

/*
 * The value of option o given as argv[*i] (`eq`: its '=', or NULL) into *val: after '=',
 * or for a required value the next argument (*i then moves past it) unless that names an
 * option. Returns CONFIG_RUN, or CONFIG_ERROR with err set.
 */
static enum config_status take_value(const struct opt *o, const char *eq, int argc,
				     char *const argv[], int *i, const char **val, char *err,
				     size_t errlen)
{
	const char *arg = argv[*i];

	*val = eq ? eq + 1 : NULL;
	if (o->arg == ARG_NONE && eq) {
		config_set_err(err, errlen, "option '%.*s' takes no value", (int)(eq - arg), arg);
		return CONFIG_ERROR;
	}
	if (o->arg != ARG_REQUIRED || eq)
		return CONFIG_RUN;
	if (*i + 1 < argc && !names_option(argv[*i + 1])) {
		*val = argv[++*i];
		return CONFIG_RUN;
	}
	if (*i + 1 < argc)
		config_set_err(err, errlen, "option '%s' needs a value (before '%s')", arg,
			       argv[*i + 1]);
	else
		config_set_err(err, errlen, "option '%s' needs a value", arg);
	return CONFIG_ERROR;
}

/* -vv, -vvv: as often as -v (getopt's bundling, for the one flag that counts). */
static bool bundled_verbose(struct vm_config *cfg, const char *arg)
{
	if (arg[1] != 'v' || strspn(arg + 1, "v") != strlen(arg + 1))
		return false;
	cfg->verbosity += (int)strlen(arg + 1);
	if (cfg->verbosity > 2)
		cfg->verbosity = 2;
	return true;
}

/* argv[*i] and its value, if it takes one, applied to cfg (*i then moves past the value). */
static enum config_status apply_one(struct vm_config *cfg, int argc, char *const argv[], int *i,
				    char *err, size_t errlen)
{
	const char *arg = argv[*i], *name, *val, *eq;
	const struct opt *o;
	enum config_status st;

	if (arg[0] != '-' || arg[1] == '\0') {
		config_set_err(err, errlen, "unexpected argument '%s' (see --help)", arg);
		return CONFIG_ERROR;
	}
	if (bundled_verbose(cfg, arg))
		return CONFIG_RUN;
	/* NAME=VALUE after one dash or two (-smp=4, -m=64M, --smp=4). */
	name = arg + 1 + (arg[1] == '-');
	eq = strchr(name, '=');
	o = find_opt(name, eq ? (size_t)(eq - name) : strlen(name));
	if (!o) {
		config_set_err(err, errlen, "unknown option '%s' (see --help)", arg);
		return CONFIG_ERROR;
	}
	st = take_value(o, eq, argc, argv, i, &val, err, errlen);
	return st == CONFIG_RUN ? o->apply(cfg, val, err, errlen) : st;
}

enum config_status config_apply_args(struct vm_config *cfg, int argc, char *const argv[], char *err,
				     size_t errlen)
{
	enum config_status st;
	int i;

	for (i = 1; i < argc; i++) {
		st = apply_one(cfg, argc, argv, &i, err, errlen);
		if (st != CONFIG_RUN)
			return st;
	}
	if (!cfg->cmdline)
		return set_str(&cfg->cmdline, "", err, errlen);
	return CONFIG_RUN;
}

void config_free(struct vm_config *cfg)
{
	free(cfg->kernel_path);
	free(cfg->cmdline);
	free(cfg->qmp_path);
	free(cfg->domain_path);
	free(cfg->name);
	free(cfg->uuid);
	free(cfg->start_hotplug);
	free(cfg->rt.vcpus);
	free(cfg->acpi_dump_dir);
	free(cfg->console_path);
	cfg->acpi_dump_dir = NULL;
	cfg->console_path = NULL;
	free(cfg->runas);
	cfg->runas = NULL;
	free(cfg->jail_dir);
	cfg->jail_dir = NULL;
	cfg->kernel_path = NULL;
	cfg->cmdline = NULL;
	cfg->qmp_path = NULL;
	cfg->domain_path = NULL;
	cfg->name = NULL;
	cfg->uuid = NULL;
	cfg->start_hotplug = NULL;
	cfg->nr_start_hotplug = 0;
	cfg->rt.vcpus = NULL;
	cfg->rt.nr_vcpus = 0;
	free(cfg->pidfile);
	cfg->pidfile = NULL;
	for (unsigned i = 0; i < cfg->nr_chardevs; i++) {
		free(cfg->chardevs[i].label);
		free(cfg->chardevs[i].filename);
		cfg->chardevs[i].label = NULL;
		cfg->chardevs[i].filename = NULL;
	}
	cfg->nr_chardevs = 0;
}
