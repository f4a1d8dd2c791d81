// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/fds.c, in a child process each (they close the process's descriptors):
 * every descriptor from 3 up is closed except the kept ones, whatever their order, and
 * stdio stays open.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include "vmm/fds.h"

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0 || errno != EBADF;
}

/* Descriptors 10, 11, 20, 100 and 1000 open on /dev/null; the child's exit says which
 * survived fds_close_inherited(keep): bit i for the i-th of them, 1 << 5 for stdio. */
static int survivors(const int *keep, unsigned nr_keep)
{
	static const int fds[] = { 10, 11, 20, 100, 1000 };
	int status, bits = 0;
	unsigned i;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		for (i = 0; i < 5; i++)
			if (null < 0 || dup2(null, fds[i]) != fds[i])
				_exit(100);
		if (fds_close_inherited(keep, nr_keep))
			_exit(101);
		for (i = 0; i < 5; i++)
			bits |= is_open(fds[i]) << i;
		if (is_open(0) && is_open(1) && is_open(2) && !is_open(null))
			bits |= 1 << 5;
		_exit(bits);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void test_closes_everything_above_stdio(void **state)
{
	(void)state;
	assert_int_equal(survivors(NULL, 0), 1 << 5);
}

static void test_keeps_the_named_ones_in_any_order(void **state)
{
	static const int keep[] = { 1000, 11, 100, 11, -1, 2 };

	(void)state;
	assert_int_equal(survivors(keep, 6), (1 << 5) | (1 << 1) | (1 << 3) | (1 << 4));
}

static void test_keeps_adjacent_descriptors(void **state)
{
	static const int keep[] = { 10, 11 };

	(void)state;
	assert_int_equal(survivors(keep, 2), (1 << 5) | (1 << 0) | (1 << 1));
}

static void test_refuses_too_long_a_list(void **state)
{
	int keep[FDS_MAX_KEEP + 1] = { 0 };

	(void)state;
	assert_int_equal(fds_close_inherited(keep, FDS_MAX_KEEP + 1), -EINVAL);
}

UNIT_MAIN(NULL, NULL, cmocka_unit_test(test_closes_everything_above_stdio),
	  cmocka_unit_test(test_keeps_the_named_ones_in_any_order),
	  cmocka_unit_test(test_keeps_adjacent_descriptors),
	  cmocka_unit_test(test_refuses_too_long_a_list))
