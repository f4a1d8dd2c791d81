// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/sandbox.c, each in a child process (a filter cannot be taken off):
 * every thread kind's filter lets its own calls through and ends the process on another
 * with the report naming the kind and the call (for ioctl, the request); only threads can
 * be created under the main filter; a helper started with sandbox_start_thread() runs in
 * its kind's sandbox. Sanitizer builds run without filters, and say so.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "vmm/console.h"
#include "vmm/sandbox.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FILTERS 0
#else
#define FILTERS 1
#endif

struct probe {
	enum sandbox_kind kind;
	int what; /* 0 getppid, 1 a foreign ioctl, 2 fork */
};

static void forbidden(const struct probe *p)
{
	if (p->what == 0)
		syscall(SYS_getppid);
	else if (p->what == 1)
		ioctl(-1, KVM_CREATE_VM, 0);
	else
		syscall(SYS_fork);
}

static void enter_and_call(void *arg)
{
	const struct probe *p = arg;

	if (sandbox_init(true) || sandbox_enter(p->kind))
		_exit(90);
	/* Allowed for every kind: a write, the time. */
	printf("entered\n");
	fflush(stdout);
	forbidden(p);
	_exit(0); /* only without filters */
}

static void test_each_kind_reports_a_forbidden_call(void **state)
{
	static const char *const names[] = { "main", "vcpu", "console", "chaos-irq" };
	char out[1024], want[160];
	int k, st;

	(void)state;
	for (k = 0; k < SANDBOX_NR_KINDS; k++) {
		struct probe p = { .kind = (enum sandbox_kind)k, .what = 0 };

		assert_string_equal(sandbox_kind_name((enum sandbox_kind)k), names[k]);
		st = unit_run_child(enter_and_call, &p, out, sizeof(out));
		assert_contains(out, "entered");
		snprintf(want, sizeof(want),
			 "plugvm: sandbox: the %s thread made a forbidden system call: getppid "
			 "(110); ending the VM",
			 names[k]);
		if (FILTERS) {
			assert_int_equal(st, 8);
			assert_contains(out, want);
		} else {
			assert_int_equal(st, 0);
			assert_contains(out, "sanitizer build: seccomp filters are off");
		}
	}
}

static void test_foreign_ioctl_and_fork(void **state)
{
	struct probe vcpu_ioctl = { .kind = SANDBOX_VCPU, .what = 1 };
	struct probe main_fork = { .kind = SANDBOX_MAIN, .what = 2 };
	char out[1024];
	int st;

	(void)state;
	st = unit_run_child(enter_and_call, &vcpu_ioctl, out, sizeof(out));
	if (FILTERS) {
		assert_int_equal(st, 8);
		assert_contains(out, "the vcpu thread made a forbidden system call: ioctl (16, "
				     "request 0xae01)");
	}
	/* clone without CLONE_THREAD (a process) is not a thread: refused even to main. */
	st = unit_run_child(enter_and_call, &main_fork, out, sizeof(out));
	if (FILTERS) {
		assert_int_equal(st, 8);
		assert_contains(out, "the main thread made a forbidden system call: fork (57)");
	}
}

static void *helper(void *arg)
{
	(void)arg;
	syscall(SYS_getppid);
	return NULL;
}

static void main_then_helper(void *arg)
{
	pthread_t t;

	(void)arg;
	if (sandbox_init(true) || sandbox_enter(SANDBOX_MAIN))
		_exit(90);
	/* Created under the main filter, the helper narrows it to its own. */
	if (sandbox_start_thread(&t, SANDBOX_CONSOLE, helper, NULL))
		_exit(91);
	pthread_join(t, NULL);
	_exit(0);
}

static void test_helper_thread_in_its_sandbox(void **state)
{
	char out[1024];
	int st;

	(void)state;
	st = unit_run_child(main_then_helper, NULL, out, sizeof(out));
	if (FILTERS) {
		assert_int_equal(st, 8);
		assert_contains(out, "the console thread made a forbidden system call: getppid");
	} else {
		assert_int_equal(st, 0);
	}
}

/* The console writer stuck on a reader that never reads is cancelled at exit (glibc's
 * cancellation signal and unwinder) inside its sandbox. */
static void stalled_console(void *arg)
{
	static char junk[4096];
	struct console *c;
	int p[2], i;

	(void)arg;
	if (pipe(p) || sandbox_init(true) || sandbox_enter(SANDBOX_MAIN))
		_exit(90);
	c = console_create(p[1]);
	if (!c || console_start(c))
		_exit(91);
	memset(junk, 'x', sizeof(junk));
	for (i = 0; i < 64; i++)
		console_write(c, junk, sizeof(junk));
	console_destroy(c);
	_exit(0);
}

static void test_stalled_console_writer_is_cancelled_in_its_sandbox(void **state)
{
	char out[1024];

	(void)state;
	assert_int_equal(unit_run_child(stalled_console, NULL, out, sizeof(out)), 0);
	assert_not_contains(out, "forbidden system call");
	assert_contains(out, "console: the output is not read");
}

static void bad_test_kind(void *arg)
{
	(void)arg;
	setenv("PLUGVM_SANDBOX_TEST", "gpu", 1);
	_exit(sandbox_init(true) == -EINVAL ? 0 : 1);
}

static void test_hook_names_a_kind(void **state)
{
	char out[512];

	(void)state;
	assert_int_equal(unit_run_child(bad_test_kind, NULL, out, sizeof(out)), 0);
	assert_contains(out, "PLUGVM_SANDBOX_TEST: 'gpu' is not a thread kind");
}

UNIT_MAIN(NULL, NULL, cmocka_unit_test(test_each_kind_reports_a_forbidden_call),
	  cmocka_unit_test(test_foreign_ioctl_and_fork),
	  cmocka_unit_test(test_helper_thread_in_its_sandbox),
	  cmocka_unit_test(test_stalled_console_writer_is_cancelled_in_its_sandbox),
	  cmocka_unit_test(test_hook_names_a_kind))
