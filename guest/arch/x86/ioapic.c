// SPDX-License-Identifier: MIT
/*
 * IOAPIC redirection entries (indirect register window at base + 0 / + 0x10), and
 * arch_request_irq(): a device's interrupt line routed to the boot CPU.
 */
#include "ioapic.h"

#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/spinlock.h"
#include "plugvm_abi.h"
#include "x86.h"

#define IOREGSEL	 0x00
#define IOWIN		 0x10
#define IOAPIC_VER	 0x01
#define IOAPIC_REDTBL(n) (0x10 + 2 * (n))
#define RTE_MASKED	 (1u << 16)
#define RTE_LEVEL	 (1u << 15)
#define RTE_ACTIVE_LOW	 (1u << 13)

static volatile uint32_t *regs = (volatile uint32_t *)(uintptr_t)PLUGVM_IOAPIC_BASE;
static struct spinlock ioapic_lock = SPINLOCK_INIT("ioapic");
static unsigned nr_pins = 24;

static uint32_t ioapic_read(uint32_t reg)
{
	regs[IOREGSEL / 4] = reg;
	return regs[IOWIN / 4];
}

static void ioapic_write(uint32_t reg, uint32_t v)
{
	regs[IOREGSEL / 4] = reg;
	regs[IOWIN / 4] = v;
}

void ioapic_init(uint64_t base)
{
	unsigned i;

	if (base)
		regs = (volatile uint32_t *)(uintptr_t)base;
	/* The 8259s stay masked: every interrupt comes through the IOAPIC or the LAPIC. */
	outb(0x21, 0xff);
	outb(0xa1, 0xff);
	nr_pins = ((ioapic_read(IOAPIC_VER) >> 16) & 0xff) + 1;
	if (nr_pins > 240)
		nr_pins = 24;
	for (i = 0; i < nr_pins; i++)
		ioapic_write(IOAPIC_REDTBL(i), RTE_MASKED);
}

void ioapic_route(unsigned pin, unsigned vector, uint32_t apic_id, bool level, bool active_low)
{
	unsigned long flags;
	uint32_t lo = vector | (level ? RTE_LEVEL : 0) | (active_low ? RTE_ACTIVE_LOW : 0);

	if (pin >= nr_pins)
		return;
	flags = spin_lock_irqsave(&ioapic_lock);
	ioapic_write(IOAPIC_REDTBL(pin) + 1, apic_id << 24);
	ioapic_write(IOAPIC_REDTBL(pin), lo);
	spin_unlock_irqrestore(&ioapic_lock, flags);
}

void ioapic_mask(unsigned pin)
{
	unsigned long flags;

	if (pin >= nr_pins)
		return;
	flags = spin_lock_irqsave(&ioapic_lock);
	ioapic_write(IOAPIC_REDTBL(pin), ioapic_read(IOAPIC_REDTBL(pin)) | RTE_MASKED);
	spin_unlock_irqrestore(&ioapic_lock, flags);
}

int arch_request_irq(unsigned gsi, bool level, bool active_low, arch_irq_handler fn, void *arg)
{
	int err;

	if (gsi >= nr_pins)
		return -EINVAL;
	err = arch_set_irq_handler(VEC_IRQ_BASE + gsi, fn, arg);
	if (err)
		return err;
	/* CPU 0 never goes offline, so the route never needs moving. */
	ioapic_route(gsi, VEC_IRQ_BASE + gsi, cpu_apic_ids[0], level, active_low);
	return 0;
}
