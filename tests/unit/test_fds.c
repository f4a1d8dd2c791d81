// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/fds.c, in a child process each (they close the process's descriptors):
 * every descriptor from 3 up is closed except the kept ones, whatever their order, and
 * stdio stays open. A failed start finds its manager's listening monitor socket among the
 * command line's fd=N and hands the manager an end of file.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>

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

/* A listening AF_UNIX stream socket in the abstract namespace (no file left behind). */
static int listener(struct sockaddr_un *addr, socklen_t *len)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(addr, 0, sizeof(*addr));
	addr->sun_family = AF_UNIX;
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			   (size_t)snprintf(addr->sun_path + 1, sizeof(addr->sun_path) - 1,
					    "plugvm-test-fds-%d", (int)getpid()));
	assert_int_equal(bind(fd, (struct sockaddr *)addr, *len), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

static void test_finds_the_managers_listener(void **state)
{
	struct sockaddr_un addr;
	socklen_t len;
	int lfd = listener(&addr, &len), pipefd[2], sp[2];
	char chardev[64], add_fd[64], qmp[16], bad[32], pair[32], eq[32];

	(void)state;
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	snprintf(add_fd, sizeof(add_fd), "set=0,fd=%d,opaque=serial0-source", pipefd[1]);
	snprintf(pair, sizeof(pair), "socket,id=x,fd=%d", sp[0]);
	snprintf(bad, sizeof(bad), "fd=%dx", lfd);
	snprintf(chardev, sizeof(chardev), "socket,id=charmonitor,fd=%d,server=on,wait=off", lfd);
	snprintf(qmp, sizeof(qmp), "fd=%d", lfd);
	{
		/* QEMU's grammar: a pipe (-add-fd), a connected socket and a malformed word are
		 * not the manager's listener; the chardev's fd= is, wherever the parse stopped. */
		char *qemu[] = { "plugvm-qemu", "-add-fd",  add_fd,  "-chardev",
				 pair,		"-x",	    bad,     "-blockdev",
				 "driver=file", "-chardev", chardev, NULL };
		char *native[] = { "plugvm", "--qmp", qmp, NULL };
		char *joined[] = { "plugvm", NULL, NULL };
		char *none[] = { "plugvm", "-add-fd", add_fd, "-chardev", pair, bad, NULL };

		assert_int_equal(fds_manager_listener(11, qemu), lfd);
		assert_int_equal(fds_manager_listener(3, native), lfd);
		snprintf(eq, sizeof(eq), "--qmp=fd=%d", lfd);
		joined[1] = eq;
		assert_int_equal(fds_manager_listener(2, joined), lfd);
		/* Not a word of its own: `xfd=N` names no descriptor. */
		snprintf(eq, sizeof(eq), "xfd=%d", lfd);
		assert_int_equal(fds_manager_listener(2, joined), -1);
		assert_int_equal(fds_manager_listener(6, none), -1);
	}
	close(lfd);
	{
		char *closed[] = { "plugvm", "--qmp", qmp, NULL };

		assert_int_equal(fds_manager_listener(3, closed), -1);
	}
	close(pipefd[0]);
	close(pipefd[1]);
	close(sp[0]);
	close(sp[1]);
}

/* The manager that connected reads an end of file; with nobody connecting, the wait ends. */
static void test_failed_start_hands_the_manager_an_eof(void **state)
{
	struct sockaddr_un addr;
	socklen_t len;
	int lfd = listener(&addr, &len), c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char byte;

	(void)state;
	assert_false(fds_hand_off_failure(lfd, 0));
	assert_false(fds_hand_off_failure(-1, 0));
	assert_int_equal(connect(c, (struct sockaddr *)&addr, len), 0);
	assert_true(fds_hand_off_failure(lfd, FDS_MANAGER_WAIT_MS));
	assert_int_equal(read(c, &byte, 1), 0);
	close(c);
	close(lfd);
}

UNIT_MAIN(NULL, NULL, cmocka_unit_test(test_closes_everything_above_stdio),
	  cmocka_unit_test(test_keeps_the_named_ones_in_any_order),
	  cmocka_unit_test(test_keeps_adjacent_descriptors),
	  cmocka_unit_test(test_refuses_too_long_a_list),
	  cmocka_unit_test(test_finds_the_managers_listener),
	  cmocka_unit_test(test_failed_start_hands_the_manager_an_eof))
