// SPDX-License-Identifier: MIT
/*
 * seccomp allow-lists per thread kind, the SIGSYS report, and --runas. Each kind's list is
 * what its code paths call (glibc's wrappers included: pthread_create is clone + mmap +
 * mprotect, pthread_kill is getpid + tgkill, malloc is brk/mmap/munmap/madvise); ioctl is
 * allowed only for the KVM requests the kind issues, mmap and mprotect never with PROT_EXEC,
 * clone only for threads (clone3 fails with ENOSYS so glibc falls back to clone, whose flags
 * a filter can see). Calls that could reach outside the VM carry argument checks in the BPF
 * itself: tgkill only into this process, sched_* only on the calling thread, write only on
 * the fds granted to the kind, unlinkat only in the QMP socket's and the pidfile's directories; no open* at all.
 * The SIGSYS handler only writes and exits: async-signal-safe.
 */
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/kvm.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sysinfo.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "exitcode.h"
#include "log.h"

#define MAX_SYSCALL_NR 512 /* names the SIGSYS report can print */

static bool filters_on;
static int test_kind = -1; /* PLUGVM_SANDBOX_TEST=KIND[:ACTION] */
static int test_action, test_fd;
static const char *syscall_names[MAX_SYSCALL_NR];
static __thread const char *thread_kind = "new"; /* not entered yet: main's filter */
/*
 * Each kind's filter, compiled once by the first sandbox_enter(), the main thread's while it
 * runs alone, with the grants made during setup, so that no vCPU thread compiles one (nor
 * has libseccomp malloc an arena for it) on its way to KVM_RUN: docs/design.md has the
 * cost. Written once, then only read; a grant after it fails with -EBUSY (test_sandbox.c
 * test_own_calls_pass_with_their_own_arguments).
 */
static struct sock_fprog compiled[SANDBOX_NR_KINDS];
static pthread_once_t compile_once = PTHREAD_ONCE_INIT;
static int compile_result;

/*
 * The fds each kind may write(2) to, granted during setup (sandbox_allow_write()); fd 2,
 * the log, is every kind's. Fixed once the filters are compiled.
 */
#define MAX_WRITE_GRANTS 16
static struct {
	int fd;
	unsigned kinds;
} write_grants[MAX_WRITE_GRANTS];
static unsigned nr_write_grants;
/* sandbox_allow_unlinkat(): the QMP socket's directory and the pidfile's */
#define MAX_UNLINK_DIRS 2
static int unlink_dir_fds[MAX_UNLINK_DIRS];
static unsigned nr_unlink_dirs;
static bool sealed; /* the filters are compiled: no more grants */

static const char *const kind_names[SANDBOX_NR_KINDS] = {
	[SANDBOX_MAIN] = "main",
	[SANDBOX_VCPU] = "vcpu",
	[SANDBOX_CONSOLE] = "console",
	[SANDBOX_CHAOS_IRQ] = "chaos-irq",
};

/* Which kinds may make a call: a bit per kind. */
#define M   (1u << SANDBOX_MAIN)
#define V   (1u << SANDBOX_VCPU)
#define C   (1u << SANDBOX_CONSOLE)
#define I   (1u << SANDBOX_CHAOS_IRQ)
#define ALL (M | V | C | I)

