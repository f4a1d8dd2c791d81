// SPDX-License-Identifier: MIT
/* QEMU-style command-line parsing into struct vm_config. Pure: no I/O, no exit. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugvm_abi.h"

const char config_usage[] =
    "usage: plugvm [options]\n"
    "\n"
    "Boot a guest kernel (ELF with a PVH entry note) on /dev/kvm.\n"
    "\n"
    "  -smp, --smp N[,maxcpus=M][,sockets=S][,cores=C][,threads=T]\n"
    "                         vCPUs at boot (default 1) and possible vCPUs (default N,\n"
    "                         at most 1024 and KVM's limit)\n"
    "  -m, --memory SIZE      guest RAM: plain MiB or a K/M/G suffix (default 64M)\n"
    "  -kernel, --kernel FILE guest kernel (default: guest.elf beside the plugvm binary)\n"
    "  -append, --append STR  guest command line (at most 4095 bytes)\n"
    "  --qmp unix:PATH|none   the QMP control socket (default: $XDG_RUNTIME_DIR or /tmp,\n"
    "                         plugvm-PID.qmp, printed at start)\n"
    "  -S                     do not start the vCPUs until QMP `cont` (as QEMU)\n"
    "  --virtio on|off        virtio-mmio console and agent channel (default on)\n"
    "  --chaos[=SPEC]         testing: make the host act loaded; the seed is printed at\n"
    "                         start. SPEC: comma-separated seed=N, stall=V, irq=V, start=V;\n"
    "                         V is off, TIME or P%:TIME (TIME in us|ms|s, at most 1s; P\n"
    "                         0-100). stall: a vCPU sleeps before KVM_RUN (default 20%:5ms);\n"
    "                         irq: a device interrupt arrives late, in order (50%:2ms);\n"
    "                         start: a hot-added vCPU starts late (20ms); seed=N replays\n"
    "  -v, --verbose          more diagnostics (twice for debug)\n"
    "  -q, --quiet            errors only\n"
    "  -h, --help             this text\n"
    "  -V, --version          version and ABI\n"
    "\n"
    "Exit status: 0 guest powered off, odd = guest isa-debug-exit ((value << 1) | 1),\n"
    "2 bad usage, 4 host/KVM setup failure, 6 guest crash, 8 VMM failure,\n"
    "128+N ended by signal N.\n";

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int parse_uint(const char *s, size_t len, unsigned long long max, unsigned long long *out)
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
	ret = parse_uint(s, len, ULLONG_MAX >> shift, &v);
	if (ret)
		return -EINVAL;
	if (v == 0)
		return -EINVAL;
	*out = v << shift;
	return 0;
}

int config_parse_smp(const char *s, unsigned *nr_cpus, unsigned *max_cpus, char *err, size_t errlen)
{
	return config_parse_smp_topo(s, nr_cpus, max_cpus, NULL, err, errlen);
}

int config_parse_smp_topo(const char *s, unsigned *nr_cpus, unsigned *max_cpus,
			  struct smp_topology *topology, char *err, size_t errlen)
{
	unsigned long long cpus = 0, maxcpus = 0, topo[4] = { 1, 1, 1, 1 };
	static const char *const topo_keys[4] = { "sockets", "dies", "cores", "threads" };
	bool have_cpus = false, have_topo = false;
	const char *p = s;

	if (!*s) {
		set_err(err, errlen, "--smp: empty value");
		return -EINVAL;
	}
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		unsigned long long v;
		size_t klen = eq ? (size_t)(eq - p) : 0;
		const char *val = eq ? eq + 1 : p;
		size_t vlen = eq ? len - klen - 1 : len;
		int i;

		if (parse_uint(val, vlen, PLUGVM_MAX_CPUS * 1000ull, &v) || v == 0) {
			set_err(err, errlen, "--smp: bad value '%.*s' in '%s'", (int)len, p, s);
			return -EINVAL;
		}
		if (!eq || (klen == 4 && !strncmp(p, "cpus", 4))) {
			if (have_cpus) {
				set_err(err, errlen, "--smp: CPU count given twice in '%s'", s);
				return -EINVAL;
			}
			cpus = v;
			have_cpus = true;
		} else if (klen == 7 && !strncmp(p, "maxcpus", 7)) {
			maxcpus = v;
		} else {
			for (i = 0; i < 4; i++)
				if (klen == strlen(topo_keys[i]) && !strncmp(p, topo_keys[i], klen))
					break;
			if (i == 4) {
				set_err(err, errlen, "--smp: unknown key '%.*s' in '%s'", (int)klen,
					p, s);
				return -EINVAL;
			}
			topo[i] = v;
			have_topo = true;
		}
		p += len;
		if (*p == ',') {
			p++;
			if (!*p) {
				set_err(err, errlen, "--smp: trailing comma in '%s'", s);
				return -EINVAL;
			}
		}
	}
	if (have_topo) {
		unsigned long long prod = 1;
		int k;

		/* Each factor may be up to PLUGVM_MAX_CPUS * 1000: four of them can wrap. */
		for (k = 0; k < 4; k++) {
			if (__builtin_mul_overflow(prod, topo[k], &prod)) {
				set_err(err, errlen,
					"--smp: sockets*dies*cores*threads overflows in '%s'", s);
				return -EINVAL;
			}
		}
		if (!maxcpus)
			maxcpus = prod;
		if (prod != maxcpus) {
			set_err(
			    err, errlen,
			    "--smp: sockets*dies*cores*threads = %llu differs from maxcpus %llu",
			    prod, maxcpus);
			return -EINVAL;
		}
	}
	if (!have_cpus)
		cpus = maxcpus ? maxcpus : 1;
	if (!maxcpus)
		maxcpus = cpus;
	if (cpus > maxcpus) {
		set_err(err, errlen, "--smp: %llu CPUs exceed maxcpus=%llu", cpus, maxcpus);
		return -EINVAL;
	}
	if (maxcpus > PLUGVM_MAX_CPUS) {
		set_err(err, errlen, "--smp: %llu CPUs exceed plugvm's limit of %d", maxcpus,
			PLUGVM_MAX_CPUS);
		return -EINVAL;
	}
	*nr_cpus = (unsigned)cpus;
	*max_cpus = (unsigned)maxcpus;
	if (topology) {
		/* Without a topology, QEMU 6.2+ splits maxcpus into cores of one socket. */
		topology->sockets = have_topo ? (unsigned)topo[0] : 1;
		topology->dies = have_topo ? (unsigned)topo[1] : 1;
		topology->cores = have_topo ? (unsigned)topo[2] : (unsigned)maxcpus;
		topology->threads = have_topo ? (unsigned)topo[3] : 1;
	}
	return 0;
}

