// SPDX-License-Identifier: MIT
/* QEMU's ACPI CPU hotplug register block, register level (see acpi_cpu_hotplug.h). */
#include "drivers/acpi_cpu_hotplug.h"

#include "arch.h"
#include "kernel/errno.h"
#include "plugvm_abi.h"

#define REG_SEL	  0x0 /* write: selector; read: command data 2 */
#define REG_FLAGS 0x4 /* read: status; write: control */
#define REG_CMD	  0x5
#define REG_DATA  0x8

#define CMD_NEXT_EVENT 0
#define CMD_OST_EVENT  1
#define CMD_OST_STATUS 2
#define CMD_ARCH_ID    3

#define CTL_CLEAR_INSERT 0x02
#define CTL_CLEAR_REMOVE 0x04
#define CTL_EJECT	 0x08

/* QEMU's ICH9 (q35) block and its GPE0 (PMBASE + 0x20, 16 bytes), as plugvm's q35 has them. */
#define ICH9_CPUHP_BASE	   PLUGVM_PORT_ICH9_CPUHP
#define ICH9_GPE0_FROM_PM1 (PLUGVM_PORT_ICH9_GPE0 - PLUGVM_PORT_PM1A_EVT)
#define ICH9_GPE0_LEN	   PLUGVM_PORT_ICH9_GPE0_LEN

/* The block's base once probed (0 before, or when there is none). */
static uint16_t base;

static void sel(uint32_t s)
{
	outl(base + REG_SEL, s);
}

uint16_t acpi_cpu_hotplug_layout(const struct acpi_info *ai, const char **machine)
{
	*machine = "unknown";
	if (!ai->have_fadt || (ai->fadt_flags & PLUGVM_ACPI_FADT_HW_REDUCED)) {
		*machine = "hardware-reduced";
		return 0;
	}
	if (ai->gpe0_blk == PLUGVM_PORT_GPE0 && ai->gpe0_blk_len == PLUGVM_PORT_GPE0_LEN) {
		*machine = "pc (PIIX4)";
		return PLUGVM_PORT_CPUHP;
	}
	if (ai->pm1a_evt_blk && ai->gpe0_blk == ai->pm1a_evt_blk + ICH9_GPE0_FROM_PM1 &&
	    ai->gpe0_blk_len == ICH9_GPE0_LEN) {
		*machine = "q35 (ICH9)";
		return ICH9_CPUHP_BASE;
	}
	return 0;
}

uint16_t acpi_cpu_hotplug_base(void)
{
	return base;
}

int acpi_cpu_hotplug_probe(void)
{
	const char *machine;

	base = acpi_cpu_hotplug_layout(acpi_get_info(), &machine);
	if (!base)
		return -ENODEV;
	/* The first write of 0 at offset 0 switches a legacy block; the second selects 0. */
	sel(0);
	sel(0);
	outb(base + REG_CMD, CMD_NEXT_EVENT);
	/* Modern: command data 2 reads 0. Legacy: the bitmap (the boot CPU's bit is set). */
	if (inl(base + REG_SEL) != 0)
		goto none;
	/* Slot 0 is the boot CPU: present. Nothing at all (0xff) means no block. */
	if ((inb(base + REG_FLAGS) & 0xf9) != ACPI_CPU_HOTPLUG_ENABLED)
		goto none;
	return 0;
none:
	base = 0;
	return -ENODEV;
}

uint8_t acpi_cpu_hotplug_slot_flags(uint32_t s)
{
	sel(s);
	return inb(base + REG_FLAGS);
}

uint32_t acpi_cpu_hotplug_slot_apic_id(uint32_t s)
{
	sel(s);
	outb(base + REG_CMD, CMD_ARCH_ID);
	return inl(base + REG_DATA);
}

int acpi_cpu_hotplug_next_event(uint32_t from)
{
	uint32_t s;

	sel(from);
	outb(base + REG_CMD, CMD_NEXT_EVENT);
	s = inl(base + REG_DATA);
	/* The search leaves the selector alone when nothing is pending: check the slot. */
	sel(s);
	if (!(inb(base + REG_FLAGS) & (ACPI_CPU_HOTPLUG_INSERT | ACPI_CPU_HOTPLUG_REMOVE)))
		return -1;
	return (int)s;
}

void acpi_cpu_hotplug_clear_insert(uint32_t s)
{
	sel(s);
	outb(base + REG_FLAGS, CTL_CLEAR_INSERT);
}

void acpi_cpu_hotplug_clear_remove(uint32_t s)
{
	sel(s);
	outb(base + REG_FLAGS, CTL_CLEAR_REMOVE);
}

void acpi_cpu_hotplug_eject(uint32_t s)
{
	sel(s);
	outb(base + REG_FLAGS, CTL_EJECT);
}

void acpi_cpu_hotplug_ost(uint32_t s, uint32_t event, uint32_t status)
{
	sel(s);
	outb(base + REG_CMD, CMD_OST_EVENT);
	outl(base + REG_DATA, event);
	outb(base + REG_CMD, CMD_OST_STATUS);
	outl(base + REG_DATA, status);
}
