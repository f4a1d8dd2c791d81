/* SPDX-License-Identifier: MIT */
/*
 * QEMU's ACPI CPU hotplug register block (QEMU's docs/specs/acpi_cpu_hotplug.rst; the `pc`
 * machine puts it at I/O 0xAF00), register level and without AML: the switch from the
 * legacy bitmap to the modern block, and per-slot status, APIC ID, events, eject and _OST.
 * The same code runs on plugvm and on QEMU. The driver that acts on its events is
 * drivers/acpi_hotplug.c.
 */
#ifndef PLUGVM_GUEST_DRIVERS_ACPI_CPU_HOTPLUG_H
#define PLUGVM_GUEST_DRIVERS_ACPI_CPU_HOTPLUG_H

#include <stdbool.h>
#include <stdint.h>

/* A slot's status flags. */
#define ACPI_CPU_HOTPLUG_ENABLED 0x01 /* a CPU is present in the slot */
#define ACPI_CPU_HOTPLUG_INSERT	 0x02 /* insert event pending */
#define ACPI_CPU_HOTPLUG_REMOVE	 0x04 /* remove event pending */

/*
 * Switch the block to modern mode (QEMU's recipe: selector 0 twice, command 0, read
 * command data 2) and check it answers. Returns 0, or -ENODEV if there is no modern block.
 */
int acpi_cpu_hotplug_probe(void);

/* The status flags (CPHP_FLAG_*) and APIC ID of slot `sel`. Caller serializes. */
uint8_t acpi_cpu_hotplug_slot_flags(uint32_t sel);
uint32_t acpi_cpu_hotplug_slot_apic_id(uint32_t sel);

/* From slot `from` on (wrapping), the slot with a pending event, or -1 if none. */
int acpi_cpu_hotplug_next_event(uint32_t from);

/* Acknowledge slot `sel`'s insert / remove event. */
void acpi_cpu_hotplug_clear_insert(uint32_t sel);
void acpi_cpu_hotplug_clear_remove(uint32_t sel);

/* Eject slot `sel` (ignored for the boot CPU and absent ones). */
void acpi_cpu_hotplug_eject(uint32_t sel);

/* Report _OST (`event`, `status`) for slot `sel` (QMP ACPI_DEVICE_OST on the host). */
void acpi_cpu_hotplug_ost(uint32_t sel, uint32_t event, uint32_t status);

#endif
