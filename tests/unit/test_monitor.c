// SPDX-License-Identifier: MIT
/*
 * Unit tests for guest/drivers/monitor_input.c: typed bytes become lines run by
 * monitor_run() (defined here, recording them) and echo to the consoles as a serial terminal
 * echoes them: printable bytes, a line end as one "\n" (the drivers write "\r\n"), an erasing
 * backspace or DEL as "\b \b", nothing for what is dropped.
 */
#include "tests/unit/unit.h"

#include <stdint.h>

#include "arch.h"
#include "drivers/monitor.h"
#include "tests/unit/guest_console.h"

static struct unit_console con = UNIT_CONSOLE_INIT;
static char runs[16][MONITOR_LINE_MAX + 1];
static unsigned nr_runs;
/* The echo written before each run: a command's answer follows its echoed line end. */
static size_t echo_at_run[16];

void monitor_run(const char *s, size_t n)
{
	assert_true(nr_runs < 16 && n <= MONITOR_LINE_MAX);
	memcpy(runs[nr_runs], s, n);
	runs[nr_runs][n] = '\0';
	echo_at_run[nr_runs] = con.len;
	nr_runs++;
}

static void type(struct monitor_line *m, const char *s)
{
	monitor_input(m, (const uint8_t *)s, strlen(s));
}

static void reset(struct monitor_line *m)
{
	memset(m, 0, sizeof(*m));
	unit_console_clear(&con);
	nr_runs = 0;
}

static void test_typed_bytes_echo_and_a_line_end_runs_the_line(void **state)
{
	struct monitor_line m;

	(void)state;
	reset(&m);
	type(&m, "cpu");
	assert_string_equal(con.buf, "cpu");
	assert_int_equal(nr_runs, 0);
	type(&m, "s\r");
	assert_string_equal(con.buf, "cpus\n");
	assert_int_equal(nr_runs, 1);
	assert_string_equal(runs[0], "cpus");
	/* The echoed line end is out before the command runs. */
	assert_int_equal(echo_at_run[0], strlen("cpus\n"));
}

static void test_cr_lf_is_one_line_end_and_lf_alone_is_one_too(void **state)
{
	struct monitor_line m;

	(void)state;
	reset(&m);
	type(&m, "help\r\nstats\nx\r");
	assert_int_equal(nr_runs, 3);
	assert_string_equal(runs[0], "help");
	assert_string_equal(runs[1], "stats");
	assert_string_equal(runs[2], "x");
	assert_string_equal(con.buf, "help\nstats\nx\n");
	/* CR and LF arriving in separate reads are still one line end. */
	reset(&m);
	type(&m, "a\r");
	type(&m, "\n");
	assert_int_equal(nr_runs, 1);
	assert_string_equal(con.buf, "a\n");
	/* Two CRs are two (empty) lines. */
	reset(&m);
	type(&m, "\r\r");
	assert_int_equal(nr_runs, 2);
	assert_string_equal(con.buf, "\n\n");
}

static void test_backspace_and_del_erase_with_bs_space_bs(void **state)
{
	struct monitor_line m;

	(void)state;
	reset(&m);
	type(&m, "echo hello from\b\b\b\x7fthe\n");
	assert_int_equal(nr_runs, 1);
	assert_string_equal(runs[0], "echo hello the");
	assert_string_equal(con.buf, "echo hello from\b \b\b \b\b \b\b \bthe\n");
	/* Nothing to erase: no echo (the cursor never moves left of the line). */
	reset(&m);
	type(&m, "\b\x7f"
		 "a\b\b");
	assert_string_equal(con.buf, "a\b \b");
}

static void test_dropped_bytes_echo_nothing(void **state)
{
	struct monitor_line m;
	char longline[MONITOR_LINE_MAX + 11];

	(void)state;
	reset(&m);
	type(&m, "a\x01\x1b\t\x80\xffz");
	assert_string_equal(con.buf, "az");
	/* What does not fit the line is neither kept nor echoed. */
	reset(&m);
	memset(longline, 'w', sizeof(longline) - 1);
	longline[sizeof(longline) - 1] = '\0';
	type(&m, longline);
	assert_int_equal(con.len, MONITOR_LINE_MAX);
	type(&m, "\n");
	assert_int_equal(nr_runs, 1);
	assert_int_equal(strlen(runs[0]), MONITOR_LINE_MAX);
}

static void test_a_long_burst_echoes_every_byte_in_order(void **state)
{
	struct monitor_line m;
	char in[512], want[1024];
	size_t i, w = 0, len = 0;

	(void)state;
	reset(&m);
	/* More echo than one gathering buffer holds: flushed in order, nothing lost. */
	for (i = 0; i + 1 < sizeof(in); i++) {
		in[i] = (i % 7 == 6) ? '\b' : (char)('a' + i % 26);
		if (in[i] == '\b') {
			if (len) {
				len--;
				memcpy(want + w, "\b \b", 3);
				w += 3;
			}
		} else if (len < MONITOR_LINE_MAX) {
			want[w++] = in[i];
			len++;
		}
	}
	in[sizeof(in) - 1] = '\0';
	type(&m, in);
	assert_int_equal(con.len, w);
	assert_memory_equal(con.buf, want, w);
}

static int setup(void **state)
{
	static uint64_t fake_cpu[1024]; /* zeroed: preempt count 0, CPU id 0 */

	(void)state;
	shim_set_cpu((struct cpu *)fake_cpu);
	arch_irq_enable();
	console_register(&con.con);
	return 0;
}

UNIT_MAIN(setup, NULL, cmocka_unit_test(test_typed_bytes_echo_and_a_line_end_runs_the_line),
	  cmocka_unit_test(test_cr_lf_is_one_line_end_and_lf_alone_is_one_too),
	  cmocka_unit_test(test_backspace_and_del_erase_with_bs_space_bs),
	  cmocka_unit_test(test_dropped_bytes_echo_nothing),
	  cmocka_unit_test(test_a_long_burst_echoes_every_byte_in_order))
