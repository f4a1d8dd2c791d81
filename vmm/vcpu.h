/* SPDX-License-Identifier: MIT */
/*
 * vCPUs: one KVM vCPU fd and one thread each. KVM cannot destroy a single vCPU, so a vCPU
 * that is removed keeps its fd *parked* for the next add of the same APIC ID (cpus.c
 * decides when). The run loop only dispatches exits to the buses; everything else lives
 * in devices.
 */
#ifndef PLUGVM_VMM_VCPU_H
#define PLUGVM_VMM_VCPU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "x86/cpu.h"

struct vm;
struct kvm_run;
struct vcpu_snapshot;

/*
 * The gate every vCPU thread passes before each KVM_RUN (QEMU's pause_all_vcpus): while it
 * is closed (-S before `cont`, QMP `stop`) the threads wait at it, out of the guest.
 * cpus.c owns the one gate of a VM and decides when it closes and opens.
 */
struct vcpu_gate {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* the gate opened, a vCPU arrived at it or was told to stop */
	atomic_bool closed; /* written under lock; read without it as a hint, every exit */
};

/*
 * One vCPU's KVM fd and thread; cpus.c owns its life (which of these runs when, under its
 * lock). The direct start request is a mailbox between whoever asks (cpus.c, the caller
 * of vcpu_post_start()) and the vCPU's own thread, which applies it before its next
 * KVM_RUN.
 */
struct vcpu {
	struct vm *vm;
	int id; /* KVM vCPU id == APIC ID */
	int fd; /* -1: not created yet */
	/*
	 * KVM's binary statistics (kvm_stats.h), -1: none. Opened at creation: the ioctl
	 * takes the vCPU's mutex, which KVM_RUN holds while the vCPU runs or halts.
	 */
	int stats_fd;
	struct kvm_run *run;
	pthread_t thread;
	atomic_bool stop; /* leave KVM_RUN and end the thread */
	/* host thread id, for query-cpus-fast: 0 until a thread starts; read it with vcpu_tid() */
	_Atomic pid_t tid;
	bool hot_added; /* its thread started after boot (device_add): --chaos may delay it */
	struct vcpu_gate *gate; /* set once by its owner, before the thread starts */
	atomic_bool held; /* waiting at the closed gate, or its thread ended: not in the guest */
	struct vcpu_snapshot *reset; /* state at creation: a parked vCPU goes back to it */
	bool cpuid_set; /* KVM_SET_CPUID2 done: by its thread, before its first KVM_RUN */
	pthread_mutex_t start_lock;
	/* Guarded by start_lock (start_pending also read without it, as a hint): */
	atomic_bool start_pending;
	struct long_mode_start start;
	atomic_bool nmi_pending; /* QMP inject-nmi: its thread issues KVM_NMI before KVM_RUN */
};

/*
 * Create the KVM vCPU `id` (fd, kvm_run mapping; its thread sets its CPUID before its first
 * KVM_RUN, and a failure there stops the VM) in `v`, which has no fd, mapping nor statistics
 * fd yet (-1, NULL, -1) or is left from a setup that failed (see vcpu_ready()). If `boot` it
 * gets the PVH entry state; otherwise KVM leaves it waiting for INIT/SIPI. Main thread.
 * Returns 0 or -errno (logged).
 */
int vcpu_create(struct vcpu *v, struct vm *vm, int id, bool boot);

/*
 * The vCPU was created and set up. KVM cannot destroy one vCPU nor create its id twice, so a
 * vCPU whose setup failed after KVM_CREATE_VCPU keeps its fd: vcpu_create() on it again
 * finishes the setup.
 */
static inline bool vcpu_ready(const struct vcpu *v)
{
	return v->reset != NULL;
}

/*
 * Set the vCPU's CPUID now if it is not set yet (its thread does it otherwise, before its
 * first KVM_RUN). Main thread, or the vCPU's thread before that KVM_RUN. Returns 0 or -errno
 * (logged).
 */
int vcpu_set_cpuid(struct vcpu *v);

/*
 * A vCPU without a thread (or held at the closed gate) goes back to the state it was
 * created in (registers, LAPIC, FPU; the TSC deadline and kvmclock MSRs cleared), waiting
 * for INIT/SIPI like an AP at power-on. Returns 0 or -errno (logged).
 */
int vcpu_reset_for_sipi(struct vcpu *v);
/*
 * The vCPU back to its power-on state, then at the PVH entry like vCPU 0 at boot
 * (system_reset). Its thread waits at the closed gate or has none. Returns 0 or -errno
 * (logged).
 */
