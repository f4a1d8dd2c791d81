/* SPDX-License-Identifier: MIT */
/*
 * The x86 arch layer's interface to guest/kernel: the only arch header kernel code may
 * include. Its functions are declared in arch/arch_api.h, shared with the host unit tests'
 * arch.h (tests/unit/shim/); here are x86's constants, per-CPU state and inlines.
 */
#ifndef PLUGVM_GUEST_ARCH_H
#define PLUGVM_GUEST_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acpi.h" /* struct acpi_info, acpi_get_info(): the firmware tables, read at boot */
#include "arch/arch_api.h"

#define ARCH_PAGE_SIZE 4096ul
#define ARCH_CACHELINE 64

/* Interrupt vectors the kernel uses. */
#define VEC_IRQ_BASE	0x20 /* IOAPIC pin N -> VEC_IRQ_BASE + N */
#define VEC_PV_HOTPLUG	0xee /* plugvm's paravirt CPU hotplug notification (MSI) */
#define VEC_LAPIC_TIMER 0xef
#define VEC_CALL_FUNC	0xf0
#define VEC_RESCHEDULE	0xf1
#define VEC_SPURIOUS	0xff

/* Per-CPU architecture state embedded in struct cpu (kernel/cpu.h). */
struct arch_tss {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} __attribute__((packed));

struct arch_cpu {
	uint64_t gdt[6] __attribute__((aligned(16)));
	struct arch_tss tss __attribute__((aligned(16)));
	void *stack; /* kernel stack (CPU_STACK_SIZE) */
	void *ist_stack; /* double-fault / NMI stack */
};

/* A switched-out thread's registers: callee-saved ones live on its stack below rsp. */
struct arch_context {
	uint64_t rsp;
};

/* ---- interrupts ---------------------------------------------------------------------- */

static inline unsigned long arch_irq_save(void)
{
	unsigned long flags;

	__asm__ volatile("pushfq; popq %0; cli" : "=r"(flags) : : "memory");
	return flags;
}

static inline void arch_irq_restore(unsigned long flags)
{
	if (flags & 0x200)
		__asm__ volatile("sti" : : : "memory");
}

static inline void arch_irq_enable(void)
{
	__asm__ volatile("sti" : : : "memory");
}

static inline void arch_irq_disable(void)
{
	__asm__ volatile("cli" : : : "memory");
}

static inline bool arch_irqs_enabled(void)
{
	unsigned long flags;

	__asm__ volatile("pushfq; popq %0" : "=r"(flags));
	return flags & 0x200;
}

static inline void arch_cpu_relax(void)
{
	__asm__ volatile("pause" : : : "memory");
}

/* Enable interrupts and halt until one arrives (atomic: no wake-up is lost). */
static inline void arch_safe_halt(void)
{
	__asm__ volatile("sti; hlt" : : : "memory");
}

/* ---- time ---------------------------------------------------------------------------- */

static inline uint64_t arch_tsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* ---- CPUs ---------------------------------------------------------------------------- */

/*
 * The running CPU's struct cpu (GS base points at it; its first field points at itself).
 * Raw: kernel code uses this_cpu() (kernel/cpu.h), which checks that the caller cannot
 * migrate while it uses the pointer.
 */
static inline struct cpu *arch_this_cpu(void)
{
	struct cpu *c;

	__asm__ volatile("movq %%gs:0, %0" : "=r"(c));
	return c;
}

/*
 * Read or add to a field of the running CPU's struct cpu in one instruction: a thread
 * preempted and migrated just before or after it still gets (or changes) the value of the
 * CPU it ran the instruction on, never a mix of two CPUs.
 */
static inline int arch_percpu_read_int(size_t offset)
{
	int v;

	__asm__ volatile("movl %%gs:(%1), %0" : "=r"(v) : "r"(offset) : "memory");
	return v;
}

static inline void *arch_percpu_read_ptr(size_t offset)
{
	void *v;

	__asm__ volatile("movq %%gs:(%1), %0" : "=r"(v) : "r"(offset) : "memory");
	return v;
}

static inline void arch_percpu_add_int(size_t offset, int v)
{
	__asm__ volatile("addl %1, %%gs:(%0)" : : "r"(offset), "r"(v) : "memory", "cc");
}

/* Size of each CPU's kernel stack; struct arch_cpu.stack points at its lowest byte. */
#define ARCH_CPU_STACK_SIZE 16384ul

/* ---- port I/O ------------------------------------------------------------------------ */

static inline void outb(uint16_t port, uint8_t v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outw(uint16_t port, uint16_t v)
{
	__asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;

	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint16_t inw(uint16_t port)
{
	uint16_t v;

	__asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t v;

	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

/* String output: one VM exit for the whole burst under KVM. */
static inline void outsb(uint16_t port, const void *p, unsigned long n)
{
	__asm__ volatile("rep outsb" : "+S"(p), "+c"(n) : "d"(port) : "memory");
}

/* The same with n 32-bit words. */
static inline void outsl(uint16_t port, const void *p, unsigned long n)
{
	__asm__ volatile("rep outsl" : "+S"(p), "+c"(n) : "d"(port) : "memory");
}

#endif
