/* SPDX-License-Identifier: MIT */
/*
 * The vCPU lifecycle, in one place: every possible CPU slot (index == APIC ID), the vCPU in
 * it and every change of that. cpus owns each slot's vCPU, its QMP id, the time of the
 * request that changed it, a removal's deadline and a pending eject, and the CPU hotplug
 * devices (QEMU's ACPI block, the direct-start and report ports), which tell it what the
 * guest did through callbacks. The control socket turns QMP into the calls below, and the
 * events cpus emits into QMP events.
 *
 * A slot's state, changed only by the main thread, under cpus' lock:
 *
 *   ABSENT --add--> RUNNING --eject, stop--> STOPPING --joined--> PARKED --add--> RUNNING
 *   ABSENT --created ahead (--spare-vcpus, main loop, once hotplug is quiet)--> PARKED
 *
 * A vCPU thread asking for a direct start checks the state and kicks the target under the
 * same lock, so no kick reaches a thread being joined, and a start not applied yet ends
 * with the thread it was asked of (leaving RUNNING drops it). Lock order: cpus' lock, then
 * a vCPU's start mailbox (vcpu.h). cpus' lock is never held around a call into the ACPI
 * block, whose callbacks run under the block's lock and only mark and wake the main loop.
 */
#ifndef PLUGVM_VMM_CPUS_H
#define PLUGVM_VMM_CPUS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct vm;
struct cpus;

/* How long a guest has to complete a removal before CPUS_EVENT_UNPLUG_FAILED. */
#define CPUS_UNPLUG_TIMEOUT_MS 10000
/* The longest id a slot keeps (QMP's ids are at most 64 bytes). */
#define CPUS_MAX_ID 64
/* Spare vCPUs (--spare-vcpus) are created once hotplug has been quiet this long. */
#define CPUS_SPARE_QUIET_MS 10

enum cpus_event_type {
	CPUS_EVENT_OST, /* the guest wrote an _OST status for the slot (any vCPU thread) */
	CPUS_EVENT_REPORT, /* the guest reported the CPU online or offline (any vCPU thread) */
	CPUS_EVENT_DELETED, /* the guest ejected it: thread ended, fd parked (main thread) */
	CPUS_EVENT_UNPLUG_FAILED, /* a removal refused, or not done in time (main thread) */
};

struct cpus_event {
	enum cpus_event_type type;
	unsigned slot;
	/* OST (while the slot holds it), DELETED, UNPLUG_FAILED: the id given at add, or NULL;
	 * it lives for the call */
	const char *id;
	uint32_t ost_source, ost_status; /* OST: the _OST event (1 insert, 3 eject) and status */
	bool online; /* REPORT: online, or offline */
	int32_t result; /* REPORT: 0 or the guest's -errno */
	uint64_t guest_ns; /* REPORT: the guest's bring-up or tear-down time */
	bool requested; /* REPORT: an add or removal asked for it ... */
	uint64_t host_ns; /* ... this long ago */
};

/*
 * Create the slots (cfg->max_cpus, none with a vCPU yet) and the CPU hotplug devices on
 * vm->pio (the ACPI block at the cfg->machine layout's base), the first cfg->nr_cpus shown
 * present. Needs the PM device (acpi_pm_init) first.
 * Sets vm->cpus. Returns 0 or -errno (logged).
 */
int cpus_create(struct vm *vm);
/* Everything cpus_create() made, vCPUs included (their threads are stopped first). */
void cpus_destroy(struct cpus *c);

/*
 * Who hears of cpus_event (NULL: nobody); set before any vCPU runs. Called on the threads
 * the event types say; `e` lives for the call.
 */
void cpus_set_event_fn(struct cpus *c, void (*fn)(void *opaque, const struct cpus_event *e),
		       void *opaque);

/* How long cpus_pause() waits for the vCPUs to leave the guest. */
#define CPUS_PAUSE_TIMEOUT_MS 5000

/* QEMU's run states, as far as the vCPUs go (query-status). */
enum cpus_run_state {
	CPUS_PRELAUNCH, /* -S: never run yet (also before cpus_start_boot(), after cpus_reset()) */
	CPUS_RUNNING,
	CPUS_PAUSED, /* QMP stop */
};

/* Create the boot vCPUs (after the guest is loaded: vCPU 0 gets its entry). 0 or -errno. */
int cpus_create_boot(struct cpus *c);
/*
 * Start the boot vCPUs' threads, once; with `paused` (-S) they wait, out of the guest,
 * for cpus_resume(), but are present (listed, with host threads) meanwhile. Returns 0, or
 * -1 after requesting the VM's stop. Main thread.
 */
