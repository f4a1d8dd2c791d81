// SPDX-License-Identifier: MIT
/*
 * Unit tests for guest/kernel/printk.c: the guest's vsnprintf/snprintf against the host
 * C library for a table of formats (conversions, length modifiers, widths, flags, string
 * precision, truncation and return values), its documented deviations, and printk()'s
 * line handling through a registered console.
 */
#include "tests/unit/unit.h"

#include <limits.h>
#include <stdint.h>

#include "arch.h"
#include "kernel/printk.h"

/* printk.mk renames the guest's functions so that this file can also call the host's. */
#ifndef snprintf
#error "build with -Dsnprintf=guest_snprintf -Dvsnprintf=guest_vsnprintf (see printk.mk)"
#endif
int host_snprintf(char *buf, size_t size, const char *fmt, ...) __asm__("snprintf")
    __attribute__((format(printf, 3, 4)));

static unsigned nr_checked;

static void compare(int line, const char *fmt, const char *g, int gn, const char *h, int hn)
{
	nr_checked++;
	if (gn != hn || strcmp(g, h))
		fail_msg("line %d: format \"%s\": guest \"%s\" (%d), host \"%s\" (%d)", line, fmt,
			 g, gn, h, hn);
}

/* Format with both implementations into buffers of `size` bytes and compare. */
#define CHECK_N(size, fmt, ...)                                                       \
	do {                                                                          \
		char _g[(size) + 1], _h[(size) + 1];                                  \
		int _gn, _hn;                                                         \
		memset(_g, 0x5a, sizeof(_g));                                         \
		memset(_h, 0x5a, sizeof(_h));                                         \
		_gn = guest_snprintf(_g, (size), fmt, __VA_ARGS__);                   \
		_hn = host_snprintf(_h, (size), fmt, __VA_ARGS__);                    \
		/* Nothing is written past `size`. */                                 \
		assert_int_equal((uint8_t)_g[(size)], 0x5a);                          \
		compare(__LINE__, fmt, (size) ? _g : "", _gn, (size) ? _h : "", _hn); \
	} while (0)
#define CHECK(fmt, ...) CHECK_N(256, fmt, __VA_ARGS__)

static void test_integers(void **state)
{
	(void)state;
	CHECK("%d", 0);
	CHECK("%d", 42);
	CHECK("%d", -1);
	CHECK("%d", INT_MAX);
	CHECK("%d", INT_MIN);
	CHECK("%i", -7);
	CHECK("%i", 123456789);
	CHECK("%u", 0u);
	CHECK("%u", 3000000000u);
	CHECK("%u", UINT_MAX);
	CHECK("%x", 0u);
	CHECK("%x", 0xdeadbeefu);
	CHECK("%X", 0xdeadbeefu);
	CHECK("%x", UINT_MAX);
	CHECK("%#x", 0x1fu);
	CHECK("%#X", 0xabcu);
	CHECK("%#x", 0u);
	CHECK("%ld", 0l);
	CHECK("%ld", LONG_MAX);
	CHECK("%ld", LONG_MIN);
	CHECK("%ld", -1234567890123l);
	CHECK("%lu", ULONG_MAX);
	CHECK("%lx", 0xfedcba9876543210ul);
	CHECK("%lX", 0xfedcba9876543210ul);
	CHECK("%#lx", 0xffff800000000000ul);
	CHECK("%zu", (size_t)0);
	CHECK("%zu", SIZE_MAX);
	CHECK("%zx", (size_t)4096);
	CHECK("%lld", 0ll);
	CHECK("%lld", LLONG_MIN);
	CHECK("%lld", LLONG_MAX);
	CHECK("%llu", ULLONG_MAX);
	CHECK("%llx", 0x123456789abcdefull);
	CHECK("%li", LONG_MIN);
	/* int arguments are read as int, not as 64-bit. */
	CHECK("%d %d", -1, 5);
	CHECK("%u %x", 1u, 2u);
}

