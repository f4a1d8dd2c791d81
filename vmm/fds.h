/* SPDX-License-Identifier: MIT */
/*
 * Descriptors plugvm inherits from whoever started it. The sandboxed VMM holds only the
 * descriptors it opened itself, stdio, and those its command line names.
 */
#ifndef PLUGVM_VMM_FDS_H
#define PLUGVM_VMM_FDS_H

/* The most descriptors a command line may name to be kept open. */
#define FDS_MAX_KEEP 64

/*
 * Close every descriptor from 3 up except the nr_keep ones in keep[] (any order, duplicates
 * allowed, negative entries ignored; nr_keep <= FDS_MAX_KEEP). Call it first in main(),
 * while the process is single-threaded and before anything opens a descriptor: libvirt
 * starts QEMU with the descriptors it means the VMM to use named on the command line
 * (`fd=N`, `-add-fd fd=N`), and the rest must not leak into the guest's reach (tests:
 * test_fds.c, test_boot.py: test_inherited_descriptors_are_closed_at_start). Returns 0,
 * or -EINVAL (nr_keep too large), or the -errno of a failed close_range().
 */
int fds_close_inherited(const int *keep, unsigned nr_keep);

#endif
