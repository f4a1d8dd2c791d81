// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/jail.c: which directories may be a jail's root, the RLIMIT_NOFILE a
 * jailed VMM gets, the socket's path inside, and jail_fork() refusing a bad DIR before it
 * forks (status 2).
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmm/config/config.h"
#include "vmm/control/qmp.h"
#include "vmm/exitcode.h"
#include "vmm/jail.h"

static struct stat dir_of(uid_t uid, mode_t mode)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_mode = S_IFDIR | mode;
	st.st_uid = uid;
	return st;
}

static void test_an_empty_private_directory_of_root_or_the_user_is_a_root(void **state)
{
	struct stat st = dir_of(0, 0700);
	char err[160] = "";

	(void)state;
	assert_int_equal(jail_check_dir(&st, 0, 0, err, sizeof(err)), 0);
	st = dir_of(0, 0755);
	assert_int_equal(jail_check_dir(&st, 0, 65534, err, sizeof(err)), 0);
	st = dir_of(65534, 0700);
	assert_int_equal(jail_check_dir(&st, 0, 65534, err, sizeof(err)), 0);
	assert_string_equal(err, "");
}

static void test_anything_else_is_refused_with_its_reason(void **state)
{
	struct stat st = dir_of(1000, 0700);
	char err[160];

	(void)state;
	assert_int_equal(jail_check_dir(&st, 0, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "neither root nor the --runas user"));
	assert_int_equal(jail_check_dir(&st, 0, 65534, err, sizeof(err)), -EINVAL);
	st = dir_of(0, 0770);
	assert_int_equal(jail_check_dir(&st, 0, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "writable by group or others"));
	st = dir_of(0, 01777);
	assert_int_equal(jail_check_dir(&st, 0, 0, err, sizeof(err)), -EINVAL);
	st = dir_of(0, 0700);
	assert_int_equal(jail_check_dir(&st, 1, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not empty"));
	st.st_mode = S_IFREG | 0600;
	assert_int_equal(jail_check_dir(&st, 0, 0, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "not a directory");
}

static void test_the_descriptor_limit_covers_every_client_and_vcpu(void **state)
{
	const unsigned long clients = 2ul * QMP_MAX_CLIENTS + 1;
	const unsigned long fixed = JAIL_FDS_QMP_SERVER + JAIL_FDS_LOOP + JAIL_FDS_TRANSIENT;

	(void)state;
	/* 16 open (0..15), 4 vCPUs possible: 16 + 513 + 7 + 8. */
	assert_int_equal(jail_nofile_limit(15, 16, 4), 16 + clients + fixed + 4 * 2);
	assert_int_equal(jail_nofile_limit(15, 16, 4), 16 + 513 + 7 + 8);
	/* Grows by two per possible vCPU, KVM's most (1024) included. */
	assert_int_equal(jail_nofile_limit(15, 16, 1024) - jail_nofile_limit(15, 16, 1023), 2);
	assert_int_equal(jail_nofile_limit(15, 16, 1024), 16 + clients + fixed + 2048);
	/* A high descriptor kept from the parent (fd=N) is below the limit, with room. */
	assert_int_equal(jail_nofile_limit(5000, 20, 1), 5001);
	assert_true(jail_nofile_limit(500, 20, 1) == 20 + clients + fixed + 2);
	assert_true(jail_nofile_limit(600, 20, 1) == 601);
}

static void test_the_socket_is_bound_at_its_name_under_the_new_root(void **state)
{
	(void)state;
	assert_string_equal(jail_inner_path("/run/vm1/plugvm.qmp"), "/plugvm.qmp");
	assert_string_equal(jail_inner_path("jail/q"), "/q");
}

/* jail_fork() on DIR: its return and *status, in a child (a wrong accept would fork). */
static int fork_on(const char *dir, const char *runas, int *status)
{
	struct vm_config cfg;
	int ret, ws;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		memset(&cfg, 0, sizeof(cfg));
		cfg.qmp_fd = -1;
		cfg.jail_dir = strdup(dir);
		cfg.runas = runas ? strdup(runas) : NULL;
		cfg.qmp_disabled = true;
		ret = jail_fork(&cfg, status);
		/* Refused: -1 and a status. Accepted: the test says so with 99. */
		_exit(ret == -1 ? *status : 99);
	}
	assert_int_equal(waitpid(pid, &ws, 0), pid);
	assert_true(WIFEXITED(ws));
	*status = WEXITSTATUS(ws);
	return *status;
}

static void test_a_bad_dir_is_refused_before_any_fork(void **state)
{
	char dir[] = "/tmp/test_jail_XXXXXX", path[64];
	int status, fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/x", dir);
	assert_int_equal(fork_on(path, NULL, &status), PLUGVM_EXIT_USAGE); /* missing */
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(fork_on(path, NULL, &status), PLUGVM_EXIT_USAGE); /* a file */
	assert_int_equal(fork_on(dir, NULL, &status), PLUGVM_EXIT_USAGE); /* not empty */
	unlink(path);
	assert_int_equal(chmod(dir, 0777), 0);
	assert_int_equal(fork_on(dir, NULL, &status), PLUGVM_EXIT_USAGE); /* world-writable */
	assert_int_equal(chmod(dir, 0700), 0);
	assert_int_equal(fork_on(dir, "no-such-user-here", &status), PLUGVM_EXIT_USAGE);
	if (getuid() == 0) {
		/* Owned by someone else than root and the --runas user. */
		assert_int_equal(chown(dir, 1234, 1234), 0);
		assert_int_equal(fork_on(dir, "root", &status), PLUGVM_EXIT_USAGE);
	}
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_an_empty_private_directory_of_root_or_the_user_is_a_root),
		cmocka_unit_test(test_anything_else_is_refused_with_its_reason),
		cmocka_unit_test(test_the_descriptor_limit_covers_every_client_and_vcpu),
		cmocka_unit_test(test_the_socket_is_bound_at_its_name_under_the_new_root),
		cmocka_unit_test(test_a_bad_dir_is_refused_before_any_fork),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