/* Calls allowed whatever their arguments. */
static const struct {
	int nr;
	unsigned kinds;
} plain_rules[] = {
	/* every thread: locks, time, logging, signal return, the end of a thread */
	{ SCMP_SYS(futex), ALL },
	{ SCMP_SYS(clock_gettime), ALL },
	/* glibc's time calls when the clock source has no vDSO (nested guests, Xen) */
	{ SCMP_SYS(gettimeofday), ALL },
	{ SCMP_SYS(time), ALL },
	{ SCMP_SYS(clock_nanosleep), ALL },
	{ SCMP_SYS(nanosleep), ALL },
	{ SCMP_SYS(rt_sigprocmask), ALL },
	{ SCMP_SYS(rt_sigreturn), ALL },
	{ SCMP_SYS(restart_syscall), ALL },
	{ SCMP_SYS(gettid), ALL },
	{ SCMP_SYS(madvise), ALL }, /* glibc frees a dead thread's stack with it */
	{ SCMP_SYS(munmap), ALL },
	{ SCMP_SYS(exit), ALL },
	{ SCMP_SYS(exit_group), ALL },
	{ SCMP_SYS(sched_yield), ALL },
	/* malloc: the vCPU threads build QMP events, the main thread everything */
	{ SCMP_SYS(brk), M | V | C },
	{ SCMP_SYS(mremap), M | V },
	/* the console writer's cancellation handler checks who sent it (console_destroy());
	 * tgkill (pthread_kill's kicks) is checked in add_rules() */
	{ SCMP_SYS(getpid), M | V | C },
	/* the console writer waits for a non-blocking stdout */
	{ SCMP_SYS(poll), M | C },
	{ SCMP_SYS(ppoll), M | C },
	/* the event loop: QMP sockets, eventfds, signalfd, stdin, teardown */
	{ SCMP_SYS(read), M },
	{ SCMP_SYS(readv), M },
	{ SCMP_SYS(close), M },
	{ SCMP_SYS(epoll_create1), M }, /* the event loop sets up after the sandbox */
	{ SCMP_SYS(epoll_wait), M },
	{ SCMP_SYS(epoll_pwait), M },
	{ SCMP_SYS(epoll_ctl), M },
	{ SCMP_SYS(accept4), M },
	{ SCMP_SYS(recvfrom), M },
	{ SCMP_SYS(recvmsg), M },
	/* send(2) to QMP clients, accepted after the filters: on any fd, but a send only
	 * reaches a socket, and the main thread's only sockets are its QMP ones (it can
	 * neither create nor connect one under its filter) */
	{ SCMP_SYS(sendto), M },
	{ SCMP_SYS(shutdown), M },
	{ SCMP_SYS(fcntl), M },
	{ SCMP_SYS(fstat), M },
	{ SCMP_SYS(newfstatat), M },
	{ SCMP_SYS(pread64), M }, /* query-stats: KVM's statistics fds */
	/* a new thread's first steps in glibc, under the main thread's inherited filter */
	{ SCMP_SYS(set_robust_list), M },
	{ SCMP_SYS(rseq), M },
};

/* KVM ioctls per kind. */
static const struct {
	unsigned long req;
	unsigned kinds;
} ioctl_rules[] = {
	{ KVM_RUN, V },
	{ KVM_IRQ_LINE, M | V | I },
	{ KVM_SIGNAL_MSI, M }, /* the paravirt hotplug notification: device_add/_del */
	{ KVM_GET_REGS, M | V },
	{ KVM_SET_REGS, M | V },
	{ KVM_GET_SREGS, M | V },
	{ KVM_SET_SREGS, M | V },
	{ KVM_SET_MP_STATE, M | V },
	{ KVM_TRANSLATE, M | V }, /* the crash dump */
	/* QMP inject-nmi: each vCPU thread checks it has started, then injects into itself */
	{ KVM_GET_MP_STATE, V },
	{ KVM_NMI, V },
	/* ... and a direct start drops an NMI still queued for the CPU's past life */
	{ KVM_GET_VCPU_EVENTS, V },
	{ KVM_SET_VCPU_EVENTS, V },
	/* hot-add: a new vCPU (vcpu.c:vcpu_create) or a parked one reset (vcpu_reset_for_sipi) */
	{ KVM_CREATE_VCPU, M },
	{ KVM_GET_TSC_KHZ, M },
	{ KVM_SET_CPUID2, M },
	{ KVM_GET_LAPIC, M },
	{ KVM_SET_LAPIC, M },
	{ KVM_GET_FPU, M },
	{ KVM_SET_FPU, M },
	{ KVM_GET_STATS_FD, M }, /* vcpu_create: query-stats' fd, opened before it runs */
	/* system_reset (machine.c): the chips and vCPU 0 at power-on state */
	{ KVM_SET_IRQCHIP, M },
	{ KVM_SET_MSRS, M }, /* reset_to(): hot-add and reset, both from main */
};

