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

static void sel(uint32_t s)
{
	outl(PLUGVM_PORT_CPUHP + REG_SEL, s);
}

int acpi_cpu_hotplug_probe(void)
{
	/* The first write of 0 at offset 0 switches a legacy block; the second selects 0. */
	sel(0);
	sel(0);
	outb(PLUGVM_PORT_CPUHP + REG_CMD, CMD_NEXT_EVENT);
	/* Modern: command data 2 reads 0. Legacy: the bitmap (the boot CPU's bit is set). */
	if (inl(PLUGVM_PORT_CPUHP + REG_SEL) != 0)
		return -ENODEV;
	/* Slot 0 is the boot CPU: present. Nothing at all (0xff) means no block. */
	return (inb(PLUGVM_PORT_CPUHP + REG_FLAGS) & 0xf9) == ACPI_CPU_HOTPLUG_ENABLED ? 0
										       : -ENODEV;
}

uint8_t acpi_cpu_hotplug_slot_flags(uint32_t s)
{
	sel(s);
	return inb(PLUGVM_PORT_CPUHP + REG_FLAGS);
}

uint32_t acpi_cpu_hotplug_slot_apic_id(uint32_t s)
{
	sel(s);
	outb(PLUGVM_PORT_CPUHP + REG_CMD, CMD_ARCH_ID);
	return inl(PLUGVM_PORT_CPUHP + REG_DATA);
}

int acpi_cpu_hotplug_next_event(uint32_t from)
{
	uint32_t s;

	sel(from);
	outb(PLUGVM_PORT_CPUHP + REG_CMD, CMD_NEXT_EVENT);
	s = inl(PLUGVM_PORT_CPUHP + REG_DATA);
	/* The search leaves the selector alone when nothing is pending: check the slot. */
	sel(s);
	if (!(inb(PLUGVM_PORT_CPUHP + REG_FLAGS) &
	      (ACPI_CPU_HOTPLUG_INSERT | ACPI_CPU_HOTPLUG_REMOVE)))
		return -1;
	return (int)s;
}

void acpi_cpu_hotplug_clear_insert(uint32_t s)
{
	sel(s);
	outb(PLUGVM_PORT_CPUHP + REG_FLAGS, CTL_CLEAR_INSERT);
}

void acpi_cpu_hotplug_clear_remove(uint32_t s)
{
	sel(s);
	outb(PLUGVM_PORT_CPUHP + REG_FLAGS, CTL_CLEAR_REMOVE);
}

void acpi_cpu_hotplug_eject(uint32_t s)
{
	sel(s);
	outb(PLUGVM_PORT_CPUHP + REG_FLAGS, CTL_EJECT);
}

void acpi_cpu_hotplug_ost(uint32_t s, uint32_t event, uint32_t status)
{
	sel(s);
	outb(PLUGVM_PORT_CPUHP + REG_CMD, CMD_OST_EVENT);
	outl(PLUGVM_PORT_CPUHP + REG_DATA, event);
	outb(PLUGVM_PORT_CPUHP + REG_CMD, CMD_OST_STATUS);
	outl(PLUGVM_PORT_CPUHP + REG_DATA, status);
}
