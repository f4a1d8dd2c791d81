// SPDX-License-Identifier: MIT
/*
 * --jail DIR (jail.h): a PID namespace entered by forking before the VM exists (a KVM VM fd
 * works only in the mm that made it), the other namespaces and the new root entered while
 * the built VM's process is still single-threaded, then capabilities, rlimits and a
 * no-new-process filter. docs/security.md, "The jail".
 */
#include "jail.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config/config.h"
#include "control/qmp.h"
#include "exitcode.h"
#include "log.h"
#include "runas.h"

int jail_check_dir(const struct stat *st, unsigned nr_entries, uid_t runas_uid, char *err,
		   size_t errlen)
{
	const char *why = NULL;

	if (!S_ISDIR(st->st_mode))
		why = "not a directory";
	else if (st->st_uid != 0 && st->st_uid != runas_uid)
		why = "owned by a user who is neither root nor the --runas user";
	else if (st->st_mode & (S_IWGRP | S_IWOTH))
		why = "writable by group or others (another user could put files in the jail)";
	else if (nr_entries)
		why = "not empty (the jail's root must hold nothing but what plugvm puts there)";
	if (!why)
		return 0;
	snprintf(err, errlen, "%s", why);
	return -EINVAL;
}

unsigned long jail_nofile_limit(int highest_fd, unsigned nr_open, unsigned max_cpus)
{
	unsigned long later = 2ul * QMP_MAX_CLIENTS + 1 + JAIL_FDS_QMP_SERVER + JAIL_FDS_LOOP +
			      JAIL_FDS_TRANSIENT + (unsigned long)max_cpus * JAIL_FDS_PER_VCPU;
	unsigned long above = highest_fd < 0 ? 0 : (unsigned long)highest_fd + 1;

	return above > nr_open + later ? above : nr_open + later;
}

/* DIR, opened by jail_fork() and checked; closed by jail_enter() before the pivot. */
static int dir_fd = -1;
static struct stat dir_st;