const char *sandbox_kind_name(enum sandbox_kind kind)
{
	return (unsigned)kind < SANDBOX_NR_KINDS ? kind_names[kind] : "unknown";
}

static size_t put(char *buf, size_t at, size_t cap, const char *s)
{
	while (*s && at < cap)
		buf[at++] = *s++;
	return at;
}

/* v in `base` at the end of buf; returns where it starts. Async-signal-safe. */
static const char *fmt_num(char *buf, size_t len, uint64_t v, unsigned base)
{
	size_t i = len;

	buf[--i] = '\0';
	do {
		buf[--i] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v && i);
	return buf + i;
}

/* SIGSYS from a filter: name the thread kind and the call, then end the process. */
static void sigsys_handler(int sig, siginfo_t *si, void *uctx)
{
	const ucontext_t *uc = uctx;
	char line[256], num[24], req[24];
	const char *name = NULL;
	unsigned nr = (unsigned)si->si_syscall;
	size_t n = 0;

	(void)sig;
	if (nr < MAX_SYSCALL_NR)
		name = syscall_names[nr];
	n = put(line, n, sizeof(line), "plugvm: sandbox: the ");
	n = put(line, n, sizeof(line), thread_kind);
	n = put(line, n, sizeof(line), " thread made a forbidden system call: ");
	n = put(line, n, sizeof(line), name ? name : "?");
	n = put(line, n, sizeof(line), " (");
	n = put(line, n, sizeof(line), fmt_num(num, sizeof(num), nr, 10));
	if (nr == SCMP_SYS(ioctl)) {
		/* Which request: the second argument, still in its register. */
		n = put(line, n, sizeof(line), ", request 0x");
		n = put(line, n, sizeof(line),
			fmt_num(req, sizeof(req), (uint64_t)uc->uc_mcontext.gregs[REG_RSI], 16));
	}
	n = put(line, n, sizeof(line), "); ending the VM\n");
	if (write(STDERR_FILENO, line, n) < 0) {
		/* nothing left to tell */
	}
	_exit(PLUGVM_EXIT_INTERNAL);
}

