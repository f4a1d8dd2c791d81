/* SPDX-License-Identifier: MIT */
/*
 * QEMU's ACPI CPU hotplug register block (QEMU's docs/specs/acpi_cpu_hotplug.rst; `pc` and
 * plugvm put it at I/O 0xAF00, `q35` at 0x0CD8), register level and without AML: the switch from the
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

struct acpi_info;

/*
 * Where the block is, from the FADT alone (never by probing ports): QEMU or plugvm `pc`
 * (GPE0 at 0xafe0, 4 bytes) -> 0xaf00; `q35` (GPE0 at PM1a_EVT + 0x20, 16 bytes) ->
 * 0x0cd8; anything else, hardware-reduced ACPI included -> 0. `*machine` names the layout
 * for messages. Pure.
 */
uint16_t acpi_cpu_hotplug_layout(const struct acpi_info *ai, const char **machine);

/*
 * Find the block from the FADT's layout, switch it to modern mode (QEMU's recipe: selector
 * 0 twice, command 0, read command data 2) and check it answers. Returns 0, or -ENODEV if
 * the layout is unknown or there is no modern block there. The accessors below use the
 * block found; call them only after a probe returned 0.
 */
int acpi_cpu_hotplug_probe(void);

/* The probed block's I/O base, or 0. */
uint16_t acpi_cpu_hotplug_base(void);

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
