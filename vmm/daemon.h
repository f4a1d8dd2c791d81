/* SPDX-License-Identifier: MIT */
/*
 * QEMU's -daemonize and -pidfile for plugvm-qemu (libvirt's probe, spec §9.2): the command
 * returns 0 only once the QMP socket listens and the pidfile names the process that serves
 * it, and that process holds neither the caller's stdio nor its session. Tests:
 * test_qemu_cli.py: test_probe_daemonizes_once_qmp_listens.
 */
#ifndef PLUGVM_VMM_DAEMON_H
#define PLUGVM_VMM_DAEMON_H

#include "config/config.h"

/*
 * With cfg->daemonize, fork while the process has one thread: returns 1 in the parent with
 * *parent_status the status to exit with (0 once the child called daemon_ready(), else the
 * child's own status), 0 in the child (now a session leader). Without: 0 at once. -errno on
 * failure (logged).
 */
int daemon_fork(const struct vm_config *cfg, int *parent_status);

/*
 * QMP listens: write cfg->pidfile (our pid, mode 0644), and under -daemonize point stdin,
 * stdout and stderr at /dev/null, move to / and release the parent. Main thread, before the sandbox.
 * 0 or -errno (logged; the parent then exits with the child's status).
 */
int daemon_ready(const struct vm_config *cfg);

/*
 * The directory of the pidfile daemon_ready() wrote, for sandbox_allow_unlinkat(), or -1 if
 * none was written.
 */
int daemon_pidfile_dir_fd(void);

/* Remove the pidfile if daemon_ready() wrote it (a name in its directory, as the sandbox allows). */
void daemon_exit(void);

#endif