enum opt_id {
	OPT_SMP,
	OPT_MEM,
	OPT_KERNEL,
	OPT_APPEND,
	OPT_QMP,
	OPT_PAUSED,
	OPT_VIRTIO,
	OPT_CHAOS,
	OPT_VERBOSE,
	OPT_QUIET,
	OPT_HELP,
	OPT_VERSION
};

enum opt_arg {
	ARG_NONE, /* a flag */
	ARG_REQUIRED, /* the next argument, or after '=' */
	ARG_OPTIONAL, /* only after '=' (--chaos=SPEC): a bare flag never eats the next one */
};

struct opt {
	const char *names[3]; /* without leading dashes */
	enum opt_id id;
	enum opt_arg arg;
};

static const struct opt opts[] = {
	{ { "smp" }, OPT_SMP, ARG_REQUIRED },
	{ { "m", "memory" }, OPT_MEM, ARG_REQUIRED },
	{ { "kernel" }, OPT_KERNEL, ARG_REQUIRED },
	{ { "append" }, OPT_APPEND, ARG_REQUIRED },
	{ { "qmp" }, OPT_QMP, ARG_REQUIRED },
	{ { "S" }, OPT_PAUSED, ARG_NONE },
	{ { "virtio" }, OPT_VIRTIO, ARG_REQUIRED },
	{ { "chaos" }, OPT_CHAOS, ARG_OPTIONAL },
	{ { "v", "verbose" }, OPT_VERBOSE, ARG_NONE },
	{ { "q", "quiet" }, OPT_QUIET, ARG_NONE },
	{ { "h", "help" }, OPT_HELP, ARG_NONE },
	{ { "V", "version" }, OPT_VERSION, ARG_NONE },
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

static int replace_str(char **dst, const char *src)
{
	char *copy = strdup(src);

	if (!copy)
		return -ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
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
	if (!strncmp(val, "unix:", 5))
		path = val + 5;
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
			set_err(err, errlen,
				"--qmp: unsupported option '%.*s' in '%s' (plugvm always listens, "
				"never waits)",
				(int)olen, o, val);
			return -EINVAL;
		}
		opt = next;
	}
	if (!len) {
		set_err(err, errlen, "--qmp: empty socket path in '%s' (unix:PATH or none)", val);
		return -EINVAL;
	}
	if (len > CONFIG_MAX_QMP_PATH) {
		set_err(err, errlen, "--qmp: socket path longer than %d bytes",
			CONFIG_MAX_QMP_PATH);
		return -EINVAL;
	}
	free(cfg->qmp_path);
	cfg->qmp_path = strndup(path, len);
	cfg->qmp_disabled = false;
	return cfg->qmp_path ? 0 : -ENOMEM;
}

