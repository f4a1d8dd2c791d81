// SPDX-License-Identifier: MIT
/*
 * Unit tests for guest/kernel/cmdline.c: bare flags and their 0/off/no forms, name=value
 * with quoting and last-one-wins, cmdline_uint's decimal/hex/garbage/overflow handling,
 * cmdline_list_has, and truncation of the stored copy at CMDLINE_MAX (the densest line's
 * every word included).
 */
#include "tests/unit/unit.h"

#include <stdlib.h>

#include "kernel/cmdline.h"

/* Expect cmdline_value(name) to be exactly `want` (NULL: absent). */
static void value_is(const char *name, const char *want)
{
	size_t len = 12345;
	const char *v = cmdline_value(name, &len);

	if (!want) {
		if (v)
			fail_msg("%s: expected no value, got \"%.*s\"", name, (int)len, v);
		return;
	}
	if (!v)
		fail_msg("%s: expected \"%s\", got no value", name, want);
	if (len != strlen(want) || memcmp(v, want, len))
		fail_msg("%s: expected \"%s\", got \"%.*s\"", name, want, (int)len, v);
	/* The value points into the stored line. */
	assert_true(v >= cmdline_get() && v + len <= cmdline_get() + strlen(cmdline_get()));
}

static void test_store(void **state)
{
	static const char s[] = "hz=1000  rt=1\thalt";

	(void)state;
	cmdline_init(s);
	assert_string_equal(cmdline_get(), s);
	assert_ptr_not_equal(cmdline_get(), s);
	cmdline_init("");
	assert_string_equal(cmdline_get(), "");
	assert_false(cmdline_flag("hz"));
	value_is("hz", NULL);
}

static void test_flags(void **state)
{
	(void)state;
	cmdline_init("halt verbose=1 quiet=0 a=off b=no c=yes d= e=false f=00 g=offf h=NO");
	assert_true(cmdline_flag("halt"));
	assert_true(cmdline_flag("verbose"));
	assert_false(cmdline_flag("quiet"));
	assert_false(cmdline_flag("a"));
	assert_false(cmdline_flag("b"));
	assert_true(cmdline_flag("c"));
	assert_true(cmdline_flag("d")); /* an empty value is not "off" */
	assert_true(cmdline_flag("e")); /* only 0, off and no turn a flag off */
	assert_true(cmdline_flag("f"));
	assert_true(cmdline_flag("g"));
	assert_true(cmdline_flag("h")); /* case matters */
	assert_false(cmdline_flag("missing"));
	assert_false(cmdline_flag("hal")); /* whole words only */
	assert_false(cmdline_flag("halte"));
	assert_false(cmdline_flag(""));

	/* The last occurrence wins, in both directions. */
	cmdline_init("halt=0 halt");
	assert_true(cmdline_flag("halt"));
	cmdline_init("halt halt=off");
	assert_false(cmdline_flag("halt"));
	cmdline_init("halt=no x halt=1 y");
	assert_true(cmdline_flag("halt"));

	/* Separators: spaces, tabs, newlines, runs of them, at both ends. */
	cmdline_init(" \t\n halt\t\tsmp\n  x ");
	assert_true(cmdline_flag("halt"));
	assert_true(cmdline_flag("smp"));
	assert_true(cmdline_flag("x"));
}