static void test_other_conversions(void **state)
{
	(void)state;
	CHECK("%s", "hello");
	CHECK("%s", "");
	CHECK("[%s|%s]", "a", "bc");
	CHECK("%c", 'x');
	CHECK("%c%c%c", 'a', 'b', 'c');
	CHECK("%%%s", "");
	CHECK("100%% %d%%", 5);
	CHECK("%p", (void *)0x1234);
	CHECK("%p", (void *)0xffff888000001000ul);
	CHECK("no conversions%s", "");
	CHECK("%s=%d (%#x) %c %lu%%", "cpu", 3, 0x20u, '!', 99ul);
}

static void test_widths_and_flags(void **state)
{
	(void)state;
	CHECK("[%5d]", 42);
	CHECK("[%5d]", -42);
	CHECK("[%-5d]", 42);
	CHECK("[%-5d]", -42);
	CHECK("[%05d]", 42);
	CHECK("[%05d]", -42);
	CHECK("[%05d]", 0);
	CHECK("[%2d]", 12345);
	CHECK("[%1d]", -1);
	CHECK("[%10u]", 7u);
	CHECK("[%08x]", 0xbeefu);
	CHECK("[%8X]", 0xbeefu);
	CHECK("[%016lx]", 0x1234ul);
	CHECK("[%20lld]", LLONG_MIN);
	CHECK("[%020lld]", LLONG_MIN);
	CHECK("[%-20llu]", 12ull);
	CHECK("[%#10x]", 0x1fu);
	CHECK("[%#010x]", 0x1fu);
	CHECK("[%-#10x]", 0x1fu);
	CHECK("[%#3x]", 0x1fffu);
	CHECK("[%#10x]", 0u);
	CHECK("[%18p]", (void *)0x1234);
	CHECK("[%-18p]", (void *)0x1234);
	CHECK("[%5s]", "ab");
	CHECK("[%-5s]", "ab");
	CHECK("[%2s]", "abcdef");
	CHECK("[%3c]", 'z');
	CHECK("[%-3c]", 'z');
	CHECK("[%*d]", 6, 42);
	CHECK("[%-*d]", 6, 42);
	CHECK("[%*s]", 4, "x");
	/* Integer precision: minimum digits. */
	CHECK("[%.3d]", 42);
	CHECK("[%.3d]", -42);
	CHECK("[%6.3d]", -42);
	CHECK("[%-6.3d]", 42);
	CHECK("[%.8x]", 0xabcu);
	CHECK("[%.1d]", 12345);
}

static void test_string_precision(void **state)
{
	(void)state;
	CHECK("[%.2s]", "abcdef");
	CHECK("[%.0s]", "abcdef");
	CHECK("[%.10s]", "abc");
	CHECK("[%5.2s]", "abcdef");
	CHECK("[%-8.3s]", "abcdef");
	CHECK("[%.*s]", 3, "abcdef");
	CHECK("[%.*s]", 0, "abcdef");
	CHECK("[%-*.*s]", 6, 2, "abcdef");
	/* Precision bounds the read: the string need not be terminated. */
	{
		const char unterminated[4] = { 'w', 'x', 'y', 'z' };

		CHECK("[%.4s]", unterminated);
		CHECK("[%.2s]", unterminated);
	}
}

static void test_truncation(void **state)
{
	char buf[16];
	int n;

	(void)state;
	CHECK_N(5, "%s", "hello world");
	CHECK_N(1, "%s", "hello world");
	CHECK_N(4, "%d", -12345);
	CHECK_N(6, "%d", -12345);
	CHECK_N(7, "%d", -12345);
	CHECK_N(3, "[%5d]", 42);
	CHECK_N(8, "%08x%s", 0x12u, "tail");
	CHECK_N(2, "%c%c%c", 'a', 'b', 'c');
	CHECK_N(10, "%-20s|", "left");
	CHECK_N(9, "%lld", LLONG_MIN);

	/* Size 0: nothing written (the buffer may be NULL), the would-be length returned. */
	memset(buf, 'q', sizeof(buf));
	n = guest_snprintf(buf, 0, "%s-%d", "abc", 12);
	assert_int_equal(n, 6);
	assert_int_equal(buf[0], 'q');
	assert_int_equal(guest_snprintf(NULL, 0, "%lu", ULONG_MAX), 20);
	CHECK_N(0, "%s", "x");

	/* The result is always terminated, even when it fills the buffer exactly. */
	n = guest_snprintf(buf, 4, "%s", "abc");
	assert_int_equal(n, 3);
	assert_string_equal(buf, "abc");
	n = guest_snprintf(buf, 4, "%s", "abcd");
	assert_int_equal(n, 4);
	assert_string_equal(buf, "abc");
}

