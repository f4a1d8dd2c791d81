/* SPDX-License-Identifier: MIT */
/*
 * QEMU's ACPI CPU hotplug register block (I/O 0xAF00 on `pc`, 0x0CD8 on `q35`: the caller
 * names the base, from the machine's acpi_layout), as a state machine
 * without I/O: the legacy 32-byte presence bitmap the machine starts with, the one-way
 * switch to the modern 12-byte block (a write of 0 at offset 0), and the modern block's
 * selector, status flags, control actions, commands (next CPU with an event, OST event,
 * OST status, arch ID) and command data. Semantics follow hw/acpi/cpu.c of QEMU 7.2; see
 * ../shared/specs/hypervisor-interfaces.md section 1. Every guest value is range-checked.
 * Slot numbers are APIC IDs (plugvm's are dense). A pure device: what the guest does
 * reaches its owner (cpus.c) only through the callbacks in acpi_cpu_hotplug_ops.
 * Locking: every function takes the block's lock; the callbacks run under it.
 */
#ifndef PLUGVM_VMM_DEVICES_ACPI_CPU_HOTPLUG_H
#define PLUGVM_VMM_DEVICES_ACPI_CPU_HOTPLUG_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct bus;

#define ACPI_CPU_HOTPLUG_LEGACY_LEN 32 /* bitmap of 256 APIC IDs */
#define ACPI_CPU_HOTPLUG_MODERN_LEN 12

/* Status byte (offset 4) bits and control byte bits. */
#define ACPI_CPU_HOTPLUG_STS_ENABLED	  0x01
#define ACPI_CPU_HOTPLUG_STS_INSERT	  0x02
#define ACPI_CPU_HOTPLUG_STS_REMOVE	  0x04
#define ACPI_CPU_HOTPLUG_CTL_CLEAR_INSERT 0x02
#define ACPI_CPU_HOTPLUG_CTL_CLEAR_REMOVE 0x04
#define ACPI_CPU_HOTPLUG_CTL_EJECT	  0x08
#define ACPI_CPU_HOTPLUG_CTL_FW_EJECT	  0x10

enum acpi_cpu_hotplug_cmd {
	ACPI_CPU_HOTPLUG_CMD_NEXT_EVENT = 0,
	ACPI_CPU_HOTPLUG_CMD_OST_EVENT = 1,
	ACPI_CPU_HOTPLUG_CMD_OST_STATUS = 2,
	ACPI_CPU_HOTPLUG_CMD_ARCH_ID = 3,
};

/*
 * What the block tells its owner. Each runs on the thread that made the block act (a vCPU
 * thread for the guest's writes), with the block's lock held: it must not call back into
 * the block, nor take a lock held around a call into it.
 */
struct acpi_cpu_hotplug_ops {
	void *opaque;
	/* Latch the CPU-hotplug GPE (the layout's cpuhp_gpe_bit) and update the SCI. */
	void (*raise_gpe)(void *opaque);
	/* The guest ejected `slot` (present, not the boot CPU); the device marked it absent. */
	void (*eject)(void *opaque, unsigned slot);
	/* The guest reported _OST (`event`, `status`) for `slot`. */
	void (*ost)(void *opaque, unsigned slot, uint32_t event, uint32_t status);
	/*
	 * Instead of raise_gpe once the guest listens through the paravirt front end
	 * (acpi_cpu_hotplug_pv_listen()): send its notification.
	 */
	void (*notify_pv)(void *opaque);
};

struct acpi_cpu_hotplug_slot {
	bool present;
	bool insert; /* insert event pending */
	bool remove; /* remove (unplug request) event pending */
};

