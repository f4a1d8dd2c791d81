/* SPDX-License-Identifier: MIT */
/*
 * The ACPI CPU hotplug driver, without AML: the SCI (GPE0 bit 2) wakes a thread that walks
 * the hotplug block's events, brings inserted CPUs up and takes removed ones down through
 * cpuhp, ejects them, and reports every result with _OST. Works on plugvm and QEMU `pc`.
 */
#ifndef PLUGVM_GUEST_DRIVERS_ACPI_HOTPLUG_H
#define PLUGVM_GUEST_DRIVERS_ACPI_HOTPLUG_H

/*
 * Switch the block to modern mode, route the SCI, start the thread. 0, or -ENODEV (no
 * block) or -ENOMEM (logged).
 */
int acpi_hotplug_start(void);

/* Insert and remove events handled so far (whatever their outcome). */
unsigned long acpi_hotplug_events(void);

#endif
