/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the cmocka unit tests: substring assertions for negative tests (they
 * check the status and the text) and a fork() runner for paths that end the process
 * (guest panic() -> shim arch_poweroff() -> exit(100 + status)).
 */
#ifndef PLUGVM_TESTS_UNIT_H
#define PLUGVM_TESTS_UNIT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/*
 * The main() of a test program that runs one group of tests: UNIT_MAIN(setup, teardown,
 * cmocka_unit_test(a), cmocka_unit_test(b), ...); setup and teardown may be NULL.
 */
#define UNIT_MAIN(setup, teardown, ...)                                     \
	int main(void)                                                      \
	{                                                                   \
		const struct CMUnitTest unit_tests[] = { __VA_ARGS__ };     \
                                                                            \
		return cmocka_run_group_tests(unit_tests, setup, teardown); \
	}

/* A test run between the file's own setup() and teardown(), one fresh fixture per test. */
#define UNIT_TEST_FIXTURE(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* Fail the test unless `needle` occurs in `haystack`. */
#define assert_contains(haystack, needle)                                              \
	do {                                                                           \
		const char *_h = (haystack), *_n = (needle);                           \
		if (!_h || !strstr(_h, _n))                                            \
			fail_msg("expected \"%s\" in \"%s\"", _n, _h ? _h : "(null)"); \
	} while (0)

#define assert_not_contains(haystack, needle)                                \
	do {                                                                 \
		const char *_h = (haystack), *_n = (needle);                 \
		if (_h && strstr(_h, _n))                                    \
			fail_msg("did not expect \"%s\" in \"%s\"", _n, _h); \
	} while (0)

/*
 * Run fn(arg) in a child process with its stdout and stderr captured into out (NUL
 * terminated, truncated to outlen - 1). Returns the child's exit status (0-255), or
 * 128 + signal if it was killed; a child whose fn returns exits with 0.
 * Do not use cmocka assertions inside fn: report through the exit status instead.
 */
static inline int unit_run_child(void (*fn)(void *), void *arg, char *out, size_t outlen)
{
	int fds[2], status;
	size_t used = 0;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[1]);
		fn(arg);
		fflush(stdout);
		fflush(stderr);
		_exit(0);
	}
	close(fds[1]);
	for (;;) {
		char sink[256];
		ssize_t n;

		if (used + 1 < outlen)
			n = read(fds[0], out + used, outlen - 1 - used);
		else
			n = read(fds[0], sink, sizeof(sink));
		if (n <= 0)
			break;
		if (used + 1 < outlen)
			used += (size_t)n;
	}
	if (outlen)
		out[used] = '\0';
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/* Capture what the code under test writes to stderr (fd 2) between begin and end. */
struct unit_capture {
	int saved_fd;
	FILE *tmp;
};

static inline void unit_capture_begin(struct unit_capture *c)
{
	fflush(stderr);
	c->tmp = tmpfile();
	assert_non_null(c->tmp);
	c->saved_fd = dup(2);
	assert_true(c->saved_fd >= 0);
	assert_int_equal(dup2(fileno(c->tmp), 2), 2);
}

/* Stop capturing; `out` receives the text (NUL terminated, truncated to outlen - 1). */
static inline void unit_capture_end(struct unit_capture *c, char *out, size_t outlen)
{
	size_t n;

	fflush(stderr);
	assert_int_equal(dup2(c->saved_fd, 2), 2);
	close(c->saved_fd);
	rewind(c->tmp);
	n = fread(out, 1, outlen - 1, c->tmp);
	out[n] = '\0';
	fclose(c->tmp);
}

#endif