/* Open DIR and check it (jail_check_dir()). 0, or -EINVAL (logged). */
static int open_dir(const struct vm_config *cfg)
{
	char err[160];
	unsigned n = 0;
	struct dirent *e;
	DIR *d;
	int fd;

	if (cfg->runas && runas_prepare(cfg->runas))
		return -EINVAL;
	fd = open(cfg->jail_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &dir_st) < 0) {
		log_error("--jail: %s: %s", cfg->jail_dir,
			  errno == ENOTDIR || errno == ELOOP ? "not a directory" : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	d = fdopendir(dup(fd));
	while (d && (e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (!d || jail_check_dir(&dir_st, n, cfg->runas ? runas_uid() : 0, err, sizeof(err))) {
		log_error("--jail: %s: %s", cfg->jail_dir, d ? err : strerror(errno));
		if (d)
			closedir(d);
		close(fd);
		return -EINVAL;
	}
	closedir(d);
	dir_fd = fd;
	return 0;
}

/*
 * The parent's life: pass the ending signals on to the child (pid 1 of its namespace, which
 * takes them through its signalfd), wait for it, clean up after it. Returns its status.
 */
static int wait_child(const struct vm_config *cfg, pid_t child, const sigset_t *mask)
{
	struct stat st;
	int ws = 0;

	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(mask, &si);

		if (sig == SIGCHLD) {
			pid_t r = waitpid(child, &ws, WNOHANG);

			if (r == child)
				break;
			if (r < 0 && errno != EINTR) {
				log_error("--jail: waiting for the VMM: %s", strerror(errno));
				return PLUGVM_EXIT_INTERNAL;
			}
		} else if (sig > 0) {
			kill(child, sig);
		}
	}
	/* Inside, as --runas, the VMM may not remove its socket: the next start needs DIR empty. */
	if (cfg->qmp_path && cfg->qmp_fd < 0 && !lstat(cfg->qmp_path, &st) && S_ISSOCK(st.st_mode))
		unlink(cfg->qmp_path);
	if (WIFSIGNALED(ws))
		return PLUGVM_EXIT_SIGNAL_BASE + WTERMSIG(ws);
	return WEXITSTATUS(ws);
}

int jail_fork(struct vm_config *cfg, int *status)
{
	sigset_t mask, old;
	pid_t child;

	*status = PLUGVM_EXIT_USAGE;
	if (open_dir(cfg))
		return -1;
	if (!cfg->qmp_disabled && cfg->qmp_fd < 0 && !cfg->qmp_path) {
		*status = PLUGVM_EXIT_SETUP;
		if (asprintf(&cfg->qmp_path, "%s/%s", cfg->jail_dir, JAIL_QMP_NAME) < 0) {
			cfg->qmp_path = NULL;
			log_error("out of memory");
			return -1;
		}
		if (log_get_level() >= LOG_WARN)
			fprintf(stderr, "plugvm: QMP socket: %s\n", cfg->qmp_path);
	}
	if (unshare(CLONE_NEWPID) < 0) {
		log_warn("--jail: no PID namespace (unshare: %s): host processes stay visible",
			 strerror(errno));
		return 0;
	}
	/*
	 * Blocked before the fork and in the child still: a pid 1 drops a signal it has no
	 * handler for, but a blocked one waits for machine_run()'s signalfd.
	 */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &old);
	child = fork();
	if (child < 0) {
		*status = PLUGVM_EXIT_SETUP;
		log_error("--jail: fork: %s", strerror(errno));
		return -1;
	}
	if (child == 0) {
		sigaddset(&old, SIGTERM);
		sigaddset(&old, SIGINT);
		sigaddset(&old, SIGHUP);
		sigaddset(&old, SIGQUIT);
		sigprocmask(SIG_SETMASK, &old, NULL);
		/* The VM does not outlive a parent killed outright (re-armed after --runas). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		return 0;
	}
	close(dir_fd);
	dir_fd = -1;
	*status = wait_child(cfg, child, &mask);
	return 1;
}

/* unshare() one namespace; a refusal is logged and survived. */
static void unshare_one(int flag, const char *name, const char *loses)
{
	if (unshare(flag) < 0)
		log_warn("--jail: no %s namespace (unshare: %s): %s", name, strerror(errno), loses);
}

/*
 * The descriptors open now: how many, the highest, and whether one is a directory (which
 * would lead out of the new root: openat(fd, "..") walks the old tree). 0, or -errno.
 */
static int scan_fds(unsigned *nr, int *highest)
{
	struct dirent *e;
	DIR *d = opendir("/proc/self/fd");
	int ret = 0;

	*nr = 0;
	*highest = -1;
	if (!d) {
		log_error("--jail: /proc/self/fd: %s", strerror(errno));
		return -errno;
	}
	while ((e = readdir(d))) {
		struct stat st;
		int fd = atoi(e->d_name);

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		(*nr)++;
		if (fd > *highest)
			*highest = fd;
		if (fd != dir_fd && !fstat(fd, &st) && S_ISDIR(st.st_mode)) {
			log_error("--jail: descriptor %d is a directory: it would lead out of the "
				  "jail",
				  fd);
			ret = -EPERM;
		}
	}
	closedir(d);
	return ret;
}

/*
 * A thread joined a moment ago (sandbox_init()'s warm-up) still shares the fs_struct until
 * its exit passes exit_fs(), which comes after the join returns; once it is gone from
 * /proc/self/task it has. Bounded: a thread that really runs is an error. 0 or -EBUSY.
 */
static int wait_alone(void)
{
	for (int i = 0; i < 1000; i++) {
		DIR *d = opendir("/proc/self/task");
		unsigned n = 0;

		while (d && readdir(d))
			n++;
		if (d)
			closedir(d);
		if (n == 3) /* ".", ".." and this thread */
			return 0;
		usleep(1000);
	}
	log_error("--jail: another thread runs: a new mount namespace needs the VMM alone");
	return -EBUSY;
}

/* Bind DIR onto itself, pivot into it, detach the old root. 0 or -errno (logged). */
static int pivot(const struct vm_config *cfg)
{
	const char *what = "making every mount private";
	struct stat here;

	/* Nothing mounted or unmounted here propagates back to the host's namespace. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		goto fail;
	what = "binding DIR onto itself";
	if (mount(cfg->jail_dir, cfg->jail_dir, NULL, MS_BIND, NULL) < 0)
		goto fail;
	what = "mounting DIR nosuid, nodev, noexec";
	if (mount(NULL, cfg->jail_dir, NULL,
		  MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		goto fail;
	what = "entering DIR";
	if (chdir(cfg->jail_dir) < 0 || stat(".", &here) < 0)
		goto fail;
	/* The directory checked by jail_fork(), not one put in its place since. */
	if (here.st_dev != dir_st.st_dev || here.st_ino != dir_st.st_ino) {
		log_error("--jail: %s: changed since it was checked", cfg->jail_dir);
		return -EBUSY;
	}
	/* The old root stacks on the new one at "."; detached, the jail is all that is left. */
	what = "pivot_root";
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		goto fail;
	what = "detaching the old root";
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		goto fail;
	return 0;
fail:
	log_error("--jail: %s: %s: %s", cfg->jail_dir, what, strerror(errno));
	return -errno;
}

/*
 * rlimits: descriptors bounded (jail_nofile_limit()), no core file, what <cputune> and
 * <memoryBacking> need without capabilities. 0 or -errno (logged).
 */
static int set_limits(const struct vm_config *cfg, unsigned nr_open, int highest)
{
	unsigned long nofile = jail_nofile_limit(highest, nr_open, cfg->max_cpus);
	struct rlimit cur, lim = { 0, 0 };

	/* A core file would hold guest memory. */
	if (setrlimit(RLIMIT_CORE, &lim) < 0)
		goto fail;
	if (getrlimit(RLIMIT_NOFILE, &cur) < 0)
		goto fail;
	lim.rlim_cur = lim.rlim_max = nofile;
	if (cur.rlim_max != RLIM_INFINITY && cur.rlim_max < nofile)
		log_warn("--jail: RLIMIT_NOFILE %lu is below the %lu this VM may need",
			 (unsigned long)cur.rlim_max, nofile);
	else if (setrlimit(RLIMIT_NOFILE, &lim) < 0)
		goto fail;
	/*
	 * What <vcpusched> and <memoryBacking><locked/> had from CAP_SYS_NICE and CAP_IPC_LOCK,
	 * the limits give an unprivileged process: real-time priorities up to the highest the
	 * document asks, and locking every future mapping (test_jail.py, the rt example).
	 */
	lim.rlim_cur = lim.rlim_max = 0;
	for (unsigned i = 0; i < cfg->rt.nr_vcpus; i++)
		if (cfg->rt.vcpus[i].policy != SCHED_OTHER &&
		    (rlim_t)cfg->rt.vcpus[i].priority > lim.rlim_max)
			lim.rlim_cur = lim.rlim_max = (rlim_t)cfg->rt.vcpus[i].priority;
	/* Raising a hard limit takes CAP_SYS_RESOURCE: a host without it keeps its own. */
	if (lim.rlim_max && setrlimit(RLIMIT_RTPRIO, &lim) < 0)
		log_warn("--jail: RLIMIT_RTPRIO %lu for <vcpusched>: %s",
			 (unsigned long)lim.rlim_max, strerror(errno));
	lim.rlim_cur = lim.rlim_max = RLIM_INFINITY;
	/*
	 * Without it, MCL_FUTURE would fail every later mapping (a malloc arena, a hot-added
	 * vCPU) past the host's limit once CAP_IPC_LOCK is gone: what is mapped now, guest RAM
	 * included, stays locked, later mappings are not.
	 */
	if (cfg->rt.mlock && setrlimit(RLIMIT_MEMLOCK, &lim) < 0) {
		log_warn("--jail: RLIMIT_MEMLOCK unlimited for <locked/>: %s: guest RAM stays "
			 "locked, later mappings are not",
			 strerror(errno));
		if (mlockall(MCL_CURRENT) < 0)
			log_warn("--jail: mlockall: %s", strerror(errno));
	}
	log_debug("--jail: RLIMIT_NOFILE %lu (%u open, highest %d, max_cpus %u)", nofile, nr_open,
		  highest, cfg->max_cpus);
	return 0;
fail:
	log_error("--jail: setrlimit: %s", strerror(errno));
	return -errno;
}

int jail_enter(const struct vm_config *cfg)
{
	unsigned nr_open;
	int highest, cap, ret;

	if (dir_fd < 0 && open_dir(cfg)) /* no PID namespace: jail_fork() went on unforked */
		return -EINVAL;
	ret = scan_fds(&nr_open, &highest);
	close(dir_fd);
	dir_fd = -1;
	if (ret)
		return ret;
	ret = wait_alone();
	if (ret)
		return ret;
	if (unshare(CLONE_NEWNS) < 0) {
		log_error("--jail: no mount namespace (unshare: %s): cannot change the root",
			  strerror(errno));
		return -errno;
	}
	unshare_one(CLONE_NEWIPC, "IPC", "System V IPC and POSIX queues stay the host's");
	unshare_one(CLONE_NEWUTS, "UTS", "the host name stays the host's");
	unshare_one(CLONE_NEWNET, "network", "the host's interfaces stay reachable");
	ret = pivot(cfg);
	if (ret)
		return ret;
	if (sethostname("plugvm", 6) < 0)
		log_debug("--jail: sethostname: %s", strerror(errno));
	ret = set_limits(cfg, nr_open - 1, highest); /* less DIR's descriptor, closed above */
	if (ret)
		return ret;
	/* The bounding set now, while CAP_SETPCAP is held; the rest after --runas. */
	for (cap = 0; prctl(PR_CAPBSET_READ, cap) >= 0; cap++)
		if (prctl(PR_CAPBSET_DROP, cap) < 0) {
			log_error("--jail: dropping capability %d from the bounding set: %s", cap,
				  strerror(errno));
			return -errno;
		}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		log_error("--jail: prctl: %s", strerror(errno));
		return -errno;
	}
	log_info("jail: %s is the root; namespaces and limits set", cfg->jail_dir);
	return 0;
}

/* Every capability set empty, and read back so. 0 or -errno (logged). */
static int drop_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };
	int cap;

	if (syscall(SYS_capset, &h, d) < 0 || syscall(SYS_capget, &h, d) < 0) {
		log_error("--jail: capset: %s", strerror(errno));
		return -errno;
	}
	for (cap = 0; cap < 2; cap++)
		if (d[cap].effective || d[cap].permitted || d[cap].inheritable) {
			log_error("--jail: capabilities left after capset");
			return -EPERM;
		}
	for (cap = 0; prctl(PR_CAPBSET_READ, cap) >= 0; cap++)
		if (prctl(PR_CAPBSET_READ, cap) == 1) {
			log_error("--jail: capability %d left in the bounding set", cap);
			return -EPERM;
		}
	return 0;
}

