/* SPDX-License-Identifier: MIT */
/* --runas: drop root for a named user once the VM's privileged setup is done. */
#ifndef PLUGVM_VMM_RUNAS_H
#define PLUGVM_VMM_RUNAS_H

#include <sys/types.h>

/*
 * Look `user` up (passwd and group files) and remember its uid, gid and supplementary
 * groups for runas_user(). Before a jail hides /etc. Returns 0, -ENOENT (no such user),
 * -ENOMEM, -E2BIG or -errno (logged, naming the user).
 */
int runas_prepare(const char *user);

/* The uid runas_prepare() found (0 before it). */
uid_t runas_uid(void);

/*
 * Switch the whole process to `user`'s uid, primary gid and supplementary groups (looked up
 * now unless runas_prepare() did), and check that root cannot be regained. Main thread,
 * while it is the only thread, after /dev/kvm and the QMP socket are open. Returns 0,
 * -ENOENT (no such user) or -errno (logged, naming the user).
 */
int runas_user(const char *user);

#endif
