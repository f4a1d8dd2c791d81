// SPDX-License-Identifier: MIT
/*
 * Power-off, one path on every hypervisor: status 0 through ACPI S5 (PM1a control, or the
 * hardware-reduced sleep control register), anything else through QEMU's isa-debug-exit,
 * which plugvm implements too; if that port is absent the machine still goes down via S5.
 */
#include "acpi.h"
#include "arch.h"
#include "kernel/printk.h"
#include "lapic.h"
#include "plugvm_abi.h"
#include "setup.h"
#include "x86.h"

static void acpi_s5(void)
{
	const struct acpi_info *ai = acpi_get_info();
	uint8_t typ = ai->have_s5 ? ai->s5_slp_typ : PLUGVM_S5_SLP_TYP;

	if (ai->pm1a_cnt_blk)
		outw((uint16_t)ai->pm1a_cnt_blk,
		     (uint16_t)(PLUGVM_PM1_CNT_SLP_TYP(typ) | PLUGVM_PM1_CNT_SLP_EN));
	/* Hardware-reduced ACPI (QEMU microvm): the sleep control register, port or MMIO. */
	if (ai->sleep_control.address && ai->sleep_control.space_id == 1)
		outb((uint16_t)ai->sleep_control.address, (uint8_t)(((typ & 7) << 2) | 0x20));
	if (ai->sleep_control.address && ai->sleep_control.space_id == 0 &&
	    ai->sleep_control.address < (1ull << 32)) /* identity-mapped */
		*(volatile uint8_t *)(uintptr_t)ai->sleep_control.address =
		    (uint8_t)(((typ & 7) << 2) | 0x20);
}

__attribute__((noreturn)) void arch_poweroff(int status)
{
	arch_irq_disable();
	if (status) {
		outl(PLUGVM_PORT_DEBUG_EXIT, (uint32_t)status);
		printk("plugvm-guest: no isa-debug-exit port; powering off (status %d lost)\n",
		       status);
	}
	acpi_s5();
	/* QEMU acts on S5 asynchronously: give it time before calling it a failure. */
	arch_udelay(2000000);
	printk("plugvm-guest: power-off failed; halting\n");
	halt_forever();
}