/*
 * No process but this one: fork, vfork, clone without CLONE_THREAD and execve fail with
 * EPERM (clone3 with ENOSYS: its flags are out of a filter's reach, glibc then uses clone).
 * RLIMIT_NPROC cannot say this: it counts threads, each hot-add's vCPU thread included, over
 * all of the user's processes on the host, and root ignores it.
 */
static int forbid_processes(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int r = ctx ? 0 : -ENOMEM;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	/* LSan stops the world from a clone()d process; TSan runs its own. */
	log_warn("--jail: sanitizer build: new processes are not refused");
	seccomp_release(ctx);
	return r;
#else
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(fork), 0);
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(vfork), 0);
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(execve), 0);
	if (!r)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(execveat), 0);
	if (!r)
		r = seccomp_load(ctx);
	if (r)
		log_error("--jail: the no-new-process filter: %s", strerror(-r));
	seccomp_release(ctx);
	return r;
#endif
}

/* One line per attempt: "refused" with its errno, or "allowed" with what it got. */
static void report(const char *what, long r, int err, const char *got)
{
	if (r < 0)
		log_error("jail probe: %s: refused (%s)", what, strerror(err));
	else
		log_error("jail probe: %s: allowed%s%s", what, got ? ": " : "", got ? got : "");
}

