// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/sandbox.c, each in a child process (a filter cannot be taken off):
 * every thread kind's filter lets its own calls through and ends the process on another
 * with the report naming the kind and the call (for ioctl, the request); only threads can
 * be created under the main filter; a helper started with sandbox_start_thread() runs in
 * its kind's sandbox. Calls that reach outside the process pass only with their own
 * arguments: each kind, through PLUGVM_SANDBOX_TEST=KIND:ACTION, is refused what a hijacked
 * thread would do (signal or re-schedule pid 1, unlink, open, write to a client's socket),
 * and still makes its own calls (tgkill into itself, sched_* on itself, write and send on
 * the fds granted to it, unlinkat in the granted directory). Sanitizer builds run without
 * filters, and say so.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
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
	/* Allowed for every kind: a write to stderr, the time. */
	fprintf(stderr, "entered\n");
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
	if (pipe(p) || sandbox_init(true) || sandbox_allow_write(SANDBOX_CONSOLE, p[1]) ||
	    sandbox_enter(SANDBOX_MAIN))
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

static void bad_test_action(void *arg)
{
	(void)arg;
	setenv("PLUGVM_SANDBOX_TEST", "vcpu:write=x", 1);
	_exit(sandbox_init(true) == -EINVAL ? 0 : 1);
}

static void test_hook_names_a_kind(void **state)
{
	char out[512];

	(void)state;
	assert_int_equal(unit_run_child(bad_test_kind, NULL, out, sizeof(out)), 0);
	assert_contains(out, "PLUGVM_SANDBOX_TEST: 'gpu' is not a thread kind");
	assert_int_equal(unit_run_child(bad_test_action, NULL, out, sizeof(out)), 0);
	assert_contains(out, "PLUGVM_SANDBOX_TEST: 'write=x' is not an action");
}

/* A hijacked thread's calls, through the hook, and the call each report names. */
static const struct {
	const char *action, *call;
} hijacked[] = {
	{ "tgkill-other", "tgkill (234)" },
	{ "kill-other", "kill (62)" },
	{ "setaffinity-other", "sched_setaffinity (203)" },
	{ "setscheduler-other", "sched_setscheduler (144)" },
	{ "unlink", "unlink (87)" },
	{ "unlinkat", "unlinkat (263)" },
	{ "open", "openat (257)" },
	{ "write=", "write (1)" }, /* a client's socket: a socketpair end nobody granted */
};

struct hook {
	enum sandbox_kind kind;
	const char *action;
};

static void hook_child(void *arg)
{
	const struct hook *h = arg;
	char env[64];
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		_exit(92);
	snprintf(env, sizeof(env), "%s:%s", sandbox_kind_name(h->kind), h->action);
	if (!strcmp(h->action, "write="))
		snprintf(env, sizeof(env), "%s:write=%d", sandbox_kind_name(h->kind), sv[0]);
	setenv("PLUGVM_SANDBOX_TEST", env, 1);
	/* Owned by others: the console's stdout, an eventfd for the vCPUs. */
	if (sandbox_init(true) || sandbox_allow_write(SANDBOX_CONSOLE, 1) ||
	    (h->kind != SANDBOX_MAIN && sandbox_enter(SANDBOX_MAIN)) || sandbox_enter(h->kind))
		_exit(90);
	_exit(0); /* only without filters */
}

static void test_each_kind_is_refused_what_a_hijacked_thread_would_do(void **state)
{
	char out[2048], want[160];
	size_t i;
	int k, st;

	(void)state;
	for (k = 0; k < SANDBOX_NR_KINDS; k++)
		for (i = 0; i < sizeof(hijacked) / sizeof(hijacked[0]); i++) {
			struct hook h = { .kind = (enum sandbox_kind)k,
					  .action = hijacked[i].action };

			st = unit_run_child(hook_child, &h, out, sizeof(out));
			snprintf(want, sizeof(want),
				 "plugvm: sandbox: the %s thread made a forbidden system call: %s; "
				 "ending the VM",
				 sandbox_kind_name(h.kind), hijacked[i].call);
			if (FILTERS) {
				assert_int_equal(st, 8);
				assert_contains(out, want);
				assert_not_contains(out, "not refused");
			} else {
				assert_int_equal(st, 0);
				assert_contains(out, "not refused");
			}
		}
}

/* Each kind's own calls with their own arguments. */
static void own_calls(void *arg)
{
	const enum sandbox_kind *kind = arg;
	char dir[] = "/tmp/plugvm-sandbox-XXXXXX";
	struct sched_param param = { 0 };
	int sv[2], dir_fd, fd, ev[2];
	cpu_set_t mine;

	if (!mkdtemp(dir) || (dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (fd = openat(dir_fd, "sock", O_CREAT | O_WRONLY | O_CLOEXEC, 0600)) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) || pipe(ev) ||
	    sched_getaffinity(0, sizeof(mine), &mine))
		_exit(92);
	close(fd);
	if (sandbox_init(true) || sandbox_allow_write(SANDBOX_VCPU, ev[1]) ||
	    sandbox_allow_unlinkat(dir_fd))
		_exit(90);
	if (*kind != SANDBOX_MAIN && sandbox_enter(SANDBOX_MAIN))
		_exit(91);
	if (sandbox_enter(*kind))
		_exit(94);
	/* The filters are compiled: a grant now would not be in them. */
	if (sandbox_allow_write(SANDBOX_VCPU, sv[1]) != -EBUSY)
		_exit(93);
	fprintf(stderr, "entered\n");
	/*
	 * Time without the vDSO: a host whose clock source has none (a nested guest's, Xen's)
	 * makes glibc's time calls real system calls.
	 */
	{
		struct timeval tv;
		struct timespec ts;

		if (syscall(SYS_gettimeofday, &tv, NULL) || syscall(SYS_time, NULL) < 0 ||
		    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts))
			_exit(96);
	}
	if (*kind == SANDBOX_MAIN) {
		if (send(sv[1], "x", 1, MSG_NOSIGNAL) != 1 || write(ev[1], "x", 1) != 1 ||
		    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), 0) ||
		    unlinkat(dir_fd, "sock", 0))
			_exit(95);
		fprintf(stderr, "main: own calls pass\n");
		/* The directory itself is not a name to remove: */
		syscall(SYS_unlinkat, dir_fd, "sock", AT_REMOVEDIR);
	} else {
		if (write(ev[1], "x", 1) != 1 ||
		    syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), 0) ||
		    sched_setaffinity(0, sizeof(mine), &mine) ||
		    (sched_setscheduler(0, SCHED_OTHER, &param) && errno != EPERM))
			_exit(95);
		fprintf(stderr, "vcpu: own calls pass\n");
		/* A client's socket is the main thread's, whether written or sent to. */
		send(sv[1], "x", 1, MSG_NOSIGNAL);
	}
	_exit(0); /* only without filters */
}