static void test_guest_specific(void **state)
{
	const char *volatile fmt;
	const char *volatile null_str = NULL;
	char buf[64];

	(void)state;
	/* Where the guest knowingly differs from glibc. */
	guest_snprintf(buf, sizeof(buf), "%p", NULL);
	assert_string_equal(buf, "0x0"); /* glibc: "(nil)" */
	guest_snprintf(buf, sizeof(buf), "[%s]", null_str);
	assert_string_equal(buf, "[(null)]");
	/* An unknown conversion is printed as written; a trailing '%' is dropped. */
	fmt = "a%qb";
	guest_snprintf(buf, sizeof(buf), fmt, 0);
	assert_string_equal(buf, "a%qb");
	fmt = "abc%";
	assert_int_equal(guest_snprintf(buf, sizeof(buf), fmt, 0), 3);
	assert_string_equal(buf, "abc");
	fmt = "abc%-08";
	assert_int_equal(guest_snprintf(buf, sizeof(buf), fmt, 0), 3);
	assert_string_equal(buf, "abc");
	/* 'h' is accepted and ignored (the argument is an int either way). */
	guest_snprintf(buf, sizeof(buf), "%hd %hhu", 12, 34);
	assert_string_equal(buf, "12 34");
}

/* ---- printk and the consoles --------------------------------------------------------- */

static char con_buf[2048];
static size_t con_len;
static unsigned con_writes;

static void con_write(struct console *con, const char *s, size_t n)
{
	(void)con;
	assert_true(con_len + n < sizeof(con_buf));
	memcpy(con_buf + con_len, s, n);
	con_len += n;
	con_buf[con_len] = '\0';
	con_writes++;
	/* Consoles are called with interrupts off. */
	assert_false(arch_irqs_enabled());
}

static struct console test_con = { .name = "test", .write = con_write };

static void con_reset(void)
{
	con_len = 0;
	con_buf[0] = '\0';
	con_writes = 0;
}

static void test_printk(void **state)
{
	char long_line[400];

	(void)state;
	con_reset();
	printk("cpu %u: %s=%#lx\n", 3u, "cr3", 0x1000ul);
	assert_string_equal(con_buf, "cpu 3: cr3=0x1000\n");
	assert_int_equal(con_writes, 1); /* one line, one write */
	assert_true(arch_irqs_enabled()); /* restored afterwards */

	con_reset();
	pr_warn("x %d\n", 1);
	assert_string_equal(con_buf, "warning: x 1\n");

	/* Lines longer than printk's buffer are cut and still end the line. */
	con_reset();
	memset(long_line, 'L', sizeof(long_line) - 1);
	long_line[sizeof(long_line) - 1] = '\0';
	printk("%s\n", long_line);
	assert_int_equal(con_len, 319);
	assert_int_equal(con_buf[318], '\n');
	assert_int_equal(con_buf[317], 'L');

	/* Raw writes; a disabled console gets nothing. */
	con_reset();
	console_write("raw\n", 4);
	assert_string_equal(con_buf, "raw\n");
	test_con.enabled = false;
	con_reset();
	printk("quiet\n");
	assert_int_equal(con_len, 0);
	test_con.enabled = true;

	/* pr_debug only with printk_verbose. */
	con_reset();
	pr_debug("debug\n");
	assert_int_equal(con_len, 0);
	printk_verbose = true;
	pr_debug("debug\n");
	printk_verbose = false;
	assert_string_equal(con_buf, "debug\n");
}

/* ---- console_crlf(): the consoles' line ends ------------------------------------------- */