static void probe_open(const char *path, int flags)
{
	char what[64];
	int fd = open(path, flags | O_CLOEXEC);

	snprintf(what, sizeof(what), "open %s", path);
	report(what, fd, errno, NULL);
	if (fd >= 0)
		close(fd);
}

/* Network interfaces: none, or only lo and down, is a refusal. */
static void probe_interfaces(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	char got[256] = "";
	size_t len = 0;
	bool foreign = false;

	if (!ifs) {
		report("network interfaces", -1, errno, NULL);
		return;
	}
	for (i = ifs; i->if_index; i++) {
		struct ifreq rq = { 0 };
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		bool up = false;

		snprintf(rq.ifr_name, sizeof(rq.ifr_name), "%s", i->if_name);
		if (s >= 0 && !ioctl(s, SIOCGIFFLAGS, &rq))
			up = rq.ifr_flags & IFF_UP;
		if (s >= 0)
			close(s);
		foreign |= up || strcmp(i->if_name, "lo");
		len += (size_t)snprintf(got + len, len < sizeof(got) ? sizeof(got) - len : 0,
					" %s(%s)", i->if_name, up ? "up" : "down");
		if (len >= sizeof(got))
			len = sizeof(got) - 1;
	}
	if_freenameindex(ifs);
	if (foreign)
		report("network interfaces", 0, 0, got);
	else
		log_error("jail probe: network interfaces: refused (none usable:%s)",
			  *got ? got : " none");
}

