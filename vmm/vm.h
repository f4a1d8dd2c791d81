/* SPDX-License-Identifier: MIT */
/*
 * One virtual machine's handles: KVM, guest memory, the I/O buses with their devices, the
 * vCPUs (cpus.h), the control plane's state; and the stop protocol any thread may use.
 * Devices, vCPUs and the control plane include this; it includes none of them (forward
 * declarations only), and machine.c builds and runs what it points to.
 */
#ifndef PLUGVM_VMM_VM_H
#define PLUGVM_VMM_VM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bus.h"
#include "config/config.h"
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
struct latency_dev;
struct load_dev;
struct autoscale;

struct vm {
	const struct vm_config *cfg;
	struct kvm kvm;
	struct guest_mem mem;
	struct bus pio;
	struct bus mmio;
	struct cpuid_config cpuid;
	uint32_t entry; /* PVH entry */
	/* The kernel file as read at start: system_reset loads it again from here (the
	 * sandboxed main thread opens no files). */
	uint8_t *kernel_img;
	size_t kernel_len;
	char *kernel_abs; /* its absolute path, resolved at start (NULL: could not be) */
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
	atomic_bool reset_requested; /* QMP system_reset: the main loop carries it out */
	/*
	 * What a guest power-off and a guest reset do (QMP set-action), from cfg->on_poweroff
	 * and cfg->on_reset: enum config_action, written by the main thread, read by any.
	 */
	_Atomic int on_poweroff, on_reset;
	atomic_bool reset_by_guest; /* the reset asked for is the guest's (RESET's "guest") */
	/* The guest powered off (or reset under reboot=shutdown) with on_poweroff PAUSE: the
	 * main loop stops the vCPUs; reset_shutdown says it was a reset. */
	atomic_bool poweroff_requested, reset_shutdown;
	bool powered_off; /* QEMU's "shutdown" run state, until system_reset; main thread */
	bool migrate_events; /* QMP migrate-set-capabilities' "events" (never sent); main thread */
	struct chaos *chaos; /* --chaos, else NULL */
	struct latency_dev *latency; /* the latency statistics port (devices/latency.h) */
	struct load_dev *load; /* the guest load port (devices/load.h) */
	struct autoscale *autoscale; /* vCPUs on demand (autoscale.h); main thread */

	/* Stop protocol: the first vm_request_stop() decides the exit status. */
	pthread_mutex_t stop_lock;
	atomic_bool stop_requested; /* set under stop_lock, read without it */
	int exit_status; /* guarded by stop_lock */
	int stop_fd; /* eventfd the main loop waits on */
};

/*
 * Reset `vm` for `cfg`: no KVM, memory or device yet (machine.c builds those), the stop
 * protocol ready. Returns 0 or -errno (logged).
 */
int vm_init(struct vm *vm, const struct vm_config *cfg);
/* Release what vm_init() made. After everything else of the VM. */
void vm_fini(struct vm *vm);

/*
 * Ask the VM to stop with `status` (exitcode.h, or a guest's debug-exit status). The first
 * request wins; later ones are ignored. Callable from any thread, async-signal-unsafe.
 */
void vm_request_stop(struct vm *vm, int status);

/* True once a stop was requested (vCPU loops poll this after each kick). */
bool vm_stopping(struct vm *vm);

/* Ask the main loop for a system reset (it wakes through stop_fd). Any thread. */
void vm_request_reset(struct vm *vm);
/* A reset was asked for since the last call (main thread; clears the request). */
bool vm_take_reset(struct vm *vm);

/*
 * The guest powered off (ACPI S5): with on_poweroff ACTION_PAUSE the main loop stops the
 * vCPUs (vm_take_poweroff()), else the VM stops with status 0. Any thread.
 */
void vm_guest_poweroff(struct vm *vm);
/*
 * The guest asked for a reset (port 0xcf9, a triple fault under ACTION_RESET): with on_reset
 * ACTION_RESET the main loop resets the machine, else it is a power-off whose reason is the
 * reset (QEMU's reboot=shutdown). Any thread.
 */
void vm_guest_reset(struct vm *vm);
/* A paused power-off was asked for since the last call (main thread; clears it). */
bool vm_take_poweroff(struct vm *vm);

/*
 * The VM has a guest machine (vCPUs, devices, a kernel). False under QEMU's -machine none
 * (libvirt's capabilities probe), where only the control socket runs. Any thread.
 */
bool vm_has_machine(const struct vm *vm);

/* The status the first vm_request_stop() gave (0 if none). */
int vm_exit_status(struct vm *vm);

#endif
