/* SPDX-License-Identifier: MIT */
/*
 * ACPI fixed hardware as QEMU's PIIX4 PM (pc) or ICH9 LPC (q35) presents it (PM1a, PM
 * timer, GPE0, SCI), at the ports of the machine's acpi_layout.
 */
#ifndef PLUGVM_VMM_DEVICES_ACPI_PM_H
#define PLUGVM_VMM_DEVICES_ACPI_PM_H

struct vm;

/*
 * ACPI fixed hardware at the ports of acpi_layout_of(vm->cfg->machine): PM1a event/control
 * (S5 power-off), the PM timer, GPE0 and the SCI line (GSI 9, level). Before vCPUs run.
 * Returns 0, -EINVAL (no layout for that machine), -ENOMEM or bus_register()'s error.
 */
int acpi_pm_init(struct vm *vm);
void acpi_pm_exit(struct vm *vm);
/* Back to power-on state (system_reset): no event latched or enabled, SCI low. */
void acpi_pm_reset(struct vm *vm);
/* Latch GPE0 status bit `bit` (ignored past the block's status bits) and update the SCI.
 * Thread-safe. */
void acpi_pm_raise_gpe(struct vm *vm, unsigned bit);
/* Press the power button (PM1 PWRBTN_STS) and update the SCI. Thread-safe. */
void acpi_pm_power_button(struct vm *vm);

#endif