static void test_values(void **state)
{
	(void)state;
	cmdline_init("hz=1000 selftest=cpuhp,timer console=ttyS0,115200 a=b=c empty= bare");
	value_is("hz", "1000");
	value_is("selftest", "cpuhp,timer");
	value_is("console", "ttyS0,115200");
	value_is("a", "b=c");
	value_is("empty", "");
	value_is("bare", NULL); /* a bare word has no value */
	value_is("h", NULL);
	value_is("hz=1000", NULL);
	value_is("missing", NULL);

	/* The last value wins; a later bare word does not erase it. */
	cmdline_init("hz=100 x hz=250 hz");
	value_is("hz", "250");
	cmdline_init("hz hz=5");
	value_is("hz", "5");

	/* Quotes hold spaces and are stripped; an unterminated quote runs to the end. */
	cmdline_init("msg=\"hello  world\" x=1 q=\"\" r=\"a=b c\"");
	value_is("msg", "hello  world");
	value_is("x", "1");
	value_is("q", "");
	value_is("r", "a=b c");
	assert_false(cmdline_flag("world\""));
	cmdline_init("x=1 msg=\"no end  y=2");
	value_is("msg", "no end  y=2");
	value_is("y", NULL);
	/* A quote in the middle of a value is just a character. */
	cmdline_init("a=x\"y z\"");
	value_is("a", "x\"y");
	assert_true(cmdline_flag("z\""));
	/* Word right after a closing quote with no separator. */
	cmdline_init("a=\"1 2\"b=3");
	value_is("a", "1 2");
	value_is("b", "3");
}

static void test_uint(void **state)
{
	(void)state;
	cmdline_init("d=1000 z=0 h=0x1F H=0XaBc u=0xffffffffffffffff m=18446744073709551615 "
		     "o=18446744073709551616 ho=0x10000000000000000 g=12a n=-1 p=+1 x=0x "
		     "e= s=1\" sp=\" 7\" hx=0x12g b=0b101 big=99999999999999999999 lead=007 "
		     "oct=010 hex0=0x0");
	assert_int_equal(cmdline_uint("d", 7), 1000);
	assert_int_equal(cmdline_uint("z", 7), 0);
	assert_int_equal(cmdline_uint("h", 7), 0x1f);
	assert_int_equal(cmdline_uint("H", 7), 0xabc);
	assert_int_equal(cmdline_uint("u", 7), UINT64_MAX);
	assert_int_equal(cmdline_uint("m", 7), UINT64_MAX);
	assert_int_equal(cmdline_uint("lead", 7), 7);
	assert_int_equal(cmdline_uint("oct", 7), 10); /* no octal */
	assert_int_equal(cmdline_uint("hex0", 7), 0);
	/* Garbage, overflow and absence give the default. */
	assert_int_equal(cmdline_uint("o", 7), 7);
	assert_int_equal(cmdline_uint("ho", 7), 7);
	assert_int_equal(cmdline_uint("big", 7), 7);
	assert_int_equal(cmdline_uint("g", 7), 7);
	assert_int_equal(cmdline_uint("n", 7), 7);
	assert_int_equal(cmdline_uint("p", 7), 7);
	assert_int_equal(cmdline_uint("x", 7), 7);
	assert_int_equal(cmdline_uint("e", 7), 7);
	assert_int_equal(cmdline_uint("s", 7), 7);
	assert_int_equal(cmdline_uint("sp", 7), 7);
	assert_int_equal(cmdline_uint("hx", 7), 7);
	assert_int_equal(cmdline_uint("b", 7), 7);
	assert_int_equal(cmdline_uint("missing", 42), 42);
	assert_int_equal(cmdline_uint("missing", UINT64_MAX), UINT64_MAX);
	/* A bad last value does not fall back to an earlier good one. */
	cmdline_init("hz=100 hz=abc");
	assert_int_equal(cmdline_uint("hz", 5), 5);
	cmdline_init("hz=abc hz=100");
	assert_int_equal(cmdline_uint("hz", 5), 100);
	/* Quoted numbers parse. */
	cmdline_init("hz=\"250\"");
	assert_int_equal(cmdline_uint("hz", 5), 250);
}

