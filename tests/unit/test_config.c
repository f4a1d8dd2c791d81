// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/config/: config_parse (flag spellings, defaults, help/version,
 * errors), config_validate (the rules between fields), config_parse_mem (suffixes, limits), config_parse_smp (QEMU's -smp syntax) and
 * config_parse_chaos / config_format_chaos (--chaos's spec), config_parse_machine_type and
 * --machine.
 * Negative tests check the status and that the message names the problem.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <stdlib.h>

#include "plugvm_abi.h"
#include "vmm/config/config.h"

#define ERRLEN 256

struct parsed {
	struct vm_config cfg;
	enum config_status st;
	char err[ERRLEN];
};

/* Parse a NULL-terminated argument list (argv[0] is supplied). */
static void parse(struct parsed *p, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	char *a;

	argv[argc++] = "plugvm";
	va_start(ap, p);
	while ((a = va_arg(ap, char *)) != NULL) {
		assert_true(argc < 31);
		argv[argc++] = a;
	}
	va_end(ap);
	argv[argc] = NULL;
	memset(p->err, 0, sizeof(p->err));
	p->st = config_parse(&p->cfg, argc, argv, p->err, sizeof(p->err));
}

/* Expect CONFIG_ERROR with `needle` in the message; frees the config. */
#define parse_fails(needle, ...)                       \
	do {                                           \
		struct parsed _p;                      \
		parse(&_p, __VA_ARGS__, NULL);         \
		assert_int_equal(_p.st, CONFIG_ERROR); \
		assert_contains(_p.err, needle);       \
		config_free(&_p.cfg);                  \
	} while (0)

/* Expect status `want` (help, version) for the arguments; frees the config. */
#define parse_status(want, ...)                \
	do {                                   \
		struct parsed _p;              \
		parse(&_p, __VA_ARGS__, NULL); \
		assert_int_equal(_p.st, want); \
		config_free(&_p.cfg);          \
	} while (0)

static void test_defaults(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.nr_cpus, 1);
	assert_int_equal(p.cfg.max_cpus, 1);
	assert_int_equal(p.cfg.mem_bytes, CONFIG_DEFAULT_MEM_BYTES);
	assert_int_equal(p.cfg.mem_bytes, 64ull << 20);
	assert_null(p.cfg.kernel_path);
	assert_non_null(p.cfg.cmdline);
	assert_string_equal(p.cfg.cmdline, "");
	assert_int_equal(p.cfg.verbosity, 0);
	config_free(&p.cfg);
	assert_null(p.cfg.cmdline);
	/* config_free is idempotent. */
	config_free(&p.cfg);
}

static void test_smp_spellings(void **state)
{
	static const char *const forms[][2] = {
		{ "-smp", "4" },
		{ "--smp", "4" },
		{ "--smp=4", NULL },
	};
	struct parsed p;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		parse(&p, forms[i][0], forms[i][1], NULL);
		assert_int_equal(p.st, CONFIG_RUN);
		assert_int_equal(p.cfg.nr_cpus, 4);
		assert_int_equal(p.cfg.max_cpus, 4);
		config_free(&p.cfg);
	}
	parse(&p, "--smp=2,maxcpus=8", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.nr_cpus, 2);
	assert_int_equal(p.cfg.max_cpus, 8);
	config_free(&p.cfg);
	/* The last --smp wins. */
	parse(&p, "--smp", "2", "-smp", "3,maxcpus=5", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.nr_cpus, 3);
	assert_int_equal(p.cfg.max_cpus, 5);
	config_free(&p.cfg);
}

static void test_memory_spellings(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "-m", "128M", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.mem_bytes, 128ull << 20);
	config_free(&p.cfg);
	parse(&p, "--memory", "1G", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.mem_bytes, 1ull << 30);
	config_free(&p.cfg);
	parse(&p, "--memory=256", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.mem_bytes, 256ull << 20);
	config_free(&p.cfg);
	parse(&p, "--m=8M", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.mem_bytes, 8ull << 20);
	config_free(&p.cfg);
	/* The limits themselves are accepted. */
	parse(&p, "-m", "4M", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.mem_bytes, CONFIG_MIN_MEM_BYTES);
	config_free(&p.cfg);
	parse(&p, "-m", "256G", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.mem_bytes, CONFIG_MAX_MEM_BYTES);
	config_free(&p.cfg);
}

static void test_memory_errors(void **state)
{
	(void)state;
	parse_fails("-m: bad memory size 'lots'", "-m", "lots");
	parse_fails("-m: bad memory size '0'", "-m", "0");
	parse_fails("-m: bad memory size ''", "--memory=");
	parse_fails("-m: 3M is outside 4M..256G", "-m", "3M");
	parse_fails("-m: 257G is outside 4M..256G", "-m", "257G");
	parse_fails("-m: 1T is outside", "--memory", "1T");
}