/* What a hijacked VMM thread would try first (PLUGVM_JAIL_TEST=probe; test_jail.py). */
static void probe(void)
{
	char got[32];
	DIR *d;
	pid_t p;

	probe_open("/etc/passwd", O_RDONLY);
	probe_open("/proc/1/environ", O_RDONLY);
	probe_open("/dev/kvm", O_RDWR);
	d = opendir("/proc");
	report("list /proc", d ? 0 : -1, errno, NULL);
	if (d)
		closedir(d);
	probe_interfaces();
	p = fork();
	if (p == 0)
		_exit(0);
	if (p > 0)
		waitpid(p, NULL, 0);
	report("fork", p, errno, NULL);
	{
		char *argv[] = { "sh", NULL }, *envp[] = { NULL };

		execve("/bin/sh", argv, envp);
		report("execve /bin/sh", -1, errno, NULL);
	}
	snprintf(got, sizeof(got), "pid %d", (int)getpid());
	log_error("jail probe: %s, uid %u", got, (unsigned)getuid());
}

int jail_lock(const struct vm_config *cfg)
{
	const char *test = getenv("PLUGVM_JAIL_TEST");
	int r;

	/* setuid() cleared it: a parent killed outright still takes the VM with it. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	r = drop_caps();
	if (!r)
		r = forbid_processes();
	if (r)
		return r;
	log_info("jail: no capability, no new process%s%s", cfg->runas ? ", user " : "",
		 cfg->runas ? cfg->runas : "");
	if (test && !strcmp(test, "probe"))
		probe();
	else if (test && *test)
		log_error("PLUGVM_JAIL_TEST: '%s' is not a test (probe)", test);
	return 0;
}
