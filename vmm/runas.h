/* SPDX-License-Identifier: MIT */
/* --runas: drop root for a named user once the VM's privileged setup is done. */
#ifndef PLUGVM_VMM_RUNAS_H
#define PLUGVM_VMM_RUNAS_H

/*
 * Switch the whole process to `user`'s uid, primary gid and supplementary groups, and check
 * that root cannot be regained. Main thread, while it is the only thread, after /dev/kvm
 * and the QMP socket are open. Returns 0, -ENOENT (no such user) or -errno (logged, naming
 * the user).
 */
int runas_user(const char *user);

#endif
