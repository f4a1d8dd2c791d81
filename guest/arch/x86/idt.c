// SPDX-License-Identifier: MIT
/*
 * The IDT (shared by all CPUs) and the interrupt handler table. Only vectors with a
 * purpose get a gate; an interrupt on any other vector arrives as #NP with the vector in
 * the error code and is reported as such.
 */
#include "arch.h"
#include "asm.h"
#include "kernel/compiler.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/preempt.h"
#include "kernel/printk.h"
#include "kernel/sched.h"
#include "kernel/timer.h"
#include "lapic.h"
#include "traps.h"
#include "x86.h"

struct idt_gate {
	uint16_t offset_lo;
	uint16_t selector;
	uint8_t ist;
	uint8_t type;
	uint16_t offset_mid;
	uint32_t offset_hi;
	uint32_t reserved;
} __attribute__((packed));

struct irq_handler {
	arch_irq_handler fn;
	void *arg;
};

static struct idt_gate idt[256] __aligned(16);
static struct irq_handler handlers[256];
extern char vector_stubs[];

#define IST_DOUBLE_FAULT 1
#define IST_NMI		 2

static void set_gate(unsigned vec, unsigned ist)
{
	uint64_t addr = (uint64_t)(uintptr_t)(vector_stubs + 16 * vec);

	idt[vec] = (struct idt_gate){
		.offset_lo = (uint16_t)addr,
		.selector = GDT_KERNEL_CS,
		.ist = (uint8_t)ist,
		.type = 0x8e, /* present, DPL 0, 64-bit interrupt gate */
		.offset_mid = (uint16_t)(addr >> 16),
		.offset_hi = (uint32_t)(addr >> 32),
	};
}

void idt_init(void)
{
	unsigned v;

	for (v = 0; v < 32; v++)
		set_gate(v, v == 8 ? IST_DOUBLE_FAULT : v == 2 ? IST_NMI : 0);
	set_gate(VEC_SPURIOUS, 0);
}

void idt_load(void)
{
	struct desc_ptr d = { sizeof(idt) - 1, (uint64_t)(uintptr_t)idt };

	lidt(&d);
}

int arch_set_irq_handler(unsigned vector, arch_irq_handler fn, void *arg)
{
	if (vector < 32 || vector > 255 || vector == VEC_SPURIOUS)
		return -EINVAL;
	handlers[vector].arg = arg;
	WRITE_ONCE(handlers[vector].fn, fn);
	set_gate(vector, 0);
	return 0;
}

void trap_dispatch(struct trap_frame *f)
{
	struct irq_handler *h;

	if (f->vector < 32) {
		trap_exception(f);
		return;
	}
	if (f->vector == VEC_SPURIOUS)
		return; /* spurious LAPIC interrupts take no EOI */
	h = &handlers[f->vector];
	raw_this_cpu()->nr_irqs++; /* interrupts off: nobody else writes it */
	preempt_count_add(HARDIRQ_OFFSET);
	if (h->fn)
		h->fn((unsigned)f->vector, h->arg);
	else
		pr_warn("cpu %u: interrupt on vector %lu with no handler\n", smp_processor_id(),
			(unsigned long)f->vector);
	lapic_eoi();
	preempt_count_add(-HARDIRQ_OFFSET);
	/* Expired wheel timers run here, with interrupts on (default build). */
	timer_softirq_irq_exit();
	/* Returning to a thread: switch first if the interrupt made that due. */
	sched_irq_exit();
}