static void test_list_has(void **state)
{
	const char *v;
	size_t len;

	(void)state;
	assert_true(cmdline_list_has("a,b,c", 5, "a"));
	assert_true(cmdline_list_has("a,b,c", 5, "b"));
	assert_true(cmdline_list_has("a,b,c", 5, "c"));
	assert_false(cmdline_list_has("a,b,c", 5, "d"));
	assert_false(cmdline_list_has("a,b,c", 5, "a,b"));
	assert_false(cmdline_list_has("ab,c", 4, "a"));
	assert_false(cmdline_list_has("ab,c", 4, "abc"));
	assert_false(cmdline_list_has("", 0, "a"));
	assert_true(cmdline_list_has("cpuhp", 5, "cpuhp"));
	/* Only `len` bytes count. */
	assert_false(cmdline_list_has("a,b,c", 3, "c"));
	assert_false(cmdline_list_has("abc", 2, "abc"));
	assert_true(cmdline_list_has("abc", 2, "ab"));
	/* Empty items. */
	assert_true(cmdline_list_has("a,,b", 4, ""));
	assert_true(cmdline_list_has(",a", 2, "a"));
	assert_true(cmdline_list_has("a,", 2, "a"));

	/* Over a value in the stored line, which is not NUL-terminated at its end. */
	cmdline_init("selftest=cpuhp,timer halt all");
	v = cmdline_value("selftest", &len);
	assert_non_null(v);
	assert_true(cmdline_list_has(v, len, "timer"));
	assert_true(cmdline_list_has(v, len, "cpuhp"));
	assert_false(cmdline_list_has(v, len, "halt"));
	assert_false(cmdline_list_has(v, len, "timer halt"));
	assert_false(cmdline_list_has(v, len, "all"));
}

static void test_truncation(void **state)
{
	char *s = malloc(CMDLINE_MAX + 100);
	size_t i;

	(void)state;
	assert_non_null(s);
	/* Exactly CMDLINE_MAX - 1 bytes are kept. */
	memset(s, 'a', CMDLINE_MAX + 99);
	s[CMDLINE_MAX + 99] = '\0';
	cmdline_init(s);
	assert_int_equal(strlen(cmdline_get()), CMDLINE_MAX - 1);
	s[CMDLINE_MAX - 1] = '\0';
	cmdline_init(s);
	assert_int_equal(strlen(cmdline_get()), CMDLINE_MAX - 1);
	assert_string_equal(cmdline_get(), s);

	/* The densest line, one-byte words: every one is seen, the last one too. */
	for (i = 0; i < CMDLINE_MAX - 1; i++)
		s[i] = i % 2 ? ' ' : 'a';
	s[CMDLINE_MAX - 2] = 'z'; /* word CMDLINE_MAX / 2, the last that fits */
	s[CMDLINE_MAX - 1] = '\0';
	cmdline_init(s);
	assert_true(cmdline_flag("a"));
	assert_true(cmdline_flag("z"));
	assert_false(cmdline_flag("b"));

	/* A word cut by the limit keeps what fits; words after it are gone. */
	memset(s, ' ', CMDLINE_MAX + 99);
	memcpy(s, "first=1", 7);
	i = CMDLINE_MAX - 1 - strlen("num=12");
	memcpy(s + i, "num=123456 last", 15);
	s[i + 15] = '\0';
	cmdline_init(s);
	assert_int_equal(strlen(cmdline_get()), CMDLINE_MAX - 1);
	assert_int_equal(cmdline_uint("first", 0), 1);
	assert_int_equal(cmdline_uint("num", 0), 12);
	assert_false(cmdline_flag("last"));

	/* A quoted value cut by the limit ends there. */
	memset(s, ' ', CMDLINE_MAX + 99);
	memcpy(s + CMDLINE_MAX - 10, "q=\"abcdefghijkl\"", 16);
	s[CMDLINE_MAX - 10 + 16] = '\0';
	cmdline_init(s);
	value_is("q", "abcdef"); /* bytes up to index CMDLINE_MAX - 2 */
	free(s);
}