static void *wait_for_cancel(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/*
 * glibc sets threads and cancellation up lazily: the first pthread_create() of a
 * single-threaded process installs its internal signal handlers (rt_sigaction), the first
 * pthread_cancel() loads libgcc_s for unwinding (openat, mmap with PROT_EXEC). No list
 * allows those: create and cancel one thread now, before any filter.
 */
static int warm_up_threads(void)
{
	pthread_t t;
	int err = pthread_create(&t, NULL, wait_for_cancel, NULL);

	if (err) {
		log_error("sandbox: cannot start a thread: %s", strerror(err));
		return -err;
	}
	pthread_cancel(t);
	pthread_join(t, NULL);
	return 0;
}

static int add_rules(scmp_filter_ctx ctx, enum sandbox_kind kind);
static int parse_test_hook(const char *test);

/* Kind's filter as libseccomp would load it, into compiled[kind]. 0 or -errno (logged). */
static int compile_filter(enum sandbox_kind kind)
{
	/* The kernel's limit, BPF_MAXINSNS, bounds what a filter can be. */
	size_t max = 4096 * sizeof(struct sock_filter);
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
	struct sock_filter *prog = malloc(max);
	int pipe_fd[2] = { -1, -1 }, r;
	ssize_t n = -1;

	if (!ctx || !prog) {
		r = -ENOMEM;
		goto out;
	}
	r = add_rules(ctx, kind);
	/* libseccomp 2.5 exports only to a file descriptor; the program fits a pipe's buffer. */
	if (!r && pipe2(pipe_fd, O_CLOEXEC) < 0)
		r = -errno;
	if (!r)
		r = seccomp_export_bpf(ctx, pipe_fd[1]);
	if (!r) {
		close(pipe_fd[1]);
		pipe_fd[1] = -1;
		n = read(pipe_fd[0], prog, max);
		if (n <= 0 || n % (ssize_t)sizeof(*prog) || (size_t)n == max)
			r = n < 0 ? -errno : -EPROTO;
	}
	if (!r) {
		compiled[kind].filter = prog;
		compiled[kind].len = (unsigned short)(n / (ssize_t)sizeof(*prog));
		prog = NULL;
	}
out:
	if (r)
		log_error("sandbox: compiling the %s thread's seccomp filter: %s", kind_names[kind],
			  strerror(-r));
	for (int i = 0; i < 2; i++)
		if (pipe_fd[i] >= 0)
			close(pipe_fd[i]);
	free(prog);
	if (ctx)
		seccomp_release(ctx);
	return r;
}

int sandbox_init(bool enabled)
{
	const char *test = getenv("PLUGVM_SANDBOX_TEST");
	struct sigaction sa;
	int i;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* Their runtimes call what no list allows (LSan's ptrace at exit, TSan's own thread). */
	if (enabled)
		log_error("sandbox: sanitizer build: seccomp filters are off");
	enabled = false;
#else
	if (!enabled)
		log_error("sandbox: OFF (--sandbox off): no seccomp filters; a compromised VMM "
			  "thread could make any system call. For debugging only.");
#endif
	filters_on = enabled;
	if (test && *test && parse_test_hook(test))
		return -EINVAL;
	if (!filters_on)
		return 0;
	if (warm_up_threads())
		return -EAGAIN;
	/*
	 * malloc sizes its arena limit on first need from /sys/devices/system/cpu/online
	 * (openat), in whichever thread makes the first extra arena: fix it now, at glibc's
	 * own default of 8 per CPU.
	 */
	mallopt(M_ARENA_MAX, 8 * get_nprocs());
	for (i = 0; i < MAX_SYSCALL_NR; i++)
		syscall_names[i] = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, i);
	/*
	 * Whoever got a filter to trap must not be able to swap the handler: rt_sigaction is on
	 * no list. SA_NODEFER is not set and every signal is masked during the report.
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sigsys_handler;
	sa.sa_flags = SA_SIGINFO;
	sigfillset(&sa.sa_mask);
	if (sigaction(SIGSYS, &sa, NULL) < 0) {
		log_error("sandbox: sigaction(SIGSYS): %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* The kernel reads these arguments as int: compare their low 32 bits, as it will see them. */
#define ARG_IS(n, v) SCMP_CMP((n), SCMP_CMP_MASKED_EQ, 0xffffffffu, (uint32_t)(v))

/*
 * Calls that may act outside the VM, allowed only with the arguments that keep them in it.
 * test_sandbox.py's test_filters_read_back_refuse_calls_aimed_outside_the_vm runs a live
 * VM's filters on calls aimed elsewhere; test_sandbox.c on each kind's own calls.
 */
static int add_checked_rules(scmp_filter_ctx ctx, unsigned bit)
{
	unsigned i;
	int r;

	/* write on the kind's own fds: the log (2) and its grants; the main thread's writev
	 * (none of plugvm's own, glibc's fatal messages) on the same fds */
	r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1, ARG_IS(0, STDERR_FILENO));
	if (!r && (bit & M))
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(writev), 1,
				     ARG_IS(0, STDERR_FILENO));
	for (i = 0; !r && i < nr_write_grants; i++) {
		if (!(write_grants[i].kinds & bit))
			continue;
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
				     ARG_IS(0, write_grants[i].fd));
		if (!r && (bit & M))
			r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(writev), 1,
					     ARG_IS(0, write_grants[i].fd));
	}
	/* Signals only into this process (pthread_kill, raise and abort are tgkill(getpid(),
	 * tid, sig)): the kicks of the main thread and of a vCPU that direct-starts another.
	 * plugvm never forks, so the pid read here stays its pid. */
	if (!r && (bit & (M | V)))
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1, ARG_IS(0, getpid()));
	/* <cputune>: each vCPU thread sets its own affinity and policy (pid 0, rt_tune_vcpu())
	 * at its start, a hot-added one still under the main thread's filter (the union). */
	if (!r && (bit & V))
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sched_setaffinity), 1,
				     ARG_IS(0, 0));
	if (!r && (bit & V))
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sched_setscheduler), 1,
				     ARG_IS(0, 0));
	/* The QMP socket's and pidfile's removal at exit: a name in a directory, never one. */
	for (i = 0; !r && (bit & M) && i < nr_unlink_dirs; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(unlinkat), 2,
				     ARG_IS(0, unlink_dir_fds[i]), SCMP_A2(SCMP_CMP_EQ, 0));
	return r;
}