struct acpi_cpu_hotplug {
	pthread_mutex_t lock; /* guards everything below but nr_slots and ops */
	unsigned nr_slots; /* maxcpus */
	struct acpi_cpu_hotplug_slot *slots;
	bool modern;
	bool pv; /* the guest listens through the paravirt front end: events notify_pv() */
	uint32_t selector;
	uint8_t command;
	uint32_t ost_event;
	struct acpi_cpu_hotplug_ops ops;
	/* Counters of guest writes that were out of range or malformed (ignored). */
	uint64_t bad_writes;
};

/* `nr_slots` possible CPUs, the first `nr_present` present. Returns 0 or -ENOMEM/-EINVAL. */
int acpi_cpu_hotplug_init(struct acpi_cpu_hotplug *d, unsigned nr_slots, unsigned nr_present,
			  const struct acpi_cpu_hotplug_ops *ops);
void acpi_cpu_hotplug_exit(struct acpi_cpu_hotplug *d);
/* Back to power-on state (system_reset): the first `nr_present` present, no events. */
void acpi_cpu_hotplug_reset(struct acpi_cpu_hotplug *d, unsigned nr_present);

/*
 * Put the block on the I/O bus at `base` (its 32 legacy bytes, which hold the modern 12).
 * Before vCPUs run. Returns 0 or bus_register()'s -errno.
 */
int acpi_cpu_hotplug_attach(struct acpi_cpu_hotplug *d, struct bus *pio, uint16_t base);

/* A guest access of `size` bytes (1, 2 or 4) at `offset` in the block. */
uint32_t acpi_cpu_hotplug_read(struct acpi_cpu_hotplug *d, unsigned offset, unsigned size);
void acpi_cpu_hotplug_write(struct acpi_cpu_hotplug *d, unsigned offset, unsigned size,
			    uint32_t value);

/*
 * Hot-add: `slot` becomes present, with an insert event in modern mode (legacy mode only
 * sets its bitmap bit, as QEMU), and the GPE is raised. -EINVAL: no such slot; -EEXIST:
 * present already.
 */
int acpi_cpu_hotplug_plug(struct acpi_cpu_hotplug *d, unsigned slot);

/*
 * Unplug request: a remove event for `slot` and the GPE. -EINVAL: no such slot; -ENODEV:
 * absent; -EPERM: the boot CPU; -EOPNOTSUPP: legacy mode (the guest has not switched).
 */
int acpi_cpu_hotplug_unplug_request(struct acpi_cpu_hotplug *d, unsigned slot);

/* Whether the block shows `slot` present (false for no such slot). */
bool acpi_cpu_hotplug_present(struct acpi_cpu_hotplug *d, unsigned slot);

/*
 * The paravirt front end (common/plugvm_hotplug.h, devices/hotplug_pv.c) over the same
 * slots: the guest listens (the block turns modern, for good, and events call notify_pv()
 * from then on, not raise_gpe()), claims every pending event at once, and reports each one
 * done. Tests: test_acpi_cpu_hotplug.c (the pv_* tests).
 */
void acpi_cpu_hotplug_pv_listen(struct acpi_cpu_hotplug *d);

/*
 * Every present slot and every pending insert and removal request into the bitmaps of
 * `words` 64-bit words each (bit n of word n / 64: slot n; zeroed first), those events
 * cleared. Returns how many events were claimed.
 */
unsigned acpi_cpu_hotplug_pv_claim(struct acpi_cpu_hotplug *d, uint64_t *present, uint64_t *insert,
				   uint64_t *remove, unsigned words);

/*
 * The guest is done with `slot`'s event: `online` (an insert) or not (a removal), with
 * `result` 0 or its -errno. Calls ost() with source 1 (insert) or 3 (removal) and status 0
 * (result 0) or 1, then, for a removal that succeeded, ejects the slot as the block's eject
 * control does. Returns 0, -EINVAL (no such slot) or -EPERM (an eject of an absent slot or
 * of slot 0: ost() was called, nothing ejected).
 */
int acpi_cpu_hotplug_pv_done(struct acpi_cpu_hotplug *d, unsigned slot, bool online,
			     int32_t result);

#endif