int vcpu_reset_for_boot(struct vcpu *v);

/*
 * Start the vCPU's thread, with no direct start pending. A `hot_added` vCPU's first
 * KVM_RUN may be delayed by --chaos; its tid is published before that. Does not wait
 * for the thread to run. Main thread. Returns 0 or -errno (logged).
 */
int vcpu_start_thread(struct vcpu *v, bool hot_added);

/*
 * The host thread id of the vCPU's thread, 0 if none was ever started. A thread just
 * started publishes it as it begins to run: wait for that (microseconds; at most 1 s,
 * then 0). Main thread.
 */
pid_t vcpu_tid(struct vcpu *v);

/*
 * Have the vCPU's thread jump to `r->entry` in 64-bit mode (plugvm_abi.h's direct start)
 * before its next KVM_RUN: recorded, and the thread kicked. The caller makes sure the
 * thread runs and is not joined meanwhile (cpus.c: under its lock, RUNNING).
 */
void vcpu_post_start(struct vcpu *v, const struct long_mode_start *r);
/*
 * Have the vCPU's thread inject an NMI (KVM_NMI, a vCPU ioctl: only its own thread may
 * issue it) before its next KVM_RUN: recorded, and the thread kicked out of KVM_RUN. A vCPU
 * waiting for INIT/SIPI (an AP not started, or a parked one) gets none: the NMI would be
 * taken at its first instruction, before the guest has an IDT. Several requests before the
 * thread looks are one NMI, as NMIs are on hardware. The caller makes sure the thread runs
 * and is not joined meanwhile (cpus.c: under its lock, RUNNING).
 */
void vcpu_post_nmi(struct vcpu *v);
/* Forget a direct start not applied yet (its thread is ending). */
void vcpu_drop_start(struct vcpu *v);

/*
 * Ask the vCPU's thread to end and kick it out of KVM_RUN; does not wait. The caller
 * makes sure the thread was started and is not joined yet.
 */
void vcpu_kick_stop(struct vcpu *v);
/* Wait for the thread vcpu_kick_stop() told to end. Main thread. */
void vcpu_join(struct vcpu *v);

/*
 * Print the vCPU's registers, the instruction bytes at RIP if `insn` is non-NULL, and a
 * frame-pointer backtrace to stderr: for crashes and the SIGQUIT post-mortem.
 */
void vcpu_dump(struct vcpu *v, const uint8_t *insn, unsigned insn_len);
/*
 * The guest crashed on this vCPU (`what` says how): an error line, vcpu_dump() with the
 * instruction bytes at RIP, and the VM's stop with PLUGVM_EXIT_GUEST_CRASH. vCPU thread.
 */
void vcpu_crash(struct vcpu *v, const char *what);
/* vcpu_crash() for KVM_EXIT_INTERNAL_ERROR, its suberror and data in `what`. vCPU thread. */
void vcpu_crash_internal(struct vcpu *v);
/*
 * vcpu_crash() for a triple fault (KVM_EXIT_SHUTDOWN), or, where KVM has already reset the
 * vCPU (AMD SVM), the crash said so, without reset-state registers passed off as the guest's
 * (test_errors.py: test_triple_fault_dumps_registers). vCPU thread.
 */
void vcpu_crash_shutdown(struct vcpu *v);

/* Close the fd and unmap kvm_run. The thread must have been joined (or never started). */
void vcpu_destroy(struct vcpu *v);

/* A gate, open. 0 or -errno. */
int vcpu_gate_init(struct vcpu_gate *g);
void vcpu_gate_destroy(struct vcpu_gate *g);
/*
 * Close or open the gate. Closing does not wait: the caller kicks each running vCPU
 * (vcpu_kick()) and waits for it (vcpu_wait_held()). Opening lets every waiting thread
 * back into the guest. Main thread.
 */
void vcpu_gate_set(struct vcpu_gate *g, bool closed);
/* Kick the vCPU's thread out of KVM_RUN (it then passes its gate). Its thread runs. */
void vcpu_kick(struct vcpu *v);
/*
 * Wait until the vCPU's thread waits at its closed gate or has ended, at most until
 * `deadline` (CLOCK_REALTIME). Returns 0 or -ETIMEDOUT. Main thread.
 */
int vcpu_wait_held(struct vcpu *v, const struct timespec *deadline);

/* Install the kick signal handler. Call once before any vCPU thread starts. */
int vcpu_init_signals(void);

#endif