/* "N" followed by us, ms or s: microseconds in *us, at most CONFIG_CHAOS_MAX_US. */
static int parse_chaos_time(const char *s, size_t len, uint32_t *us)
{
	/* "us" and "ms" before "s", which ends both. */
	static const struct {
		const char *suffix;
		uint32_t us;
	} units[] = { { "us", 1 }, { "ms", 1000 }, { "s", 1000000 } };
	unsigned long long v;
	size_t i, slen;
	int ret;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		slen = strlen(units[i].suffix);
		if (len > slen && !strncmp(s + len - slen, units[i].suffix, slen))
			break;
	}
	if (i == sizeof(units) / sizeof(units[0]))
		return -EINVAL;
	/* Garbage is garbage however large the number before it ("9999999ns"). */
	ret = parse_uint(s, len - slen, ULLONG_MAX, &v);
	if (ret == -EINVAL)
		return ret;
	ret = parse_uint(s, len - slen, CONFIG_CHAOS_MAX_US / units[i].us, &v);
	if (ret)
		return ret;
	*us = (uint32_t)v * units[i].us;
	return 0;
}

/* "P%" with P in 0..100 and at most four decimals: parts per million in *ppm. */
static int parse_chaos_percent(const char *s, size_t len, uint32_t *ppm)
{
	const char *dot = memchr(s, '.', len);
	size_t ilen = dot ? (size_t)(dot - s) : len - 1, flen = 0;
	unsigned long long whole, frac = 0;
	int ret;

	if (!len || s[len - 1] != '%')
		return -EINVAL;
	ret = parse_uint(s, ilen, 100, &whole);
	if (ret)
		return ret;
	if (dot) {
		flen = len - 1 - ilen - 1;
		if (!flen || flen > 4 || parse_uint(dot + 1, flen, 9999, &frac))
			return -EINVAL;
		for (; flen < 4; flen++)
			frac *= 10;
	}
	if (whole * 10000 + frac > CONFIG_CHAOS_PPM)
		return -ERANGE;
	*ppm = (uint32_t)(whole * 10000 + frac);
	return 0;
}

/* One component's value: off, 0, TIME or P%:TIME. Names the item in err. */
static int parse_chaos_knob(const char *key, const char *val, size_t len, struct chaos_knob *k,
			    char *err, size_t errlen)
{
	const char *colon = memchr(val, ':', len), *time = val;
	size_t tlen = len;
	int ret = 0;

	if ((len == 3 && !strncmp(val, "off", 3)) || (len == 1 && val[0] == '0')) {
		*k = (struct chaos_knob){ 0, 0 };
		return 0;
	}
	k->ppm = CONFIG_CHAOS_PPM;
	if (colon) {
		ret = parse_chaos_percent(val, (size_t)(colon - val), &k->ppm);
		if (ret == -ERANGE) {
			set_err(err, errlen, "--chaos: %s probability '%.*s' exceeds 100%%", key,
				(int)(colon - val), val);
			return -EINVAL;
		}
		time = colon + 1;
		tlen = len - (size_t)(time - val);
	}
	if (!ret)
		ret = parse_chaos_time(time, tlen, &k->max_us);
	if (ret == -ERANGE) {
		set_err(err, errlen, "--chaos: %s time '%.*s' exceeds 1s", key, (int)tlen, time);
		return -EINVAL;
	}
	if (ret) {
		set_err(err, errlen,
			"--chaos: bad %s value '%.*s' (off, TIME or P%%:TIME; TIME a whole number "
			"of us, ms or s; P 0-100)",
			key, (int)len, val);
		return -EINVAL;
	}
	return 0;
}