static int add_rules(scmp_filter_ctx ctx, enum sandbox_kind kind)
{
	/* Filters only narrow and a thread inherits its creator's: the main thread, which
	 * starts every other kind, allows the union of all lists. */
	unsigned bit = kind == SANDBOX_MAIN ? ALL : 1u << kind;
	size_t i;
	int r = 0;

	for (i = 0; !r && i < sizeof(plain_rules) / sizeof(plain_rules[0]); i++)
		if (plain_rules[i].kinds & bit)
			r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, plain_rules[i].nr, 0);
	if (!r)
		r = add_checked_rules(ctx, bit);
	/* The request is an unsigned int to the kernel: compare the low 32 bits. */
	for (i = 0; !r && i < sizeof(ioctl_rules) / sizeof(ioctl_rules[0]); i++)
		if (ioctl_rules[i].kinds & bit)
			r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ioctl), 1,
					     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu,
						     ioctl_rules[i].req & 0xffffffffu));
	/* Memory for malloc and thread stacks, never executable. */
	if (!r && (bit & (M | V | C)))
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mmap), 1,
				     SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (!r && (bit & (M | V | C)))
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(mprotect), 1,
				     SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0));
	if (!r && kind == SANDBOX_MAIN) {
		/* Threads only (never a process), and the calls a new thread makes to name
		 * itself and add its own filter. */
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
		if (!r)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
		if (!r)
			r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
					     SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
		if (!r)
			r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
					     SCMP_A0(SCMP_CMP_EQ, PR_SET_NO_NEW_PRIVS));
		if (!r)
			r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), 1,
					     SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER));
	}
	return r;
}

/* Once, at the first sandbox_enter(), which runs while the process has one thread. */
static void compile_all(void)
{
	int i;

	sealed = true;
	for (i = 0; i < SANDBOX_NR_KINDS; i++)
		if (compile_filter((enum sandbox_kind)i)) {
			compile_result = -EINVAL;
			return;
		}
}

int sandbox_allow_write(enum sandbox_kind kind, int fd)
{
	unsigned i;

	if (sealed || fd < 0 || (unsigned)kind >= SANDBOX_NR_KINDS) {
		log_error("sandbox: cannot let the %s thread write to fd %d%s",
			  sandbox_kind_name(kind), fd, sealed ? ": the filters are compiled" : "");
		return sealed ? -EBUSY : -EINVAL;
	}
	for (i = 0; i < nr_write_grants; i++)
		if (write_grants[i].fd == fd) {
			write_grants[i].kinds |= 1u << kind;
			return 0;
		}
	if (nr_write_grants == MAX_WRITE_GRANTS) {
		log_error("sandbox: more than %d fds to write to", MAX_WRITE_GRANTS);
		return -ENOSPC;
	}
	write_grants[nr_write_grants].fd = fd;
	write_grants[nr_write_grants++].kinds = 1u << kind;
	return 0;
}

