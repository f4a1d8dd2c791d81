/* SPDX-License-Identifier: MIT */
/*
 * Descriptors plugvm inherits from whoever started it. The sandboxed VMM holds only the
 * descriptors it opened itself, stdio, and those its command line names.
 */
#ifndef PLUGVM_VMM_FDS_H
#define PLUGVM_VMM_FDS_H

#include <stdbool.h>

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

/* How long a failed start waits for its manager's first connection (see below). */
#define FDS_MANAGER_WAIT_MS 10000

/*
 * The listening socket a manager passed to be its monitor: the first `fd=N` among argv's
 * words (comma-separated options included, as QEMU's `-chardev socket,...,fd=N`, and plugvm's
 * `--qmp fd=N` or `--qmp=fd=N`) that is an open, listening AF_UNIX stream socket. -1 if there is none.
 * Reads only argv and the descriptors' socket options, so it holds on a half-parsed command
 * line (test_fds.c: test_finds_the_managers_listener).
 */
int fds_manager_listener(int argc, char **argv);

/*
 * A start that failed before the VM served its monitor: wait up to timeout_ms for the
 * manager's first connection on `listener`, then close it, so that the manager learns of the
 * failure as its monitor's end of file (and reads the reason from the emulator's log)
 * instead of a refused connection. libvirt 9.0 connects once to the socket it passed; a
 * refusal is reported with the reason only if the exited process has already been reaped,
 * and an orphan's reaping by init is asynchronous: without this wait virsh often says just
 * "failed to connect to monitor socket: Connection refused" (test_fds.c:
 * test_failed_start_hands_the_manager_an_eof; test_libvirt_plugvm.py:
 * test_what_plugvm_cannot_run_is_refused_by_name). Returns whether a manager connected.
 */
bool fds_hand_off_failure(int listener, int timeout_ms);

#endif
