/* SPDX-License-Identifier: MIT */
/*
 * --jail DIR: the standalone VMM in new PID, mount, IPC, UTS and network namespaces, with
 * DIR as its root, no capability, a bounded descriptor table and no way to start a process.
 * docs/security.md ("The jail"); tests/unit/test_jail.c, tests/integration/test_jail.py.
 */
#ifndef PLUGVM_VMM_JAIL_H
#define PLUGVM_VMM_JAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

struct vm_config;

/* The socket's name in DIR when --jail is given without --qmp. */
#define JAIL_QMP_NAME "plugvm.qmp"

/*
 * Descriptors the VMM opens after the jail is entered, besides one per client and two per
 * vCPU; jail_nofile_limit() adds them up. Each is what the named code opens.
 */
#define JAIL_FDS_QMP_SERVER 4 /* qmp_server_listen(): epoll, eventfd, socket, directory */
#define JAIL_FDS_LOOP	    1 /* machine.c event_loop(): its epoll */
#define JAIL_FDS_TRANSIENT  2 /* the stale-socket probe at listen; a query-stats VM stats fd */
#define JAIL_FDS_PER_VCPU   2 /* vcpu.c: the KVM_CREATE_VCPU fd and its KVM_GET_STATS_FD */

/*
 * Whether a directory may be a jail root: `st` is its fstat(), `nr_entries` its entries
 * besides . and .., `owner_ok` the uid the --runas user has (or 0 without --runas). Pure.
 * Returns 0, or -EINVAL with a one-line reason in err (not a directory, owned by another
 * user, writable by group or others, not empty).
 */
int jail_check_dir(const struct stat *st, unsigned nr_entries, uid_t runas_uid, char *err,
		   size_t errlen);

/*
 * RLIMIT_NOFILE for a VMM whose highest open descriptor is `highest_fd` with `nr_open` open,
 * that may yet create every vCPU up to `max_cpus` and serve the most QMP clients: live ones
 * (QMP_MAX_CLIENTS), as many evicted ones still closing in the same pass, and one refused.
 * Descriptors take the lowest free number, so the highest ever used is below
 * max(highest_fd + 1, nr_open + what may still be opened). Pure.
 */
unsigned long jail_nofile_limit(int highest_fd, unsigned nr_open, unsigned max_cpus);

/*
 * With --jail, before anything of the VM exists: check DIR (a bad one: status 2), give the
 * QMP socket its default DIR/plugvm.qmp, then enter a new PID namespace: fork a child that
 * is its pid 1 and goes on to build and run the VM, while this process only waits, passes
 * SIGTERM, SIGINT, SIGHUP and SIGQUIT on, removes the socket the child may have left (as
 * --runas it may lack the right) and takes the child's status. Main thread, the only one.
 * Returns 0 in the child (or without a PID namespace, logged: the caller goes on), 1 in the
 * parent when the child ended (*status its exit status, 128+N for signal N), or -1 with
 * *status an exit code (logged).
 */
int jail_fork(struct vm_config *cfg, int *status);

/*
 * The rest of the jail, once the VM is built and before any thread starts (unshare of the
 * mount namespace needs an fs_struct no other thread shares): new mount, IPC, UTS and network
 * namespaces where the host allows (each refused one logged), every mount private, DIR bound
 * onto itself and pivoted into, the old root detached; rlimits (descriptors bounded, no core
 * file); the capability bounding set emptied, no ambient capabilities, no new privileges.
 * --runas USER is looked up here, while /etc is still reachable. No directory descriptor may
 * stay open: one would lead out of the new root. Returns 0 or -errno (logged).
 */
int jail_enter(const struct vm_config *cfg);

/*
 * After the QMP socket is bound and --runas applied: every capability dropped and read
 * back, and a filter that refuses new processes and execve to every thread (EPERM; kept
 * with --sandbox off). With PLUGVM_JAIL_TEST=probe the calling thread then tries what a
 * hijacked one would and reports each result on stderr ("jail probe: WHAT: refused (...)",
 * or "allowed"). Returns 0 or -errno (logged).
 */
int jail_lock(const struct vm_config *cfg);

/* The QMP socket's path inside the jail ("/NAME") for its host path DIR/NAME. */
static inline const char *jail_inner_path(const char *host_path)
{
	const char *slash = strrchr(host_path, '/');

	return slash ? slash : host_path;
}

#endif