static void test_kernel_append(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "--kernel", "/boot/a.elf", "-kernel", "b.elf", "--append", "hz=100 halt", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_string_equal(p.cfg.kernel_path, "b.elf");
	assert_string_equal(p.cfg.cmdline, "hz=100 halt");
	config_free(&p.cfg);

	parse(&p, "--kernel=k.elf", "-append", "x=1", "--append=y=2 z", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_string_equal(p.cfg.kernel_path, "k.elf");
	assert_string_equal(p.cfg.cmdline, "y=2 z");
	config_free(&p.cfg);

	/* An empty --append is a valid (empty) command line. */
	parse(&p, "--append=", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_string_equal(p.cfg.cmdline, "");
	config_free(&p.cfg);

	parse_fails("--kernel: empty file name", "--kernel=");
	parse_fails("--kernel: empty file name", "-kernel", "");
}

static void test_append_length(void **state)
{
	char *s = malloc(CONFIG_MAX_CMDLINE + 2);
	struct parsed p;

	(void)state;
	assert_non_null(s);
	memset(s, 'a', CONFIG_MAX_CMDLINE);
	s[CONFIG_MAX_CMDLINE] = '\0';
	parse(&p, "--append", s, NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(strlen(p.cfg.cmdline), CONFIG_MAX_CMDLINE);
	config_free(&p.cfg);

	s[CONFIG_MAX_CMDLINE] = 'a';
	s[CONFIG_MAX_CMDLINE + 1] = '\0';
	parse_fails("--append: command line longer than 4095 bytes", "--append", s);
	free(s);
}

static void test_verbosity(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "-v", NULL);
	assert_int_equal(p.cfg.verbosity, 1);
	config_free(&p.cfg);
	parse(&p, "-v", "--verbose", "-v", "-v", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.verbosity, 2);
	config_free(&p.cfg);
	parse(&p, "-q", NULL);
	assert_int_equal(p.cfg.verbosity, -1);
	config_free(&p.cfg);
	parse(&p, "-v", "--quiet", NULL);
	assert_int_equal(p.cfg.verbosity, -1);
	config_free(&p.cfg);
	parse(&p, "-q", "-v", NULL);
	assert_int_equal(p.cfg.verbosity, 0);
	config_free(&p.cfg);
}

static void test_help_version(void **state)
{
	(void)state;
	parse_status(CONFIG_HELP, "--help");
	parse_status(CONFIG_HELP, "-h");
	/* Help wins over whatever follows, as the flags are read in order. */
	parse_status(CONFIG_HELP, "-smp", "2", "--help", "--bogus");
	parse_status(CONFIG_VERSION, "--version");
	parse_status(CONFIG_VERSION, "-V");

	assert_contains(config_usage, "usage: plugvm");
	assert_contains(config_usage, "--smp");
	assert_contains(config_usage, "--memory");
	assert_contains(config_usage, "--kernel");
	assert_contains(config_usage, "--append");
}

/* getopt's and QEMU's habits: -vv, NAME=VALUE after one dash, values as '-x'. */
static void test_conventions(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "-vv", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.verbosity, 2);
	config_free(&p.cfg);
	parse(&p, "-v", "-vvv", NULL);
	assert_int_equal(p.cfg.verbosity, 2);
	config_free(&p.cfg);
	parse(&p, "-smp=3", "-m=64", "-append=halt", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.nr_cpus, 3);
	assert_int_equal(p.cfg.mem_bytes, 64ull << 20);
	assert_string_equal(p.cfg.cmdline, "halt");
	config_free(&p.cfg);
	/* A value that starts with '-' but names no option is a value. */
	parse(&p, "--append", "-x halt", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_string_equal(p.cfg.cmdline, "-x halt");
	config_free(&p.cfg);
	parse(&p, "--qmp", "/tmp/a:b.qmp", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_string_equal(p.cfg.qmp_path, "/tmp/a:b.qmp");
	config_free(&p.cfg);
}

static void test_bad_options(void **state)
{
	(void)state;
	parse_fails("unknown option '--bogus'", "--bogus");
	parse_fails("unknown option '-x'", "-x");
	parse_fails("unknown option '--'", "--");
	parse_fails("unknown option '--smpx'", "--smpx", "2");
	parse_fails("unknown option '-smpx=2'", "-smpx=2");
	parse_fails("unknown option '-vx'", "-vx");
	parse_fails("unexpected argument 'guest.elf'", "guest.elf");
	parse_fails("unexpected argument '-'", "-");
	/* A missing value, in each spelling. */
	parse_fails("option '--smp' needs a value", "--smp");
	parse_fails("option '-m' needs a value", "-v", "-m");
	parse_fails("option '--kernel' needs a value", "--kernel");
	parse_fails("option '-append' needs a value", "-append");
	/* The next option is not taken for the missing value. */
	parse_fails("option '--smp' needs a value (before '--append')", "--smp", "--append",
		    "halt");
	parse_fails("option '-m' needs a value (before '-S')", "-m", "-S");
	parse_fails("option '--kernel' needs a value (before '--qmp=none')", "--kernel",
		    "--qmp=none");
	/* Only the documented --qmp forms: no socket file named after a typo. */
	parse_fails("--qmp: 'tcp:localhost:4444' is not supported", "--qmp", "tcp:localhost:4444");
	parse_fails("--qmp: 'NONE' is not supported", "--qmp", "NONE");
	parse_fails("--qmp: 'None' is not supported", "--qmp=None");
	/* A value given to a flag. */
	parse_fails("option '--verbose' takes no value", "--verbose=1");
	parse_fails("option '--help' takes no value", "--help=yes");
	parse_fails("option '--quiet' takes no value", "--quiet=");
	/* Errors from the value parsers come through. */
	parse_fails("--smp: bad value 'x' in 'x'", "--smp", "x");
	parse_fails("--smp: 9 CPUs exceed maxcpus=8", "--smp=9,maxcpus=8");
}

static void test_mem_values(void **state)
{
	static const struct {
		const char *s;
		uint64_t bytes;
	} ok[] = {
		{ "1", 1ull << 20 },
		{ "512", 512ull << 20 },
		{ "65536K", 64ull << 20 },
		{ "65536k", 64ull << 20 },
		{ "64M", 64ull << 20 },
		{ "64m", 64ull << 20 },
		{ "3G", 3ull << 30 },
		{ "3g", 3ull << 30 },
		{ "1T", 1ull << 40 },
		{ "2t", 2ull << 40 },
		{ "1K", 1024 },
		{ "007M", 7ull << 20 },
		{ "16777215T", 16777215ull << 40 },
		{ "17592186044415M", 17592186044415ull << 20 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint64_t v = 0;

		assert_int_equal(config_parse_mem(ok[i].s, &v), 0);
		assert_int_equal(v, ok[i].bytes);
	}
}

static void test_mem_errors(void **state)
{
	static const char *const bad[] = {
		"",
		"0",
		"0M",
		"000",
		"M",
		"G",
		"-1",
		"+1",
		" 1",
		"1 ",
		"1.5G",
		"1MB",
		"1 M",
		"0x10",
		"1e3",
		"abc",
		"64X",
		"1KM",
		"99999999999999999999",
		/* Overflow after the shift: 2^24 T, 2^44 M, 2^54 K, 2^64 MiB plain. */
		"16777216T",
		"17592186044416M",
		"18014398509481984K",
		"18446744073709551616",
		"18446744073709551615",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t v = 0x5a5a;

		if (config_parse_mem(bad[i], &v) != -EINVAL)
			fail_msg("config_parse_mem(\"%s\") accepted", bad[i]);
		/* The output is left alone on failure. */
		assert_int_equal(v, 0x5a5a);
	}
}

/* Expect config_parse_smp(s) to give (nr, max). */
static void smp_ok(const char *s, unsigned nr, unsigned max)
{
	unsigned n = 0, m = 0;
	char err[ERRLEN] = "";

	if (config_parse_smp(s, &n, &m, err, sizeof(err)))
		fail_msg("config_parse_smp(\"%s\") failed: %s", s, err);
	if (n != nr || m != max)
		fail_msg("config_parse_smp(\"%s\") = %u,%u, expected %u,%u", s, n, m, nr, max);
}

/* Expect config_parse_smp(s) to fail with `needle` in the message, outputs untouched. */
static void smp_bad(const char *s, const char *needle)
{
	unsigned n = 77, m = 77;
	char err[ERRLEN] = "";

	if (config_parse_smp(s, &n, &m, err, sizeof(err)) != -EINVAL)
		fail_msg("config_parse_smp(\"%s\") accepted (%u,%u)", s, n, m);
	assert_contains(err, needle);
	assert_int_equal(n, 77);
	assert_int_equal(m, 77);
}

static void test_smp_values(void **state)
{
	(void)state;
	smp_ok("1", 1, 1);
	smp_ok("4", 4, 4);
	smp_ok("2,maxcpus=8", 2, 8);
	smp_ok("cpus=2,maxcpus=8", 2, 8);
	smp_ok("maxcpus=8,cpus=2", 2, 8);
	smp_ok("maxcpus=8", 8, 8);
	smp_ok("8,maxcpus=8", 8, 8);
	smp_ok("1024", 1024, 1024);
	smp_ok("1,maxcpus=1024", 1, 1024);
	/* Topology: the product is maxcpus (and the CPU count when none is given). */
	smp_ok("2,sockets=2,cores=2,threads=2", 2, 8);
	smp_ok("2,maxcpus=8,sockets=2,cores=2,threads=2", 2, 8);
	smp_ok("sockets=2,cores=4", 8, 8);
	smp_ok("4,sockets=2,dies=2,cores=2,threads=2", 4, 16);
	smp_ok("cpus=1,sockets=1,cores=1,threads=1", 1, 1);
	smp_ok("sockets=32,cores=32", 1024, 1024);
	/* The missing counts inferred as QEMU 7.2 does (cores first, threads last). */
	smp_ok("2,maxcpus=8,sockets=2", 2, 8);
	smp_ok("2,maxcpus=8,sockets=2,cores=2", 2, 8);
	smp_ok("2,maxcpus=8,threads=2", 2, 8);
	smp_ok("maxcpus=8,sockets=2", 8, 8);
	smp_ok("4,cores=2", 4, 4);
}

static void test_smp_errors(void **state)
{
	(void)state;
	smp_bad("", "--smp: empty value");
	smp_bad("0", "bad value '0'");
	smp_bad("x", "bad value 'x'");
	smp_bad("-1", "bad value '-1'");
	smp_bad("4x", "bad value '4x'");
	smp_bad("2,maxcpus=0", "bad value 'maxcpus=0'");
	smp_bad("2,maxcpus=", "bad value 'maxcpus='");
	smp_bad("2,maxcpus=eight", "bad value 'maxcpus=eight'");
	smp_bad("99999999999999999999999", "bad value");
	smp_bad(",2", "bad value ''");
	smp_bad("2,,maxcpus=4", "bad value ''");
	smp_bad("2,", "trailing comma in '2,'");
	smp_bad("2,maxcpus=8,", "trailing comma");
	smp_bad("2,bogus=4", "unknown key 'bogus' in '2,bogus=4'");
	smp_bad("2,=4", "unknown key ''");
	smp_bad("2,Cores=4", "unknown key 'Cores'");
	smp_bad("2,cpus=2", "CPU count given twice");
	smp_bad("cpus=2,3", "CPU count given twice");
	smp_bad("9,maxcpus=8", "9 CPUs exceed maxcpus=8");
	smp_bad("cpus=5,maxcpus=4", "5 CPUs exceed maxcpus=4");
	smp_bad("1025", "1025 CPUs exceed plugvm's limit of 1024");
	smp_bad("1,maxcpus=1025", "1025 CPUs exceed plugvm's limit of 1024");
	smp_bad("1,maxcpus=4096", "exceed plugvm's limit");
	smp_bad("sockets=64,cores=32", "2048 CPUs exceed plugvm's limit");
	smp_bad("2,maxcpus=8,sockets=2,cores=2,threads=1",
		"sockets (2) * dies (1) * cores (2) * threads (1) = 4 differs from maxcpus 8");
	smp_bad("2,maxcpus=8,sockets=3,cores=3,threads=1", "= 9 differs from maxcpus 8");
	smp_bad("2,maxcpus=8,sockets=3,cores=3", "threads (0) = 0 differs from maxcpus 8");
	smp_bad("2,maxcpus=8,sockets=3", "= 6 differs from maxcpus 8");
	smp_bad("2,maxcpus=8,maxcpus=4", "'maxcpus' given twice");
	smp_bad("2,sockets=2,sockets=1", "'sockets' given twice");
	smp_bad("16,sockets=2,cores=4,threads=1", "16 CPUs exceed maxcpus=8");
	smp_ok("16,sockets=2,cores=4", 16, 16); /* threads=2 inferred, as QEMU */
	/* A product that wraps around 2^64 must not pass for a small one. */
	smp_bad("sockets=65536,dies=65536,cores=65536,threads=65536", "threads overflows in");
	smp_bad("1,maxcpus=1,sockets=65536,dies=65536,cores=65536,threads=65536", "overflows");
}

static void test_qmp(void **state)
{
	static const char *const ok[][2] = {
		{ "unix:/tmp/a.qmp", "/tmp/a.qmp" },
		{ "/tmp/b.qmp", "/tmp/b.qmp" },
		{ "unix:/tmp/c.qmp,server,nowait", "/tmp/c.qmp" },
		{ "unix:/tmp/d.qmp,server=on,wait=off", "/tmp/d.qmp" },
	};
	struct parsed p;
	size_t i;

	(void)state;
	parse(&p, NULL);
	assert_null(p.cfg.qmp_path); /* the default path, chosen at start */
	assert_false(p.cfg.qmp_disabled);
	config_free(&p.cfg);
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		parse(&p, "--qmp", ok[i][0], NULL);
		assert_int_equal(p.st, CONFIG_RUN);
		assert_string_equal(p.cfg.qmp_path, ok[i][1]);
		config_free(&p.cfg);
	}
	parse(&p, "--qmp", "/tmp/x", "--qmp", "none", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_true(p.cfg.qmp_disabled);
	assert_null(p.cfg.qmp_path);
	config_free(&p.cfg);
	parse_fails("empty socket path", "--qmp", "unix:");
	parse_fails("empty socket path", "--qmp", "");
	parse_fails("unsupported option 'wait=on'", "--qmp", "unix:/tmp/x,server,wait=on");
	parse_fails(
	    "longer than 107", "--qmp",
	    "unix:/tmp/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	parse_fails("needs a value", "--qmp");
	/* -S waits for `cont`, which nobody could send without a socket. */
	parse_fails("-S with --qmp none: nothing could ever send `cont`", "-S", "--qmp", "none");
	parse_fails("-S with --qmp none", "--qmp", "none", "-S");
	parse(&p, "-S", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_true(p.cfg.start_paused);
	config_free(&p.cfg);
}

static void test_sandbox_runas(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "--smp", "1", NULL);
	assert_false(p.cfg.sandbox_disabled);
	assert_null(p.cfg.runas);
	config_free(&p.cfg);
	parse(&p, "--sandbox", "off", "--runas=nobody", "--runas", "daemon", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_true(p.cfg.sandbox_disabled);
	assert_string_equal(p.cfg.runas, "daemon");
	config_free(&p.cfg);
	assert_null(p.cfg.runas);
	parse(&p, "--sandbox=off", "--sandbox=on", NULL);
	assert_false(p.cfg.sandbox_disabled);
	config_free(&p.cfg);
	parse_fails("--sandbox: 'no' is not on or off", "--sandbox", "no");
	parse_fails("needs a value", "--sandbox");
	parse_fails("--runas: '' is not a user name", "--runas", "");
	parse_fails("needs a value", "--runas");
}

/* --mem-thp: guest RAM without transparent huge pages unless asked (mem.h). */
static void test_mem_thp(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "--smp", "1", NULL);
	assert_false(p.cfg.mem_thp);
	config_free(&p.cfg);
	parse(&p, "--mem-thp", "on", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_true(p.cfg.mem_thp);
	config_free(&p.cfg);
	parse(&p, "--mem-thp=on", "--mem-thp=off", NULL);
	assert_false(p.cfg.mem_thp);
	config_free(&p.cfg);
	parse_fails("--mem-thp: 'yes' is not on or off", "--mem-thp", "yes");
	parse_fails("needs a value", "--mem-thp");
}

static void test_jail_and_its_socket(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "--smp", "1", NULL);
	assert_null(p.cfg.jail_dir);
	config_free(&p.cfg);
	/* Without --qmp the socket is DIR/plugvm.qmp, named by jail_fork(). */
	parse(&p, "--jail", "/run/vm1", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_string_equal(p.cfg.jail_dir, "/run/vm1");
	assert_null(p.cfg.qmp_path);
	config_free(&p.cfg);
	assert_null(p.cfg.jail_dir);
	parse(&p, "--jail=/run/vm1/", "--qmp", "unix:/run/vm1/q.sock", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_string_equal(p.cfg.qmp_path, "/run/vm1/q.sock");
	config_free(&p.cfg);
	parse(&p, "--jail", "/run/vm1", "--qmp", "none", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	config_free(&p.cfg);
	parse(&p, "--jail", "/run/vm1", "--qmp", "fd=5", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	config_free(&p.cfg);
	parse_fails("--jail: empty directory name", "--jail", "");
	parse_fails("needs a value", "--jail");
	parse_fails("--qmp: with --jail /run/vm1 the socket must be a name directly in it "
		    "(/run/vm1/NAME), not '/tmp/q'",
		    "--jail", "/run/vm1", "--qmp", "/tmp/q");
	parse_fails("must be a name directly in it", "--jail", "/run/vm1", "--qmp",
		    "/run/vm1/sub/q");
	parse_fails("must be a name directly in it", "--jail", "/run/vm1", "--qmp", "/run/vm10");
	parse_fails("must be a name directly in it", "--jail", "/run/vm1", "--qmp", "/run/vm1/");
	parse_fails("must be a name directly in it", "--jail", "/run/vm1", "--qmp", "/run/vm1/..");
	parse_fails(
	    "too long a path for its QMP socket", "--jail",
	    "/run/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaa");
}

/* --no-shutdown and --no-reboot, in QEMU's spelling too: the power-off and reset actions. */
static void test_actions(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "--smp", "1", NULL);
	assert_int_equal(p.cfg.on_poweroff, ACTION_EXIT);
	assert_int_equal(p.cfg.on_reset, ACTION_EXIT);
	config_free(&p.cfg);
	parse(&p, "--no-shutdown", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.on_poweroff, ACTION_PAUSE);
	assert_int_equal(p.cfg.on_reset, ACTION_EXIT);
	config_free(&p.cfg);
	/* Over a reset that reboots (the front end's default), -no-reboot shuts down instead. */
	config_defaults(&p.cfg);
	p.cfg.on_reset = ACTION_RESET;
	assert_int_equal(
	    config_apply_args(&p.cfg, 3,
			      (char *const[]){ "plugvm", "-no-reboot", "-no-shutdown", NULL },
			      p.err, sizeof(p.err)),
	    CONFIG_RUN);
	assert_int_equal(p.cfg.on_reset, ACTION_EXIT);
	assert_int_equal(p.cfg.on_poweroff, ACTION_PAUSE);
	config_free(&p.cfg);
	parse_fails("option '--no-shutdown' takes no value", "--no-shutdown=1");
	parse_fails("option '-no-reboot' takes no value", "-no-reboot=yes");
	parse_fails("unknown option '--no-shutdowns'", "--no-shutdowns");
}

/* QEMU's machine type names: the aliases and the versioned names of each chipset. */
static void test_machine_type_names(void **state)
{
	static const char *const pc[] = { "pc", "pc-i440fx-7.2", "pc-i440fx-2.0",
					  "pc-i440fx-10.12" };
	static const char *const q35[] = { "q35", "pc-q35-7.2", "pc-q35-2.4", "pc-q35-8.0" };
	static const char *const bad[] = {
		"",	   "none",	     "microvm",	       "isapc",	      "PC",
		"Q35",	   "pc-i440fx",	     "pc-i440fx-",     "pc-i440fx-7", "pc-i440fx-7.",
		"pc-q35-", "pc-q35-.2",	     "pc-q35-7.2.1",   "pc-q35-7.2 ", "pc-q35-x.y",
		"q35 ",	   "pc-q35-7.2,usb", "pc-i440fx-7.2a", "pc-q35--7.2", "q35-7.2",
	};
	enum config_machine m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(pc) / sizeof(pc[0]); i++) {
		m = MACHINE_Q35;
		assert_int_equal(config_parse_machine_type(pc[i], &m), 0);
		assert_int_equal(m, MACHINE_PC);
	}
	for (i = 0; i < sizeof(q35) / sizeof(q35[0]); i++) {
		m = MACHINE_PC;
		assert_int_equal(config_parse_machine_type(q35[i], &m), 0);
		assert_int_equal(m, MACHINE_Q35);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		m = (enum config_machine)7;
		if (config_parse_machine_type(bad[i], &m) != -EINVAL)
			fail_msg("'%s' taken as a machine type", bad[i]);
		assert_int_equal(m, 7); /* untouched */
	}
}

static void test_machine_flag(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, NULL);
	assert_int_equal(p.cfg.machine, MACHINE_PC);
	config_free(&p.cfg);
	parse(&p, "--machine", "q35", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.machine, MACHINE_Q35);
	config_free(&p.cfg);
	/* QEMU's spellings: -machine, -M, type=, accel=kvm; the last one given wins. */
	parse(&p, "-machine", "pc-q35-7.2,accel=kvm", NULL);
	assert_int_equal(p.cfg.machine, MACHINE_Q35);
	config_free(&p.cfg);
	parse(&p, "-M", "type=q35", "--machine=pc-i440fx-7.2", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.machine, MACHINE_PC);
	config_free(&p.cfg);
	parse(&p, "-M=pc,accel=kvm,accel=kvm", "-m", "32M", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.machine, MACHINE_PC);
	assert_int_equal(p.cfg.mem_bytes, 32ull << 20);
	config_free(&p.cfg);
	parse_fails("--machine: 'microvm' is not a machine plugvm presents: pc (pc-i440fx-X.Y) "
		    "or q35 (pc-q35-X.Y)",
		    "--machine", "microvm");
	parse_fails("--machine: 'none' is not a machine", "-machine", "none");
	parse_fails("--machine: '' is not a machine", "--machine", "");
	parse_fails("--machine: '' is not a machine", "--machine", ",accel=kvm");
	parse_fails("--machine: 'pc-q35-7.2-and-a-very-long-tail-past-the-buffer' is not",
		    "--machine", "pc-q35-7.2-and-a-very-long-tail-past-the-buffer");
	parse_fails("--machine: unsupported option 'usb=off' in 'q35,usb=off'", "-machine",
		    "q35,usb=off");
	parse_fails("--machine: unsupported option 'accel=tcg'", "-M", "pc,accel=tcg");
	parse_fails("--machine: unsupported option ''", "-M", "pc,");
	parse_fails("needs a value", "--machine");
	parse_fails("needs a value (before '-m')", "-M", "-m", "64M");
}

static void test_spare_vcpus(void **state)
{
	struct parsed p;

	(void)state;
	parse(&p, "--smp", "1,maxcpus=4", NULL);
	assert_int_equal(p.cfg.spare_vcpus, CONFIG_DEFAULT_SPARE_VCPUS);
	config_free(&p.cfg);
	parse(&p, "--spare-vcpus", "0", "--smp", "2", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_int_equal(p.cfg.spare_vcpus, 0);
	config_free(&p.cfg);
	parse(&p, "--spare-vcpus=1024", NULL); /* more than there are slots: all of them */
	assert_int_equal(p.cfg.spare_vcpus, 1024);
	config_free(&p.cfg);
	parse_fails("--spare-vcpus: '1025' is not a count of 0..1024", "--spare-vcpus", "1025");
	parse_fails("--spare-vcpus: '-1' is not a count", "--spare-vcpus=-1");
	parse_fails("--spare-vcpus: '' is not a count", "--spare-vcpus=");
	parse_fails("--spare-vcpus: '2x' is not a count", "--spare-vcpus", "2x");
	parse_fails("needs a value", "--spare-vcpus");
}

static void test_smp_topology(void **state)
{
	/* maxcpus and the topology each -smp gives, as QEMU 7.2 infers what is missing. */
	static const struct {
		const char *s;
		unsigned max, sockets, dies, cores, threads;
	} cases[] = {
		{ "2,maxcpus=8", 8, 1, 1, 8, 1 }, /* none: maxcpus cores of one socket */
		{ "2,sockets=2,cores=2,threads=2", 8, 2, 1, 2, 2 }, /* whole: makes maxcpus */
		{ "2,maxcpus=8,sockets=2", 8, 2, 1, 4, 1 }, /* cores inferred */
		{ "2,maxcpus=8,sockets=2,cores=2", 8, 2, 1, 2, 2 }, /* then threads */
		{ "4,sockets=2,dies=2,cores=2,threads=2", 16, 2, 2, 2, 2 },
	};
	struct smp_topology t;
	unsigned n, m, i;
	char err[ERRLEN];

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(config_parse_smp_topo(cases[i].s, &n, &m, &t, err, sizeof(err)),
				 0);
		assert_int_equal(m, cases[i].max);
		assert_int_equal(t.sockets, cases[i].sockets);
		assert_int_equal(t.dies, cases[i].dies);
		assert_int_equal(t.cores, cases[i].cores);
		assert_int_equal(t.threads, cases[i].threads);
	}
}

static void test_smp_err_buffer(void **state)
{
	unsigned n, m;
	char err[8];

	(void)state;
	/* A small error buffer truncates, and a NULL one is allowed. */
	memset(err, 'x', sizeof(err));
	assert_int_equal(config_parse_smp("0", &n, &m, err, sizeof(err)), -EINVAL);
	assert_int_equal(err[sizeof(err) - 1], '\0');
	assert_string_equal(err, "--smp: ");
	assert_int_equal(config_parse_smp("0", &n, &m, NULL, 0), -EINVAL);
}

/* A spec that parses: the config it gives, formatted as the VMM prints it. */
static void chaos_ok(const char *spec, const char *want)
{
	struct chaos_config c;
	char err[ERRLEN] = "", buf[160];

	if (config_parse_chaos(&c, spec, err, sizeof(err)))
		fail_msg("'%s' refused: %s", spec ? spec : "(null)", err);
	assert_true(c.enabled);
	config_format_chaos(&c, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void chaos_bad(const char *spec, const char *needle)
{
	struct chaos_config c;
	char err[ERRLEN] = "";

	assert_int_equal(config_parse_chaos(&c, spec, err, sizeof(err)), -EINVAL);
	assert_contains(err, needle);
}

static void test_chaos_flag(void **state)
{
	struct parsed p;

	(void)state;
	/* Off unless asked for. */
	parse(&p, NULL);
	assert_false(p.cfg.chaos.enabled);
	config_free(&p.cfg);
	/* A bare --chaos takes no value from the next argument. */
	parse(&p, "--chaos", "--append", "halt", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_true(p.cfg.chaos.enabled);
	assert_false(p.cfg.chaos.seed_given);
	assert_int_equal(p.cfg.chaos.stall.ppm, 200000);
	assert_int_equal(p.cfg.chaos.stall.max_us, 5000);
	assert_int_equal(p.cfg.chaos.irq.ppm, 500000);
	assert_int_equal(p.cfg.chaos.irq.max_us, 2000);
	assert_int_equal(p.cfg.chaos.start.ppm, CONFIG_CHAOS_PPM);
	assert_int_equal(p.cfg.chaos.start.max_us, 20000);
	assert_string_equal(p.cfg.cmdline, "halt");
	config_free(&p.cfg);
	parse(&p, "--chaos=seed=7,irq=off", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_true(p.cfg.chaos.seed_given);
	assert_int_equal(p.cfg.chaos.seed, 7);
	assert_int_equal(p.cfg.chaos.irq.ppm, 0);
	config_free(&p.cfg);
	/* The last --chaos wins, whole: no key carries over. */
	parse(&p, "--chaos=seed=7", "--chaos", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_false(p.cfg.chaos.seed_given);
	config_free(&p.cfg);
	parse(&p, "-chaos", NULL);
	assert_int_equal(p.st, CONFIG_RUN);
	assert_true(p.cfg.chaos.enabled);
	config_free(&p.cfg);
	parse_fails("--chaos: unknown key 'sead'", "--chaos=sead=1");
	parse_fails("--chaos: empty spec", "--chaos=");
	/* A spec must be attached: a following word is an argument of its own. */
	parse_fails("unexpected argument 'seed=1'", "--chaos", "seed=1");
	assert_contains(config_usage, "--chaos");
}

static void test_chaos_values(void **state)
{
	(void)state;
	chaos_ok(NULL, "seed=0 stall=20%:5000us irq=50%:2000us start=20000us");
	chaos_ok("seed=42", "seed=42 stall=20%:5000us irq=50%:2000us start=20000us");
	chaos_ok("seed=18446744073709551615,stall=5%:2ms,irq=20%:1ms,start=5ms",
		 "seed=18446744073709551615 stall=5%:2000us irq=20%:1000us start=5000us");
	/* Keys in any order; each off in both spellings. */
	chaos_ok("start=0,irq=off,stall=0,seed=1", "seed=1 stall=off irq=off start=off");
	/* Zero probability or zero time is off too. */
	chaos_ok("stall=0%:1ms,irq=5%:0us,seed=1", "seed=1 stall=off irq=off start=20000us");
	/* A bare TIME means 100%; units us, ms, s; the limits themselves. */
	chaos_ok("seed=1,stall=250us,irq=1s,start=100%:1000ms",
		 "seed=1 stall=250us irq=1000000us start=1000000us");
	chaos_ok("seed=1,stall=1us,irq=1000000us", "seed=1 stall=1us irq=1000000us start=20000us");
	/* Fractional percentages, to four decimals, printed back without trailing zeros. */
	chaos_ok("seed=1,stall=0.5%:1ms,irq=12.25%:1ms,start=0.0001%:1ms",
		 "seed=1 stall=0.5%:1000us irq=12.25%:1000us start=0.0001%:1000us");
	chaos_ok("seed=1,stall=100.0%:1ms,irq=007%:01ms,start=0.1000%:1ms",
		 "seed=1 stall=1000us irq=7%:1000us start=0.1%:1000us");
}

static void test_chaos_errors(void **state)
{
	(void)state;
	chaos_bad("", "--chaos: empty spec");
	chaos_bad("seed=1,", "empty item in 'seed=1,'");
	chaos_bad(",seed=1", "empty item");
	chaos_bad("seed=1,,stall=0", "empty item");
	chaos_bad("stall", "'stall' is not KEY=VALUE in 'stall'");
	chaos_bad("seed=1,bogus=2", "unknown key 'bogus' in 'seed=1,bogus=2'");
	chaos_bad("=5", "unknown key ''");
	chaos_bad("stall=0,stall=off", "'stall' given twice");
	chaos_bad("seed=1,seed=1", "'seed' given twice");
	/* Seeds: decimal, 64 bits. */
	chaos_bad("seed=", "bad seed ''");
	chaos_bad("seed=-1", "bad seed '-1'");
	chaos_bad("seed=0x10", "bad seed '0x10'");
	chaos_bad("seed=18446744073709551616", "bad seed '18446744073709551616'");
	/* Values, each naming the component and the bad text. */
	chaos_bad("stall=5%2ms", "bad stall value '5%2ms'");
	chaos_bad("stall=5%", "bad stall value '5%'");
	chaos_bad("irq=5:2ms", "bad irq value '5:2ms'");
	chaos_bad("irq=2", "bad irq value '2'");
	chaos_bad("irq=2ns", "bad irq value '2ns'");
	chaos_bad("start=ms", "bad start value 'ms'");
	chaos_bad("start=1.5ms", "bad start value '1.5ms'");
	chaos_bad("start=-1ms", "bad start value '-1ms'");
	chaos_bad("stall=", "bad stall value ''");
	chaos_bad("stall=%:1ms", "bad stall value '%:1ms'");
	chaos_bad("stall=.5%:1ms", "bad stall value '.5%:1ms'");
	chaos_bad("stall=5.%:1ms", "bad stall value '5.%:1ms'");
	chaos_bad("stall=0.12345%:1ms", "bad stall value '0.12345%:1ms'");
	chaos_bad("stall=5%:", "bad stall value '5%:'");
	chaos_bad("stall=5%:1ms:2ms", "bad stall value '5%:1ms:2ms'");
	chaos_bad("stall=OFF", "bad stall value 'OFF'");
	/* Limits. */
	chaos_bad("stall=101%:1ms", "stall probability '101%' exceeds 100%");
	chaos_bad("stall=100.0001%:1ms", "exceeds 100%");
	chaos_bad("irq=2s", "irq time '2s' exceeds 1s");
	chaos_bad("irq=1001ms", "irq time '1001ms' exceeds 1s");
	chaos_bad("start=50%:1000001us", "start time '1000001us' exceeds 1s");
	chaos_bad("start=99999999999999999999s", "exceeds 1s");
}

/*
 * config_validate() on a whole configuration as the flags and a --domain document leave it:
 * -S needs a socket, and <vcpus>' start hot-adds stay in nr_cpus..max_cpus-1 whatever --smp
 * says; config_apply_args() alone (the flags over a document) does not check them.
 */
static void test_validate(void **state)
{
	char *argv[] = { "plugvm", "-S", "--smp", "2,maxcpus=4", NULL };
	unsigned slots[2] = { 2, 3 };
	char err[ERRLEN] = "";
	struct vm_config cfg;

	(void)state;
	config_defaults(&cfg);
	cfg.qmp_disabled = true; /* as <plugvm:qmp path='none'/> leaves it */
	cfg.start_hotplug = slots;
	cfg.nr_start_hotplug = 2;
	cfg.domain_path = "vm.xml";
	assert_int_equal(config_apply_args(&cfg, 4, argv, err, sizeof(err)), CONFIG_RUN);
	assert_int_equal(config_validate(&cfg, err, sizeof(err)), -EINVAL);
	assert_contains(err, "-S with --qmp none: nothing could ever send `cont`");
	cfg.start_paused = false;
	assert_int_equal(config_validate(&cfg, err, sizeof(err)), 0);
	cfg.nr_cpus = 3; /* --smp 3,maxcpus=4: slot 2 would boot */
	assert_int_equal(config_validate(&cfg, err, sizeof(err)), -EINVAL);
	assert_contains(err, "vm.xml: <vcpus> hot-adds vCPU 2 at start, which --smp 3,maxcpus=4 "
			     "makes a boot CPU or takes away");
	cfg.nr_cpus = 1;
	cfg.max_cpus = 3; /* --smp 1,maxcpus=3: slot 3 is gone */
	assert_int_equal(config_validate(&cfg, err, sizeof(err)), -EINVAL);
	assert_contains(err, "hot-adds vCPU 3 at start, which --smp 1,maxcpus=3");
	free(cfg.cmdline);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_smp_spellings),
		cmocka_unit_test(test_memory_spellings),
		cmocka_unit_test(test_memory_errors),
		cmocka_unit_test(test_kernel_append),
		cmocka_unit_test(test_append_length),
		cmocka_unit_test(test_verbosity),
		cmocka_unit_test(test_help_version),
		cmocka_unit_test(test_bad_options),
		cmocka_unit_test(test_conventions),
		cmocka_unit_test(test_mem_values),
		cmocka_unit_test(test_mem_errors),
		cmocka_unit_test(test_smp_values),
		cmocka_unit_test(test_smp_errors),
		cmocka_unit_test(test_smp_err_buffer),
		cmocka_unit_test(test_qmp),
		cmocka_unit_test(test_smp_topology),
		cmocka_unit_test(test_sandbox_runas),
		cmocka_unit_test(test_mem_thp),
		cmocka_unit_test(test_jail_and_its_socket),
		cmocka_unit_test(test_spare_vcpus),
		cmocka_unit_test(test_chaos_flag),
		cmocka_unit_test(test_chaos_values),
		cmocka_unit_test(test_chaos_errors),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_actions),
		cmocka_unit_test(test_machine_type_names),
		cmocka_unit_test(test_machine_flag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