int sandbox_allow_unlinkat(int dir_fd)
{
	if (sealed || dir_fd < 0 || nr_unlink_dirs == MAX_UNLINK_DIRS) {
		log_error("sandbox: cannot allow unlinkat in fd %d%s", dir_fd,
			  sealed ? ": the filters are compiled" : "");
		return sealed ? -EBUSY : -EINVAL;
	}
	unlink_dir_fds[nr_unlink_dirs++] = dir_fd;
	return 0;
}

/* The test hook's hijacked calls: each would reach outside the VM, and is harmless if a
 * filter lets it through (signal 0, an empty CPU mask, an invalid policy, a missing file). */
enum test_action {
	TEST_GETPPID,
	TEST_TGKILL_OTHER,
	TEST_KILL_OTHER,
	TEST_SETAFFINITY_OTHER,
	TEST_SETSCHEDULER_OTHER,
	TEST_UNLINK,
	TEST_UNLINKAT,
	TEST_OPEN,
	TEST_WRITE, /* write=FD */
	TEST_NR_ACTIONS,
};

static const char *const action_names[TEST_NR_ACTIONS] = {
	[TEST_GETPPID] = "getppid",
	[TEST_TGKILL_OTHER] = "tgkill-other",
	[TEST_KILL_OTHER] = "kill-other",
	[TEST_SETAFFINITY_OTHER] = "setaffinity-other",
	[TEST_SETSCHEDULER_OTHER] = "setscheduler-other",
	[TEST_UNLINK] = "unlink",
	[TEST_UNLINKAT] = "unlinkat",
	[TEST_OPEN] = "open",
	[TEST_WRITE] = "write=",
};

#define TEST_PATH "/nonexistent/plugvm-sandbox-test"

static long hijacked_call(void)
{
	static const char msg[] = "plugvm: PLUGVM_SANDBOX_TEST wrote this\n";
	struct sched_param param = { 0 };
	cpu_set_t none;

	CPU_ZERO(&none);
	switch (test_action) {
	case TEST_TGKILL_OTHER:
		return syscall(SYS_tgkill, 1, 1, 0);
	case TEST_KILL_OTHER:
		return syscall(SYS_kill, 1, 0);
	case TEST_SETAFFINITY_OTHER:
		return syscall(SYS_sched_setaffinity, 1, sizeof(none), &none);
	case TEST_SETSCHEDULER_OTHER:
		return syscall(SYS_sched_setscheduler, 1, -1, &param);
	case TEST_UNLINK:
		return syscall(SYS_unlink, TEST_PATH);
	case TEST_UNLINKAT:
		return syscall(SYS_unlinkat, AT_FDCWD, TEST_PATH, 0);
	case TEST_OPEN:
		return syscall(SYS_openat, AT_FDCWD, "/", O_RDONLY | O_CLOEXEC);
	case TEST_WRITE:
		return syscall(SYS_write, test_fd, msg, sizeof(msg) - 1);
	default:
		return syscall(SYS_getppid);
	}
}