/* Repeated keys come back in order; other words in between are skipped. */
static void test_next_value(void **state)
{
	const char *cur = NULL, *v;
	size_t len;

	(void)state;
	cmdline_init("a=1 virtio_mmio.device=4K@0xd0000000:16 b virtio_mmio.device "
		     "virtio_mmio.device=\"4K@0xd0001000:17\" c=3");
	assert_true(cmdline_next_value("virtio_mmio.device", &cur, &v, &len));
	assert_int_equal(len, strlen("4K@0xd0000000:16"));
	assert_memory_equal(v, "4K@0xd0000000:16", len);
	assert_true(cmdline_next_value("virtio_mmio.device", &cur, &v, &len));
	assert_int_equal(len, strlen("4K@0xd0001000:17"));
	assert_memory_equal(v, "4K@0xd0001000:17", len);
	assert_false(cmdline_next_value("virtio_mmio.device", &cur, &v, &len));
	/* Stays at the end. */
	assert_false(cmdline_next_value("virtio_mmio.device", &cur, &v, &len));
	cur = NULL;
	assert_false(cmdline_next_value("nope", &cur, &v, &len));
	cmdline_init("");
	cur = NULL;
	assert_false(cmdline_next_value("a", &cur, &v, &len));
}

static bool mmio(const char *s, uint64_t *size, uint64_t *base, unsigned *irq)
{
	return cmdline_parse_mmio_device(s, strlen(s), size, base, irq);
}

static void test_mmio_device(void **state)
{
	uint64_t size = 0, base = 0;
	unsigned irq = 0;

	(void)state;
	assert_true(mmio("4K@0xd0000000:16", &size, &base, &irq));
	assert_int_equal(size, 4096);
	assert_int_equal(base, 0xd0000000u);
	assert_int_equal(irq, 16);
	assert_true(mmio("0x200@4096:5:3", &size, &base, &irq));
	assert_int_equal(size, 0x200);
	assert_int_equal(base, 4096);
	assert_int_equal(irq, 5);
	assert_true(mmio("1m@0xFEE00000:23", &size, &base, &irq));
	assert_int_equal(size, 1 << 20);
	assert_true(mmio("2G@0x100000000:0", &size, &base, &irq));
	assert_int_equal(size, 2ull << 30);
	assert_int_equal(base, 0x100000000ull);
	/* Malformed: each must be refused. */
	assert_false(mmio("", &size, &base, &irq));
	assert_false(mmio("4K", &size, &base, &irq));
	assert_false(mmio("4K@", &size, &base, &irq));
	assert_false(mmio("4K@0xd0000000", &size, &base, &irq));
	assert_false(mmio("4K@0xd0000000:", &size, &base, &irq));
	assert_false(mmio("4K@0xd0000000:16x", &size, &base, &irq));
	assert_false(mmio("4K@0xd0000000:16:", &size, &base, &irq));
	assert_false(mmio("4T@0xd0000000:16", &size, &base, &irq));
	assert_false(mmio("0@0xd0000000:16", &size, &base, &irq));
	assert_false(mmio("@0xd0000000:16", &size, &base, &irq));
	assert_false(mmio("4K@0xfffffffffffff000:16", &size, &base, &irq));
	assert_false(mmio("4K@0xd0000000:0x100000000", &size, &base, &irq));
	assert_false(mmio("99999999999999999999@0:1", &size, &base, &irq));
	assert_false(mmio("0xffffffffffffffffK@0:1", &size, &base, &irq));
}

/* ---- cmdline_check ---------------------------------------------------------------------- */

static const struct cmdline_param check_params[] = {
	{ .name = "halt", .kind = CMDLINE_FLAG },
	{ .name = "hz", .kind = CMDLINE_UINT, .min = 10, .max = 10000 },
	{ .name = "tsc", .kind = CMDLINE_ENUM, .choices = "calibrate|kvmclock|cpuid" },
	{ .name = "selftest", .kind = CMDLINE_STRING },
	{ .name = "virtio_mmio.device", .kind = CMDLINE_STRING, .repeat = true },
	{ .name = "console", .kind = CMDLINE_IGNORED },
};

