/* SPDX-License-Identifier: MIT */
/*
 * One virtual machine: KVM handles, guest memory, the I/O buses with their devices, the
 * vCPUs, and the stop protocol. The main thread runs the event loop (signals, console
 * input, later the control socket); each vCPU runs on its own thread.
 */
#ifndef PLUGVM_VMM_VM_H
#define PLUGVM_VMM_VM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bus.h"
#include "config.h"
#include "kvm.h"
#include "mem.h"
#include "x86/cpu.h"

struct cpus;
struct qmp_server;
struct uart;
struct acpi_pm;
struct virtio_devices;
struct agent;
struct control_agent;
struct chaos;
struct console;

struct vm {
	const struct vm_config *cfg;
	struct kvm kvm;
	struct guest_mem mem;
	struct bus pio;
	struct bus mmio;
	struct cpuid_config cpuid;
	uint32_t entry; /* PVH entry */
	gpa_t start_info;

	struct cpus *cpus; /* every possible vCPU and its life (cpus.h) */

	struct console *console; /* the guest console's output (stdout) */
	struct uart *uart;
	struct acpi_pm *pm;
	struct virtio_devices *virtio; /* NULL with --virtio off */
	struct agent *agent; /* the host end of the agent channel (agent.h) */
	struct control_agent *ctl_agent; /* control_agent.c's state (main thread) */
	struct qmp_server *qmp; /* the control socket, NULL without --qmp */
	atomic_bool quit_requested; /* QMP quit: the SHUTDOWN event's reason */
	struct chaos *chaos; /* --chaos, else NULL */

	/* Stop protocol: the first vm_request_stop() decides the exit status. */
	pthread_mutex_t stop_lock;
	bool stop_requested; /* guarded by stop_lock */
	int exit_status; /* guarded by stop_lock */
	int stop_fd; /* eventfd the main loop waits on */
};

/*
 * Build the VM for `cfg`: KVM, memory, kernel, boot data, ACPI tables, devices and the
 * boot vCPUs. Returns 0, or an exit code from exitcode.h after logging why.
 */
int vm_create(struct vm *vm, const struct vm_config *cfg);

/* Start the boot vCPUs and run the event loop until the VM stops. Returns the exit status. */
int vm_run(struct vm *vm);

/* Release everything vm_create() built. Safe on a partly built VM. */
void vm_destroy(struct vm *vm);

/*
 * Ask the VM to stop with `status` (exitcode.h, or a guest's debug-exit status). The first
 * request wins; later ones are ignored. Callable from any thread, async-signal-unsafe.
 */
void vm_request_stop(struct vm *vm, int status);

/* True once a stop was requested (vCPU loops poll this after each kick). */
bool vm_stopping(struct vm *vm);

#endif