int config_parse_chaos(struct chaos_config *c, const char *spec, char *err, size_t errlen)
{
	static const char *const keys[] = { "seed", "stall", "irq", "start" };
	bool seen[4] = { false };
	const char *p = spec;

	*c = (struct chaos_config){
		.enabled = true,
		.stall = CONFIG_CHAOS_DEFAULT_STALL,
		.irq = CONFIG_CHAOS_DEFAULT_IRQ,
		.start = CONFIG_CHAOS_DEFAULT_START,
	};
	if (!spec)
		return 0;
	if (!*spec) {
		set_err(err, errlen, "--chaos: empty spec (plain --chaos for the defaults)");
		return -EINVAL;
	}
	while (p) {
		const char *end = strchr(p, ','), *eq;
		size_t len = end ? (size_t)(end - p) : strlen(p), klen, vlen, i;
		struct chaos_knob *knobs[] = { NULL, &c->stall, &c->irq, &c->start };

		if (!len) {
			set_err(err, errlen, "--chaos: empty item in '%s'", spec);
			return -EINVAL;
		}
		eq = memchr(p, '=', len);
		if (!eq) {
			set_err(err, errlen, "--chaos: '%.*s' is not KEY=VALUE in '%s'", (int)len,
				p, spec);
			return -EINVAL;
		}
		klen = (size_t)(eq - p);
		vlen = len - klen - 1;
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (klen == strlen(keys[i]) && !strncmp(p, keys[i], klen))
				break;
		if (i == sizeof(keys) / sizeof(keys[0])) {
			set_err(err, errlen,
				"--chaos: unknown key '%.*s' in '%s' (seed, stall, irq, start)",
				(int)klen, p, spec);
			return -EINVAL;
		}
		if (seen[i]) {
			set_err(err, errlen, "--chaos: '%s' given twice in '%s'", keys[i], spec);
			return -EINVAL;
		}
		seen[i] = true;
		if (knobs[i]) {
			if (parse_chaos_knob(keys[i], eq + 1, vlen, knobs[i], err, errlen))
				return -EINVAL;
		} else {
			unsigned long long seed;

			if (parse_uint(eq + 1, vlen, UINT64_MAX, &seed)) {
				set_err(err, errlen,
					"--chaos: bad seed '%.*s' (a decimal number below 2^64)",
					(int)vlen, eq + 1);
				return -EINVAL;
			}
			c->seed = seed;
			c->seed_given = true;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static int format_knob(char *buf, size_t len, const char *key, const struct chaos_knob *k)
{
	char frac[8] = "";
	int n;

	if (!k->ppm || !k->max_us)
		return snprintf(buf, len, " %s=off", key);
	if (k->ppm == CONFIG_CHAOS_PPM)
		return snprintf(buf, len, " %s=%uus", key, k->max_us);
	if (k->ppm % 10000) {
		n = snprintf(frac, sizeof(frac), ".%04u", k->ppm % 10000);
		while (n > 1 && frac[n - 1] == '0')
			frac[--n] = '\0';
	}
	return snprintf(buf, len, " %s=%u%s%%:%uus", key, k->ppm / 10000, frac, k->max_us);
}

int config_format_chaos(const struct chaos_config *c, char *buf, size_t len)
{
	const char *const keys[] = { "stall", "irq", "start" };
	const struct chaos_knob *knobs[] = { &c->stall, &c->irq, &c->start };
	int n = snprintf(buf, len, "seed=%llu", (unsigned long long)c->seed), i;

	for (i = 0; i < 3; i++) {
		size_t used = (size_t)n < len ? (size_t)n : len;

		n += format_knob(buf + used, len - used, keys[i], knobs[i]);
	}
	return n;
}

enum config_status config_parse(struct vm_config *cfg, int argc, char *const argv[], char *err,
				size_t errlen)
{
	int i;

	memset(cfg, 0, sizeof(*cfg));
	cfg->nr_cpus = 1;
	cfg->max_cpus = 1;
	cfg->mem_bytes = CONFIG_DEFAULT_MEM_BYTES;
	cfg->topo = (struct smp_topology){ 1, 1, 1, 1 };

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i], *name, *val = NULL, *eq;
		const struct opt *o;
		size_t len;

		if (arg[0] != '-' || arg[1] == '\0') {
			set_err(err, errlen, "unexpected argument '%s' (see --help)", arg);
			return CONFIG_ERROR;
		}
		name = arg + 1 + (arg[1] == '-');
		eq = arg[1] == '-' ? strchr(name, '=') : NULL;
		len = eq ? (size_t)(eq - name) : strlen(name);
		o = find_opt(name, len);
		if (!o) {
			set_err(err, errlen, "unknown option '%s' (see --help)", arg);
			return CONFIG_ERROR;
		}
		if (o->arg == ARG_OPTIONAL) {
			val = eq ? eq + 1 : NULL;
		} else if (o->arg == ARG_REQUIRED) {
			if (eq) {
				val = eq + 1;
			} else if (i + 1 < argc) {
				val = argv[++i];
			} else {
				set_err(err, errlen, "option '%s' needs a value", arg);
				return CONFIG_ERROR;
			}
		} else if (eq) {
			set_err(err, errlen, "option '%.*s' takes no value", (int)(eq - arg), arg);
			return CONFIG_ERROR;
		}

		switch (o->id) {
		case OPT_SMP:
			if (config_parse_smp_topo(val, &cfg->nr_cpus, &cfg->max_cpus, &cfg->topo,
						  err, errlen))
				return CONFIG_ERROR;
			break;
		case OPT_MEM:
			if (config_parse_mem(val, &cfg->mem_bytes)) {
				set_err(err, errlen, "-m: bad memory size '%s' (e.g. 64M, 1G)",
					val);
				return CONFIG_ERROR;
			}
			if (cfg->mem_bytes < CONFIG_MIN_MEM_BYTES ||
			    cfg->mem_bytes > CONFIG_MAX_MEM_BYTES) {
				set_err(err, errlen, "-m: %s is outside %lluM..%lluG", val,
					CONFIG_MIN_MEM_BYTES >> 20, CONFIG_MAX_MEM_BYTES >> 30);
				return CONFIG_ERROR;
			}
			break;
		case OPT_KERNEL:
			if (!*val) {
				set_err(err, errlen, "--kernel: empty file name");
				return CONFIG_ERROR;
			}
			if (replace_str(&cfg->kernel_path, val))
				goto nomem;
			break;
		case OPT_APPEND:
			if (strlen(val) > CONFIG_MAX_CMDLINE) {
				set_err(err, errlen, "--append: command line longer than %d bytes",
					CONFIG_MAX_CMDLINE);
				return CONFIG_ERROR;
			}
			if (replace_str(&cfg->cmdline, val))
				goto nomem;
			break;
		case OPT_PAUSED:
			cfg->start_paused = true;
			break;
		case OPT_VIRTIO:
			if (!strcmp(val, "on") || !strcmp(val, "off")) {
				cfg->virtio_disabled = !strcmp(val, "off");
				break;
			}
			set_err(err, errlen, "--virtio: '%s' is not on or off", val);
			return CONFIG_ERROR;
		case OPT_QMP:
			if (config_parse_qmp(cfg, val, err, errlen))
				return CONFIG_ERROR;
			break;
		case OPT_CHAOS:
			if (config_parse_chaos(&cfg->chaos, val, err, errlen))
				return CONFIG_ERROR;
			break;
		case OPT_VERBOSE:
			if (cfg->verbosity < 2)
				cfg->verbosity++;
			break;
		case OPT_QUIET:
			cfg->verbosity = -1;
			break;
		case OPT_HELP:
			return CONFIG_HELP;
		case OPT_VERSION:
			return CONFIG_VERSION;
		}
	}
	if (!cfg->cmdline && replace_str(&cfg->cmdline, ""))
		goto nomem;
	return CONFIG_RUN;
nomem:
	set_err(err, errlen, "out of memory");
	return CONFIG_ERROR;
}

void config_free(struct vm_config *cfg)
{
	free(cfg->kernel_path);
	free(cfg->cmdline);
	free(cfg->qmp_path);
	cfg->kernel_path = NULL;
	cfg->cmdline = NULL;
	cfg->qmp_path = NULL;
}