static void test_own_calls_pass_with_their_own_arguments(void **state)
{
	static const enum sandbox_kind kinds[] = { SANDBOX_MAIN, SANDBOX_VCPU };
	static const char *const passed[] = { "main: own calls pass", "vcpu: own calls pass" };
	static const char *const refused[] = {
		"the main thread made a forbidden system call: unlinkat (263)",
		"the vcpu thread made a forbidden system call: sendto (44)",
	};
	char out[1024];
	int i, st;

	(void)state;
	if (!FILTERS)
		skip();
	for (i = 0; i < 2; i++) {
		st = unit_run_child(own_calls, (void *)&kinds[i], out, sizeof(out));
		assert_contains(out, passed[i]);
		assert_int_equal(st, 8);
		assert_contains(out, refused[i]);
	}
}

UNIT_MAIN(NULL, NULL, cmocka_unit_test(test_each_kind_reports_a_forbidden_call),
	  cmocka_unit_test(test_foreign_ioctl_and_fork),
	  cmocka_unit_test(test_helper_thread_in_its_sandbox),
	  cmocka_unit_test(test_stalled_console_writer_is_cancelled_in_its_sandbox),
	  cmocka_unit_test(test_hook_names_a_kind),
	  cmocka_unit_test(test_each_kind_is_refused_what_a_hijacked_thread_would_do),
	  cmocka_unit_test(test_own_calls_pass_with_their_own_arguments))