struct reports {
	unsigned n, fatal;
	char text[8][160];
};

static void collect(void *ctx, bool fatal, const char *word, size_t len, const char *why)
{
	struct reports *r = ctx;

	if (r->n < 8)
		snprintf(r->text[r->n], sizeof(r->text[0]), "%s'%.*s' %s", fatal ? "FATAL " : "",
			 (int)len, word, why);
	r->n++;
	r->fatal += fatal;
}

/* Check `line`; expect exactly the reports `want` (NULL-terminated), as "'word' why" prefixes. */
static void check_reports(const char *line, const char *const *want)
{
	struct reports r = { 0 };
	unsigned n = 0, i, got;

	cmdline_init(line);
	got = cmdline_check(check_params, sizeof(check_params) / sizeof(check_params[0]), collect,
			    &r);
	assert_int_equal(got, r.n);
	while (want[n])
		n++;
	if (r.n != n) {
		for (i = 0; i < r.n && i < 8; i++)
			print_message("report %u: %s\n", i, r.text[i]);
		fail_msg("'%s': %u reports, expected %u", line, r.n, n);
	}
	for (i = 0; i < n; i++)
		if (strncmp(r.text[i], want[i], strlen(want[i])))
			fail_msg("'%s': report %u is \"%s\", expected \"%s...\"", line, i,
				 r.text[i], want[i]);
}

static void test_check(void **state)
{
	(void)state;
	/* Good lines: nothing to say. */
	check_reports("", (const char *[]){ NULL });
	check_reports("halt hz=250 tsc=cpuid selftest=all console=ttyS0,115200",
		      (const char *[]){ NULL });
	check_reports("halt=1 halt=off virtio_mmio.device=4K@0xd0000000:16 "
		      "virtio_mmio.device=4K@0xd0001000:17 selftest=\"a,b\"",
		      (const char *[]){ "'halt=1' is given again later", NULL });
	/* make run's old bug: the shell's quotes reached the guest. */
	check_reports("\"selftest=all\"",
		      (const char *[]){ "'\"selftest=all\"' cannot be parsed", NULL });
	check_reports("selftest=\"all",
		      (const char *[]){ "'selftest=\"all' cannot be parsed", NULL });
	check_reports("=x a$b",
		      (const char *[]){ "'=x' cannot be parsed", "'a$b' cannot be parsed", NULL });
	/* Unknown words only warn; a bad value is fatal. */
	check_reports("bogus hlt",
		      (const char *[]){ "'bogus' is unknown", "'hlt' is unknown", NULL });
	check_reports("tsc=bogus", (const char *[]){ "FATAL 'tsc=bogus' is not one of", NULL });
	check_reports("tsc", (const char *[]){ "FATAL 'tsc' needs one of", NULL });
	check_reports("hz=5 hz=abc hz=", (const char *[]){ "FATAL 'hz=5' is out of range 10..10000",
							   "FATAL 'hz=abc' is not a number",
							   "FATAL 'hz=' needs a number", NULL });
	check_reports("halt=maybe selftest=",
		      (const char *[]){ "FATAL 'halt=maybe' is a flag",
					"FATAL 'selftest=' needs a value", NULL });
	check_reports("hz=100 hz=200", (const char *[]){ "'hz=100' is given again later", NULL });
}

UNIT_MAIN(NULL, NULL, cmocka_unit_test(test_store), cmocka_unit_test(test_flags),
	  cmocka_unit_test(test_values), cmocka_unit_test(test_uint),
	  cmocka_unit_test(test_list_has), cmocka_unit_test(test_truncation),
	  cmocka_unit_test(test_next_value), cmocka_unit_test(test_mmio_device),
	  cmocka_unit_test(test_check))