/* Expand `s` through console_crlf() with a destination of `cap` bytes, call after call. */
static size_t crlf_all(const char *s, size_t n, size_t cap, char *out, size_t out_size)
{
	size_t total = 0;

	while (n) {
		char dst[64];
		size_t used, k;

		assert_true(cap <= sizeof(dst));
		memset(dst, 0x5a, sizeof(dst));
		k = console_crlf(dst, cap, s, n, &used);
		/* Progress on every call, nothing past `cap`, never a CR LF cut in two. */
		assert_true(used > 0 && k > 0 && k <= cap && used <= n);
		assert_int_equal((uint8_t)dst[cap], 0x5a);
		if (dst[k - 1] == '\r')
			assert_true(s[used - 1] == '\r');
		assert_true(total + k <= out_size);
		memcpy(out + total, dst, k);
		total += k;
		s += used;
		n -= used;
	}
	return total;
}

static void test_console_crlf_writes_each_lf_as_crlf(void **state)
{
	static const char *const cases[][2] = {
		{ "", "" },
		{ "plain", "plain" },
		{ "line\n", "line\r\n" },
		{ "\n\n", "\r\n\r\n" },
		{ "a\nb\nc", "a\r\nb\r\nc" },
		{ "already\r\n", "already\r\r\n" }, /* as Linux's consoles: every LF */
		{ "fifteen bytes..\n", "fifteen bytes..\r\n" },
		{ "sixteen bytes...\n", "sixteen bytes...\r\n" },
	};
	char out[256];
	size_t i, cap;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (cap = 2; cap <= 17; cap++) {
			size_t n =
			    crlf_all(cases[i][0], strlen(cases[i][0]), cap, out, sizeof(out));

			assert_int_equal(n, strlen(cases[i][1]));
			assert_memory_equal(out, cases[i][1], n);
		}
}

static void test_console_crlf_fills_a_fifo_and_keeps_crlf_whole(void **state)
{
	char dst[16];
	size_t used, k;

	(void)state;
	/* 15 bytes then a LF: the FIFO's last byte cannot hold CR LF, so it waits. */
	k = console_crlf(dst, sizeof(dst), "abcdefghijklmno\nrest", 20, &used);
	assert_int_equal(k, 15);
	assert_int_equal(used, 15);
	/* 14 bytes then a LF: exactly one FIFO. */
	k = console_crlf(dst, sizeof(dst), "abcdefghijklmn\nrest", 19, &used);
	assert_int_equal(k, 16);
	assert_int_equal(used, 15);
	assert_memory_equal(dst + 14, "\r\n", 2);
	/* A run longer than the FIFO: a full FIFO, the rest next time. */
	k = console_crlf(dst, sizeof(dst), "0123456789abcdefghij\n", 21, &used);
	assert_int_equal(k, 16);
	assert_int_equal(used, 16);
}

static void test_console_crlf_matches_a_reference_on_random_text(void **state)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	char in[200], out[512], ref[512];
	unsigned round;

	(void)state;
	for (round = 0; round < 2000; round++) {
		size_t n, r = 0, i, cap, got;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		n = (size_t)(seed >> 33) % sizeof(in);
		cap = 2 + (size_t)(seed >> 20) % 40;
		for (i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			/* Mostly LFs and CRs among a few letters: every boundary case often. */
			in[i] = "\n\ra\nb"[(seed >> 40) % 5];
			if (in[i] == '\n')
				ref[r++] = '\r';
			ref[r++] = in[i];
		}
		got = crlf_all(in, n, cap, out, sizeof(out));
		assert_int_equal(got, r);
		assert_memory_equal(out, ref, r);
	}
}

static int setup(void **state)
{
	static uint64_t fake_cpu[1024]; /* zeroed: preempt count 0, CPU id 0, any layout */

	(void)state;
	shim_set_cpu((struct cpu *)fake_cpu);
	arch_irq_enable();
	console_register(&test_con);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	print_message("%u formats compared with the host C library\n", nr_checked);
	return 0;
}

UNIT_MAIN(setup, teardown, cmocka_unit_test(test_integers),
	  cmocka_unit_test(test_other_conversions), cmocka_unit_test(test_widths_and_flags),
	  cmocka_unit_test(test_string_precision), cmocka_unit_test(test_truncation),
	  cmocka_unit_test(test_guest_specific), cmocka_unit_test(test_printk),
	  cmocka_unit_test(test_console_crlf_writes_each_lf_as_crlf),
	  cmocka_unit_test(test_console_crlf_fills_a_fifo_and_keeps_crlf_whole),
	  cmocka_unit_test(test_console_crlf_matches_a_reference_on_random_text))
