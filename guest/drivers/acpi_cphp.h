/* SPDX-License-Identifier: MIT */
/*
 * QEMU's ACPI CPU hotplug register block (`pc` machine: I/O 0xAF00), driven without AML:
 * the switch from the legacy bitmap to the modern block, and per-slot status, APIC ID,
 * events and _OST. The same code runs on plugvm and on QEMU.
 */
#ifndef PLUGVM_GUEST_DRIVERS_ACPI_CPHP_H
#define PLUGVM_GUEST_DRIVERS_ACPI_CPHP_H

#include <stdbool.h>
#include <stdint.h>

#define CPHP_FLAG_ENABLED 0x01
#define CPHP_FLAG_INSERT  0x02
#define CPHP_FLAG_REMOVE  0x04

/*
 * Switch the block to modern mode (QEMU's recipe: selector 0 twice, command 0, read
 * command data 2) and check it answers. Returns 0, or -ENODEV if there is no modern block.
 */
int cphp_probe(void);

/* The status flags (CPHP_FLAG_*) and APIC ID of slot `sel`. Caller serializes. */
uint8_t cphp_slot_flags(uint32_t sel);
uint32_t cphp_slot_apic_id(uint32_t sel);

/* From slot `from` on (wrapping), the slot with a pending event, or -1 if none. */
int cphp_next_event(uint32_t from);

/* Acknowledge slot `sel`'s insert / remove event. */
void cphp_clear_insert(uint32_t sel);
void cphp_clear_remove(uint32_t sel);

/* Eject slot `sel` (ignored for the boot CPU and absent ones). */
void cphp_eject(uint32_t sel);

/* Report _OST (`event`, `status`) for slot `sel` (QMP ACPI_DEVICE_OST on the host). */
void cphp_ost(uint32_t sel, uint32_t event, uint32_t status);

#endif