int cpus_start_boot(struct cpus *c, bool paused);
/* Where the vCPUs are: prelaunch (-S), running or paused. Main thread. */
enum cpus_run_state cpus_run_state(const struct cpus *c);
/*
 * QMP stop: every vCPU, those added later included, stays out of the guest until
 * cpus_resume(); returns once each running one left KVM_RUN (its pending I/O completed).
 * Nothing to do unless running. Main thread. Returns 0, or -ETIMEDOUT if a vCPU did not
 * leave within CPUS_PAUSE_TIMEOUT_MS (logged; the VM counts as paused).
 */
int cpus_pause(struct cpus *c);
/*
 * system_reset's part for the vCPUs, paused or before `cont` (-EBUSY while running): every
 * vCPU out of the guest, hot-added ones parked (CPUS_EVENT_DELETED), boot CPUs the guest
 * removed started again, the hotplug block as at power-on, vCPU 0 at the kernel's entry and
 * the other boot CPUs waiting for INIT/SIPI; the run state is then prelaunch, as QEMU's.
 * They run at cpus_resume(). Main thread.
 * Returns 0, or -errno (logged): the VM cannot go on.
 */
int cpus_reset(struct cpus *c);
/* QMP cont: the vCPUs run again. Returns false if they were running already. Main thread. */
bool cpus_resume(struct cpus *c);

/*
 * Hot-add `slot`: a new vCPU or its parked one, reset to wait for INIT/SIPI like an AP at
 * power-on, its thread started, then the ACPI block's insert event and the SCI. `id` (may
 * be NULL) names it until it is ejected. Main thread. Returns 0, -EINVAL (no such slot),
 * -EEXIST (a CPU is there), -ESHUTDOWN (the VM stops), or the -errno that creating or
 * starting the vCPU failed with (logged).
 */
int cpus_add(struct cpus *c, unsigned slot, const char *id);

/*
 * Ask the guest to remove `slot` (the ACPI block's remove event and the SCI); it has
 * CPUS_UNPLUG_TIMEOUT_MS to eject it. Main thread. Returns 0, -ENODEV (no CPU there),
 * -EALREADY (a removal is in flight), or the block's refusal: -EPERM (the boot CPU),
 * -EOPNOTSUPP (the guest has not switched the block to modern mode).
 */
int cpus_request_removal(struct cpus *c, unsigned slot);

/*
 * The guest handles CPU hotplug: it switched the ACPI block to its modern mode or listens on
 * the paravirt port, so a removal request can be made. Main thread.
 */
bool cpus_hotplug_listening(struct cpus *c);

/* The slot's vCPU runs (present to QMP). Main thread, or a hint elsewhere. */
bool cpus_present(const struct cpus *c, unsigned slot);
/*
 * The slot's vCPU's KVM statistics fd (-1: none, or never created); it stays open while
 * parked. Main thread.
 */
int cpus_stats_fd(const struct cpus *c, unsigned slot);
/*
 * The host thread id of the slot's vCPU (0: none); waits for a thread just started
 * (vcpu_tid()). Main thread.
 */
pid_t cpus_tid(const struct cpus *c, unsigned slot);
/* The id given to cpus_add() (NULL: none, or a boot CPU). Main thread. */
const char *cpus_id(const struct cpus *c, unsigned slot);

/*
 * Readable when the main loop has work here (an eject, a refused removal): it then calls
 * cpus_process(), as it does when cpus_next_timeout_ms() expires.
 */
int cpus_wake_fd(const struct cpus *c);
/* Milliseconds to the next removal deadline or spare vCPU's creation (-1: none). */
int cpus_next_timeout_ms(const struct cpus *c);
/*
 * Report removals refused or overdue (CPUS_EVENT_UNPLUG_FAILED), then carry out ejects: the
 * thread ends, the fd is parked, CPUS_EVENT_DELETED, the id is forgotten. Then create the
 * next spare vCPU if one is wanted (--spare-vcpus) and hotplug has been quiet for
 * CPUS_SPARE_QUIET_MS. Main thread.
 */
void cpus_process(struct cpus *c);
/* Unit tests: how long hotplug must be quiet before a spare vCPU (CPUS_SPARE_QUIET_MS). */
void cpus_set_spare_quiet_ms(struct cpus *c, unsigned ms);

/* End every vCPU thread: all are kicked, then each is joined. Main thread, at the end. */
void cpus_stop_all(struct cpus *c);
/*
 * QMP inject-nmi: an NMI to every running vCPU (as QEMU's on x86), each issued by its own
 * thread before its next KVM_RUN (vcpu_post_nmi(): not to one still waiting for its start).
 * Paused vCPUs take it when they run again. Main thread. Returns the number of vCPUs asked.
 */
unsigned cpus_inject_nmi(struct cpus *c);
/* Every created vCPU's registers and backtrace on stderr (the SIGQUIT post-mortem). */
void cpus_dump(struct cpus *c);

#endif
