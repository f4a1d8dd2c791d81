// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/console.c: guest output reaches the fd in order; a reader that stalls
 * never stalls the writers (the 16550 and the virtio console never write to the fd under
 * their device lock), the excess is dropped, counted and marked in the output; a closed
 * reader and a stalled one at exit end cleanly.
 */
#include "tests/unit/unit.h"

#include <fcntl.h>
#include <stdlib.h>
#include <time.h>

#include "vmm/console.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Read the pipe up to EOF; returns a malloc'ed, NUL-terminated copy. */
static char *read_all(int fd, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	ssize_t r;

	while ((r = read(fd, buf + n, cap - n)) > 0) {
		n += (size_t)r;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
		}
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

/* A started console that writes into a new pipe p; p[0] is the test's reader. */
static struct console *start_console(int p[2])
{
	struct console *c;

	assert_int_equal(pipe(p), 0);
	c = console_create(p[1]);
	assert_non_null(c);
	assert_int_equal(console_start(c), 0);
	return c;
}

static void test_output_in_order(void **state)
{
	struct console *c;
	int p[2];
	char line[32], *out;
	size_t len;
	unsigned i;

	(void)state;
	c = start_console(p);
	for (i = 0; i < 1000; i++) {
		snprintf(line, sizeof(line), "line %u\n", i);
		console_write(c, line, strlen(line));
	}
	console_destroy(c);
	close(p[1]);
	out = read_all(p[0], &len);
	close(p[0]);
	assert_true(len < 65536); /* it all fit the pipe: nothing was dropped */
	assert_int_equal(strncmp(out, "line 0\nline 1\n", 14), 0);
	assert_contains(out, "line 998\nline 999\n");
	assert_not_contains(out, "dropped");
	free(out);
}

/*
 * A reader that stops reading: the writers go on at memory speed, the buffer holds what
 * it can, the rest is dropped and counted; once the reader reads again, a marker line says
 * how much was lost, and later output follows.
 */
static void test_stalled_reader_never_stalls_the_writer(void **state)
{
	static char chunk[4096];
	struct console_stats st;
	struct console *c;
	double t0;
	int p[2];
	unsigned i;

	(void)state;
	c = start_console(p);
	memset(chunk, 'x', sizeof(chunk));
	chunk[sizeof(chunk) - 1] = '\n';
	t0 = now_s();
	for (i = 0; i < 4096; i++) /* 16 MiB into a pipe nobody reads */
		console_write(c, chunk, sizeof(chunk));
	assert_true(now_s() - t0 < 5.0);
	console_get_stats(c, &st);
	assert_true(st.dropped >= 16 * (1u << 20) - CONSOLE_BUF_BYTES - (1u << 20));
	assert_true(st.queued <= CONSOLE_BUF_BYTES);
	/* The reader comes back: what waited goes out, then the marker and new output. */
	{
		int flags = fcntl(p[0], F_GETFL);
		size_t got = 0;
		char *buf = malloc(4 << 20);
		ssize_t r;
		double until = now_s() + 10;

		fcntl(p[0], F_SETFL, flags | O_NONBLOCK);
		while (now_s() < until) {
			r = read(p[0], buf + got, (4 << 20) - got - 1);
			if (r > 0)
				got += (size_t)r;
			console_get_stats(c, &st);
			if (!st.queued && r <= 0)
				break;
		}
		console_write(c, "after\n", 6);
		until = now_s() + 10;
		buf[got] = 0;
		while (!strstr(buf, "after\n") && now_s() < until) {
			r = read(p[0], buf + got, (4 << 20) - got - 1);
			if (r > 0)
				got += (size_t)r;
			buf[got] = 0;
		}
		assert_contains(buf, "bytes of guest output dropped");
		assert_contains(buf, "\r\n[plugvm: ");
		assert_contains(buf, "dropped: the console was not read]\r\nafter\n");
		free(buf);
	}
	console_destroy(c);
	close(p[0]);
	close(p[1]);
}

/* A reader that never reads again: the exit waits a bounded time and ends the writer. */
static void test_exit_with_a_stalled_reader(void **state)
{
	static char chunk[65536];
	struct console *c;
	double t0;
	int p[2];

	(void)state;
	c = start_console(p);
	memset(chunk, 'y', sizeof(chunk));
	console_write(c, chunk, sizeof(chunk));
	console_write(c, chunk, sizeof(chunk)); /* more than the pipe holds */
	t0 = now_s();
	console_destroy(c);
	assert_true(now_s() - t0 < CONSOLE_EXIT_WAIT_MS / 1000.0 + 2);
	close(p[0]);
	close(p[1]);
}

/* A reader that goes away: the console stops writing, the writers never notice. */
static void test_closed_reader(void **state)
{
	struct console_stats st;
	struct console *c;
	int p[2];
	unsigned i;

	(void)state;
	c = start_console(p);
	close(p[0]); /* before the first write */
	for (i = 0; i < 100; i++)
		console_write(c, "gone\n", 5);
	console_get_stats(c, &st);
	console_destroy(c); /* EPIPE, not SIGPIPE: the writer blocks every signal */
	close(p[1]);
	assert_int_equal(st.written, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_output_in_order),
		cmocka_unit_test(test_stalled_reader_never_stalls_the_writer),
		cmocka_unit_test(test_exit_with_a_stalled_reader),
		cmocka_unit_test(test_closed_reader),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