/* "KIND" or "KIND:ACTION" into test_kind, test_action and test_fd. 0 or -EINVAL (logged). */
static int parse_test_hook(const char *test)
{
	const char *colon = strchr(test, ':');
	size_t len = colon ? (size_t)(colon - test) : strlen(test);
	int i;

	for (i = 0; i < SANDBOX_NR_KINDS; i++)
		if (strlen(kind_names[i]) == len && !strncmp(test, kind_names[i], len))
			test_kind = i;
	if (test_kind < 0) {
		log_error("PLUGVM_SANDBOX_TEST: '%.*s' is not a thread kind (main, vcpu, console, "
			  "chaos-irq)",
			  (int)len, test);
		return -EINVAL;
	}
	test_action = colon ? -1 : TEST_GETPPID;
	for (i = 0; colon && i < TEST_WRITE; i++)
		if (!strcmp(colon + 1, action_names[i]))
			test_action = i;
	if (colon && !strncmp(colon + 1, "write=", 6)) {
		char *end;
		long fd = strtol(colon + 7, &end, 10);

		if (colon[7] && !*end && fd >= 0 && fd <= INT32_MAX) {
			test_action = TEST_WRITE;
			test_fd = (int)fd;
		}
	}
	if (test_action < 0) {
		log_error("PLUGVM_SANDBOX_TEST: '%s' is not an action (getppid, tgkill-other, "
			  "kill-other, setaffinity-other, setscheduler-other, unlink, unlinkat, "
			  "open, write=FD)",
			  colon + 1);
		test_kind = -1;
		return -EINVAL;
	}
	return 0;
}

int sandbox_enter(enum sandbox_kind kind)
{
	sigset_t sys;
	int r;

	thread_kind = sandbox_kind_name(kind);
	if (filters_on) {
		pthread_once(&compile_once, compile_all);
		if (compile_result)
			return compile_result;
		/* What seccomp_load() does with libseccomp's defaults: no new privileges, no flags. */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &compiled[kind]) < 0) {
			r = -errno;
			log_error("sandbox: %s thread: cannot install its seccomp filter: %s",
				  thread_kind, strerror(-r));
			return r;
		}
		/* A blocked SIGSYS would make the kernel kill us without the report. */
		sigemptyset(&sys);
		sigaddset(&sys, SIGSYS);
		pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
	}
	if (test_kind == (int)kind) {
		char fd[12] = "";
		long ret;

		if (test_action == TEST_WRITE)
			snprintf(fd, sizeof(fd), "%d", test_fd);
		log_error(
		    "sandbox: PLUGVM_SANDBOX_TEST=%s:%s%s: a forbidden system call on purpose",
		    thread_kind, action_names[test_action], fd);
		ret = hijacked_call();
		log_error("sandbox: PLUGVM_SANDBOX_TEST=%s:%s%s: not refused (returned %ld)",
			  thread_kind, action_names[test_action], fd, ret);
	}
	return 0;
}

struct start_ctx {
	enum sandbox_kind kind;
	void *(*fn)(void *);
	void *arg;
	sem_t entered;
	int result;
};

static void *start_in_sandbox(void *p)
{
	struct start_ctx *ctx = p;
	void *(*fn)(void *) = ctx->fn;
	void *arg = ctx->arg;
	sigset_t sys;
	int r;

	/* A forbidden call before the thread's own filter is in must be reported too. */
	sigemptyset(&sys);
	sigaddset(&sys, SIGSYS);
	pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
	prctl(PR_SET_NAME, sandbox_kind_name(ctx->kind));
	r = sandbox_enter(ctx->kind);

	ctx->result = r;
	sem_post(&ctx->entered); /* ctx is gone after this */
	return r ? NULL : fn(arg);
}

int sandbox_start_thread(pthread_t *thread, enum sandbox_kind kind, void *(*fn)(void *), void *arg)
{
	struct start_ctx ctx = { .kind = kind, .fn = fn, .arg = arg };
	int err;

	sem_init(&ctx.entered, 0, 0);
	err = pthread_create(thread, NULL, start_in_sandbox, &ctx);
	if (err) {
		log_error("sandbox: cannot start the %s thread: %s", sandbox_kind_name(kind),
			  strerror(err));
		sem_destroy(&ctx.entered);
		return -err;
	}
	while (sem_wait(&ctx.entered) < 0 && errno == EINTR)
		;
	sem_destroy(&ctx.entered);
	if (ctx.result) {
		pthread_join(*thread, NULL);
		return ctx.result;
	}
	return 0;
}
