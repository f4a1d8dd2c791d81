/* SPDX-License-Identifier: MIT */
/*
 * Least privilege once the VM is built (with runas.h's --runas): every thread runs under the seccomp allow-list of its kind (libseccomp). A system call outside
 * the list raises SIGSYS, whose handler prints which thread kind made which call and ends
 * the process with PLUGVM_EXIT_INTERNAL. Filters stack: a thread the main thread creates
 * after entering its sandbox (a hot-added vCPU, a helper) inherits the main thread's filter
 * and then adds its own: the main thread's list is the union of every kind's, each other
 * thread's effective list is its own. docs/security.md.
 */
#ifndef PLUGVM_VMM_SANDBOX_H
#define PLUGVM_VMM_SANDBOX_H

#include <pthread.h>
#include <stdbool.h>

enum sandbox_kind {
	SANDBOX_MAIN, /* the event loop: QMP, the agent, hot-add/remove, teardown */
	SANDBOX_VCPU, /* a vCPU thread: KVM_RUN and the device models */
	SANDBOX_CONSOLE, /* the console writer: guest output to stdout */
	SANDBOX_CHAOS_IRQ, /* --chaos's interrupt injector: KVM_IRQ_LINE */
	SANDBOX_NR_KINDS,
};

/*
 * Prepare: remember whether filters are on (`enabled`; off prints a loud warning), glibc's
 * lazy setup, the syscall names the SIGSYS handler prints, the handler itself, and the test
 * hook PLUGVM_SANDBOX_TEST=KIND[:ACTION] (see sandbox_enter()). Main thread, before any
 * other thread exists. Returns 0 or -errno (logged).
 */
int sandbox_init(bool enabled);

/*
 * Let threads of `kind` (and the main thread, whose filter is the union) write(2) to fd,
 * besides stderr which every kind may write to. During setup, before the first
 * sandbox_enter() compiles the filters: the fd numbers are in the BPF. Returns 0, -EBUSY
 * (the filters are compiled), -EINVAL or -ENOSPC (logged).
 */
int sandbox_allow_write(enum sandbox_kind kind, int fd);

/*
 * Let the main thread unlinkat(dir_fd, NAME, 0): a name in that directory, never a
 * directory itself (the QMP socket and the -pidfile at exit; two directories at most). Same
 * timing and returns as sandbox_allow_write().
 */
int sandbox_allow_unlinkat(int dir_fd);

/*
 * Install kind's filter on the calling thread (nothing when filters are off) and name the
 * thread for the SIGSYS report; SIGSYS is unblocked in the thread. Call it where the
 * thread's setup ends. The first call compiles every kind's filter with the grants made so
 * far: it must run while the process has one thread (the main thread's). When
 * PLUGVM_SANDBOX_TEST names `kind`, the thread then makes one forbidden call on purpose, what
 * a hijacked thread would: ACTION getppid (the default), tgkill-other / kill-other (signal 0
 * to pid 1), setaffinity-other / setscheduler-other (pid 1), unlink / unlinkat (a path),
 * open (openat), write=FD; if it returns, a line says "not refused". The tests prove the
 * filters that way. Returns 0 or -errno (logged): the caller must not run unconfined.
 */
int sandbox_enter(enum sandbox_kind kind);

/*
 * pthread_create() for a helper thread that runs fn(arg) inside kind's sandbox: returns
 * once the new thread has entered it, 0 with *thread set, or -errno (logged; no thread is
 * left running). The caller sets the new thread's signal mask as usual.
 */
int sandbox_start_thread(pthread_t *thread, enum sandbox_kind kind, void *(*fn)(void *), void *arg);

/* The kind's name as the SIGSYS report and the docs spell it ("vcpu", ...). */
const char *sandbox_kind_name(enum sandbox_kind kind);

#endif
