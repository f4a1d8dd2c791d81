/* SPDX-License-Identifier: MIT */
/*
 * vCPUs: one KVM vCPU fd and one thread each. KVM cannot destroy a single vCPU, so a vCPU
 * that is removed keeps its fd *parked* for the next add of the same APIC ID. The run loop
 * only dispatches exits to the buses; everything else lives in devices.
 */
#ifndef PLUGVM_VMM_VCPU_H
#define PLUGVM_VMM_VCPU_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "x86/cpu.h"

struct vm;
struct kvm_run;
struct vcpu_snapshot;

/*
 * A vCPU's life: ABSENT -> PARKED (vcpu_create) -> RUNNING (vcpu_start) -> STOPPING
 * (vcpu_kick_stop) -> PARKED (vcpu_stop_and_join) -> RUNNING ... Only the main thread
 * changes it, under `lock`; a vCPU thread asking for a direct start reads it under `lock`
 * too, so it never signals a thread that is being joined or has been.
 */
enum vcpu_state {
	VCPU_ABSENT, /* no fd yet */
	VCPU_RUNNING, /* fd and thread */
	VCPU_STOPPING, /* its thread was told to end; the main thread joins it */
	VCPU_PARKED, /* fd kept, no thread */
};

struct vcpu {
	struct vm *vm;
	int id; /* KVM vCPU id == APIC ID */
	int fd;
	struct kvm_run *run;
	pthread_t thread;
	_Atomic int state; /* enum vcpu_state */
	atomic_bool stop; /* leave KVM_RUN and end the thread */
	_Atomic pid_t tid; /* host thread id, for query-cpus-fast (0 until it runs) */
	bool hot_added; /* set by vcpu_start() for its thread: started after boot (device_add) */
	struct vcpu_snapshot *reset; /* state at creation: a parked vCPU goes back to it */
	pthread_mutex_t lock;
	/* Guarded by lock: state changes (reads may be lock-free), and the paravirt direct
	 * start the vCPU's own thread applies before its next KVM_RUN. No request outlives
	 * the thread it was made for: leaving RUNNING drops it. */
	bool start_pending;
	struct long_mode_start start;
};

/*
 * Create the KVM vCPU `id` (fd, kvm_run mapping, CPUID) in slot vm->vcpus[id]. If `boot`
 * it gets the PVH entry state; otherwise KVM leaves it waiting for INIT/SIPI. Returns 0 or
 * -errno (logged).
 */
int vcpu_create(struct vm *vm, int id, bool boot);

/*
 * A parked vCPU goes back to the state it was created in (registers, LAPIC, FPU), waiting
 * for INIT/SIPI like an AP at power-on. Returns 0 or -errno (logged).
 */
int vcpu_reset_for_sipi(struct vcpu *v);

/*
 * Have the (running) vCPU jump to `r->entry` in 64-bit mode (plugvm_abi.h's direct start):
 * recorded and the vCPU kicked; its thread sets the registers. Any thread. Returns 0 or
 * -EINVAL (no thread to do it, or its thread is ending).
 */
int vcpu_direct_start(struct vcpu *v, const struct long_mode_start *r);

/*
 * Start the vCPU's thread. After the boot vCPUs (a hot-add), --chaos may delay the thread's
 * first KVM_RUN; its tid is published before that. Main thread. Returns 0 or -errno (logged).
 */
int vcpu_start(struct vcpu *v);

/*
 * Ask the vCPU's thread to end and kick it out of KVM_RUN (RUNNING -> STOPPING, a pending
 * direct start dropped); does not wait. Main thread.
 */
void vcpu_kick_stop(struct vcpu *v);
/* Ask the vCPU's thread to end, kick it out of KVM_RUN, and wait for it (PARKED). Main thread. */
void vcpu_stop_and_join(struct vcpu *v);

/*
 * Print the vCPU's registers, the instruction bytes at RIP if `insn` is non-NULL, and a
 * frame-pointer backtrace to stderr: for crashes and the SIGQUIT post-mortem.
 */
void vcpu_dump(struct vcpu *v, const uint8_t *insn, unsigned insn_len);

/* Close the fd and unmap kvm_run. The thread must have ended. */
void vcpu_destroy(struct vcpu *v);

/* Install the kick signal handler. Call once before any vCPU thread starts. */
int vcpu_init_signals(void);

#endif
